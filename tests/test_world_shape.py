"""A record a call makes takes the shape its kind's records have in the world (issue 33, `engine/world/shape.py`):
its own key where they hold theirs, references stored as the records store them, the signed-in account as the
sender, and unset fields empty only as the world's records show empty."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec
from cworld.engine.world.shape import world_shaped

NOW = "2026-08-01T09:00:00Z"
STR = {"type": "string"}
IDS = {"type": "array", "items": {"type": "string"}}

ACCOUNT = {"name": "Ana Reyes", "email": "ana@post.example"}
CONTACTS = {
    "c_1": {"id": "c_1", "name": "Bo Lind", "email": "bo@post.example", "phone": "+1-555-0101", "notes": ""},
    "c_2": {"id": "c_2", "name": "Cy Moss", "email": "cy@post.example", "phone": "+1-555-0102", "notes": "VIP"},
}
MESSAGES = {
    "m_1": {"id": "m_1", "folder": "inbox", "from": {"name": "Bo Lind", "email": "bo@post.example"},
            "to": [ACCOUNT], "cc": [], "subject": "Lunch", "body": "Friday?", "read": False, "starred": False},
    "m_2": {"id": "m_2", "folder": "inbox", "from": {"name": "Cy Moss", "email": "cy@post.example"},
            "to": [ACCOUNT], "cc": [], "subject": "Invoice", "body": "Attached.", "read": True, "starred": False},
}


def state() -> dict[str, Any]:
    return json.loads(json.dumps({"account": ACCOUNT, "contacts": CONTACTS, "messages": MESSAGES}))


def test_a_reference_given_as_an_id_is_stored_as_the_records_store_it() -> None:
    made = world_shaped({"to": ["c_2"], "subject": "Hi"}, "m_3", state()["messages"], state(), NOW)
    assert made["to"] == [{"name": "Cy Moss", "email": "cy@post.example"}]


def test_the_sender_is_the_signed_in_account_and_the_record_holds_its_key() -> None:
    made = world_shaped({"to": ["c_1"], "subject": "Hi"}, "m_3", state()["messages"], state(), NOW)
    assert made["from"] == ACCOUNT and made["id"] == "m_3"


def test_unset_fields_are_empty_as_the_world_shows_empty_else_null() -> None:
    made = world_shaped({"name": "Di Park", "email": "di@post.example"}, "c_3", state()["contacts"], state(), NOW)
    assert made["notes"] == ""  # a contact's notes already read ""
    assert made["phone"] is None  # no phone reads "": the field is there, as on every record, with nothing in it
    message = world_shaped({"subject": "Hi", "cc": None}, "m_3", state()["messages"], state(), NOW)
    assert message["cc"] == [] and message["starred"] is False


def test_a_kind_the_world_holds_no_record_of_is_left_as_made() -> None:
    assert world_shaped({"title": "x"}, "n_1", {}, state(), NOW) == {"title": "x"}


def test_a_sent_message_reads_back_in_the_worlds_shape() -> None:
    tools = [ToolSpec(server="post", name="send_email", description="Send an email to contacts.",
                      input_schema={"type": "object", "properties": {"to": IDS, "subject": STR, "body": STR},
                                    "required": ["to", "subject", "body"]}),
             ToolSpec(server="post", name="get_message", description="Get one message.",
                      input_schema={"type": "object", "properties": {"message_id": STR}, "required": ["message_id"]})]
    call = rules_caller("post", "email", state(), {"message": "messages", "contact": "contacts"}, tools)
    sent = call("send_email", to=["c_1"], subject="Budget", body="Numbers attached.")
    assert not sent.is_error, sent.text
    key = next(v for v in json.loads(sent.text).values() if isinstance(v, str) and v.startswith("m"))
    got = json.loads(call("get_message", message_id=key).text)
    record = got.get("message", got)
    assert record["to"] == [{"name": "Bo Lind", "email": "bo@post.example"}]
    assert record["from"] == ACCOUNT and record["folder"] == "sent" and record["read"] is True


def test_a_document_made_is_its_makers_and_its_own_first_version() -> None:
    first = {"version": 1, "content": "a", "author": "u_2", "saved_at": "2026-07-01T09:00:00Z"}
    docs = {f"d_{i}": {"title": "T", "content": "a", "version": 1, "versions": [first],
                       "access": {"u_2": "owner", "u_1": "viewer"}} for i in range(3)}
    world = {"me": "u_1", "people": {"u_1": {"name": "Ana"}, "u_2": {"name": "Bo"}}, "documents": docs}
    made = world_shaped({"title": "Notes", "content": "hello", "versions": []}, "d_9", docs, world, NOW)
    assert made["access"] == {"u_1": "owner"}
    assert made["versions"] == [{"version": 1, "content": "hello", "author": "u_1", "saved_at": NOW}]


def test_a_draft_starts_a_thread_numbered_as_the_worlds_and_is_read_once_sent() -> None:
    tools = [ToolSpec(server="post", name="create_draft", description="Save a draft.",
                      input_schema={"type": "object", "properties": {"to": IDS, "subject": STR, "body": STR},
                                    "required": ["to", "subject", "body"]}),
             ToolSpec(server="post", name="send_draft", description="Send a draft.",
                      input_schema={"type": "object", "properties": {"draft_id": STR}, "required": ["draft_id"]})]
    world = state()
    for n, message in enumerate(world["messages"].values(), start=1):
        message.update(thread_id=f"thread_{n:04d}")
    call = rules_caller("post", "email", world, {"message": "messages", "contact": "contacts"}, tools)
    draft = json.loads(call("create_draft", to=["c_1"], subject="Plan", body="Soon.").text)
    assert draft["thread_id"] == "thread_0003" and draft["folder"] == "drafts"
    key = draft.get("id") or draft.get("message_id")
    sent = json.loads(call("send_draft", draft_id=key).text)
    assert sent["folder"] == "sent" and sent["read"] is True


def test_a_made_records_creation_stamp_is_now_as_the_records_write_it() -> None:
    """A service stamps a record when it makes it: a stamp made up for the answer (`created: 2026-02-16`) is
    not what the world keeps, and the kind's own form (a day or a full time) is kept."""
    tokens = {"t_1": {"id": "t_1", "note": "ci", "created": "2026-01-14T04:48:00+00:00", "modified": "2026-02-01"},
              "t_2": {"id": "t_2", "note": "cd", "created": "2026-02-11T10:00:00+00:00", "modified": "2026-02-03"}}
    made = world_shaped({"note": "deploy", "created": "2026-02-16T12:36:00+00:00", "modified": "2025-12-30"},
                        "t_3", tokens, state(), NOW)
    assert made["created"] == NOW and made["modified"] == NOW[:10]
    assert world_shaped({"note": "x", "created": "soon"}, "t_3", {"t_1": {"note": "a", "created": "never"}},
                        state(), NOW)["created"] == "soon"  # no moment where the records hold none
