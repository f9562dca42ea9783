"""The documents card's families (issue 33, written for the category, checked on a store written for the test):
a delete moves a document to the trash, where it reads back and takes no edits; a locked document is refused,
read or written, until its password unlocks it; a version named by number is one the document has had."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR, INT = {"type": "string"}, {"type": "integer"}


def tool(name: str, props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(server="notes-store", name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": list(props)})


TOOLS = [tool("delete_document", {"document_id": STR}), tool("get_document", {"document_id": STR}),
         tool("update_document", {"document_id": STR, "content": STR}),
         tool("unlock_document", {"document_id": STR, "password": STR}),
         tool("list_versions", {"document_id": STR}), tool("get_version", {"document_id": STR, "version": INT})]


def store() -> Any:
    docs = {"doc_1": {"title": "Plan", "owner": "u_1", "content": "a", "version": 3, "locked": False, "trashed": False},
            "doc_2": {"title": "Salaries", "owner": "u_1", "content": "b", "version": 1, "locked": True,
                      "password": "tulip", "trashed": False}}
    return rules_caller("notes-store", "documents", {"me": "u_1", "people": {"u_1": {"name": "A"}}, "documents": docs},
                        {"document": "documents", "person": "people"}, TOOLS)


def test_a_deleted_document_is_in_the_trash_and_takes_no_edit() -> None:
    call = store()
    assert not call("delete_document", document_id="doc_1").is_error
    got = call("get_document", document_id="doc_1")
    assert not got.is_error and json.loads(got.text)["trashed"] is True
    refused = call("update_document", document_id="doc_1", content="new")
    assert refused.error_class == "business" and "trash" in refused.text


def test_a_locked_document_is_refused_until_its_password_unlocks_it() -> None:
    call = store()
    assert call("get_document", document_id="doc_2").error_class == "business"
    assert call("list_versions", document_id="doc_2").error_class == "business"  # the list's anchor is locked
    assert call("unlock_document", document_id="doc_2", password="rose").error_class == "auth"
    assert not call("unlock_document", document_id="doc_2", password="tulip").is_error
    assert not call("get_document", document_id="doc_2").is_error
    assert not call("list_versions", document_id="doc_1").is_error


def test_a_version_is_one_the_document_has_had() -> None:
    call = store()
    assert not call("get_version", document_id="doc_1", version=3).is_error
    assert call("get_version", document_id="doc_1", version=4).error_class == "not_found"
    assert call("get_version", document_id="doc_1", version=0).error_class == "not_found"
