"""Edits on a shared document store, by category rules (issue 33; a store written for the test): a person the
document names as a reader cannot change it, every edit is the next version and is kept in the history as its
entries are, an append adds a paragraph, and a locked document refuses a share before its person is looked up."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR, INT = {"type": "string"}, {"type": "integer"}


def tool(name: str, props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(server="team-wiki", name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": list(props)})


TOOLS = [tool("update_document", {"document_id": STR, "content": STR, "expected_version": INT}),
         tool("append_to_document", {"document_id": STR, "text": STR}), tool("get_document", {"document_id": STR}),
         tool("share_document", {"document_id": STR, "person_id": STR, "role": STR})]


def wiki() -> Any:
    first = {"version": 1, "content": "Draft", "author": "u_2", "saved_at": "2026-07-01T09:00:00Z"}
    docs = {
        "doc_1": {"title": "Plan", "owner": "u_2", "content": "Draft", "version": 1, "versions": [first],
                  "access": {"u_2": "owner", "u_1": "editor"}, "locked": False, "trashed": False},
        "doc_2": {"title": "Budget", "owner": "u_2", "content": "Numbers", "version": 1, "versions": [first],
                  "access": {"u_2": "owner", "u_1": "viewer"}, "locked": False, "trashed": False},
        "doc_3": {"title": "Salaries", "owner": "u_1", "content": "x", "version": 1, "versions": [first],
                  "access": {"u_1": "owner"}, "locked": True, "trashed": False},
    }
    people = {"u_1": {"name": "Ana"}, "u_2": {"name": "Bo"}}
    return rules_caller("team-wiki", "documents", {"me": "u_1", "people": people, "documents": docs},
                        {"document": "documents", "person": "people"}, TOOLS)


def test_a_reader_cannot_change_the_document() -> None:
    call = wiki()
    refused = call("update_document", document_id="doc_2", content="Mine", expected_version=1)
    assert refused.is_error and "viewer" in refused.text
    assert call("append_to_document", document_id="doc_2", text="More").is_error
    assert json.loads(call("get_document", document_id="doc_2").text)["content"] == "Numbers"


def test_an_edit_is_the_next_version_kept_in_the_history() -> None:
    call = wiki()
    assert not call("update_document", document_id="doc_1", content="Final", expected_version=1).is_error
    doc = json.loads(call("get_document", document_id="doc_1").text)
    assert doc["version"] == 2 and doc["content"] == "Final"
    saved = doc["versions"][-1]
    assert {k: v for k, v in saved.items() if k != "saved_at"} == {"version": 2, "content": "Final", "author": "u_1"}
    assert saved["saved_at"].startswith("2026-08-01T09:")  # the session's clock, not the first version's time
    assert call("update_document", document_id="doc_1", content="Late", expected_version=1).error_class == "business"


def test_an_append_adds_a_paragraph_as_the_next_version() -> None:
    call = wiki()
    assert not call("append_to_document", document_id="doc_1", text="Next steps").is_error
    doc = json.loads(call("get_document", document_id="doc_1").text)
    assert doc["content"] == "Draft\n\nNext steps" and doc["version"] == 2 and len(doc["versions"]) == 2


def test_the_document_is_checked_before_the_person_it_names() -> None:
    call = wiki()
    refused = call("share_document", document_id="doc_3", person_id="u_404", role="viewer")
    assert refused.is_error and "locked" in refused.text


def test_an_unlock_marks_a_protected_document_open_where_the_record_keeps_both_flags() -> None:
    docs = {"doc_1": {"title": "Pay", "owner": "u_1", "content": "x", "version": 1, "locked": True, "unlocked": False,
                      "password": "tulip", "trashed": False}}
    tools = [tool("unlock_document", {"document_id": STR, "password": STR}), tool("get_document", {"document_id": STR})]
    call = rules_caller("team-wiki", "documents", {"me": "u_1", "people": {"u_1": {"name": "Ana"}}, "documents": docs},
                        {"document": "documents", "person": "people"}, tools)
    assert call("get_document", document_id="doc_1").is_error
    assert not call("unlock_document", document_id="doc_1", password="tulip").is_error
    doc = json.loads(call("get_document", document_id="doc_1").text)
    assert doc["unlocked"] is True and doc["locked"] is True  # still protected, open in this session
