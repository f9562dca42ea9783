"""The time card on a clock service written for the test (issue 33): a reminder cancelled before it is due is gone,
as reminder services remove it (the shared cancel keeps a cancelled record), and a value the world holds once as
text is set by the tool named for it (`set_timezone(timezone)`)."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR = {"type": "string"}


def tool(name: str, props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(server="desk-clock", name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": list(props)})


TOOLS = [tool("cancel_reminder", {"reminder_id": STR}), tool("get_reminder", {"reminder_id": STR}),
         tool("set_timezone", {"timezone": STR}), tool("get_timezone", {})]


def clock() -> Any:
    state = {"timezone": "Europe/Lisbon",
             "reminders": {"rem_1": {"text": "Call the dentist", "due_at": "2026-08-02T09:00:00Z", "status": "scheduled"}}}
    return rules_caller("desk-clock", "time", state, {"reminder": "reminders"}, TOOLS)


def test_a_cancelled_reminder_is_gone() -> None:
    call = clock()
    assert not call("cancel_reminder", reminder_id="rem_1").is_error
    assert call("get_reminder", reminder_id="rem_1").error_class == "not_found"
    assert call("cancel_reminder", reminder_id="rem_1").error_class == "not_found"


def test_a_text_held_once_is_set_by_the_tool_named_for_it() -> None:
    call = clock()
    assert json.loads(call("set_timezone", timezone="Asia/Tokyo").text) == {"timezone": "Asia/Tokyo"}
