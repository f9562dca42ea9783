"""What a tool declares and what a call leaves out, over any category's families: a tool that declares it changes
nothing runs no family that writes, and an option a call leaves out is not stored where the kind's records keep
no such field. Tried on small services written for these tests, not our apps."""

from __future__ import annotations

from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec
from cworld.data_model.tools import ToolAnnotations
from cworld.engine.world.shape import world_shaped

STR: dict[str, Any] = {"type": "string"}


def _reader(read_only: bool | None) -> Any:
    """A mail store with one unread message and a `get_message` that declares (or not) that it changes nothing."""
    tool = ToolSpec(server="post-box", name="get_message", description="The full message.",
                    input_schema={"type": "object", "properties": {"message_id": STR}, "required": ["message_id"]},
                    annotations=ToolAnnotations(read_only_hint=read_only))
    state = {"messages": {"m_1": {"subject": "Hi", "folder": "inbox", "thread_id": "t1", "read": False}}}
    return rules_caller("post-box", "email", state, {"message": "messages"}, [tool])


def _changed(call: Any) -> dict[str, Any]:
    return call.engine.end_state(call.log).get("_world", {}).get("post-box", {})


def test_a_tool_that_declares_it_changes_nothing_runs_no_family_that_writes() -> None:
    declared = _reader(True)
    assert not declared("get_message", message_id="m_1").is_error
    assert _changed(declared) == {}  # still unread: the tool's word wins over the category's habit
    habit = _reader(None)
    assert habit("get_message", message_id="m_1").meta.get("rule") == "family"
    assert _changed(habit)["messages"]["after"]["m_1"]["read"] is True  # opening marks read (IMAP), undeclared


def test_an_option_left_out_is_not_stored_where_the_records_keep_no_such_field() -> None:
    records = {"c_1": {"text": "hello", "thread_parent": None}, "c_2": {"text": "hi", "thread_parent": "c_1"}}
    made = world_shaped({"text": "new", "thread_id": None, "pinned": None}, "c_3", records, {"posts": records},
                        "2026-08-01T09:00:00Z")
    assert made == {"text": "new", "thread_parent": None}
    given = world_shaped({"text": "new", "thread_id": "c_1"}, "c_3", records, {"posts": records}, "2026-08-01T09:00:00Z")
    assert given["thread_parent"] == "c_1" and "thread_id" not in given  # a value given is kept, where they keep it
