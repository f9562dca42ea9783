"""The time card's dismiss family (issue 33): a reminder is dismissed once it has come due (before that it can
only be cancelled), and only once. The reminder service here is written for the test."""

from __future__ import annotations

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

SERVER = "desk-reminders"
REMINDERS = {"rem_1": {"text": "Past", "at": "2026-08-01T08:00:00Z", "status": "due"},
             "rem_2": {"text": "Later", "at": "2026-09-01T08:00:00Z", "status": "scheduled"}}


def test_a_reminder_is_dismissed_once_due_and_only_once() -> None:
    dismiss = ToolSpec(server=SERVER, name="dismiss_reminder", description="dismiss a reminder", input_schema={
        "type": "object", "properties": {"reminder_id": {"type": "string"}}, "required": ["reminder_id"]})
    call = rules_caller(SERVER, "time", {"reminders": REMINDERS}, {"reminder": "reminders"}, [dismiss])
    assert call("dismiss_reminder", reminder_id="rem_2").error_class == "business"  # not due yet
    done = call("dismiss_reminder", reminder_id="rem_1")
    assert not done.is_error and done.structured_content["status"] == "dismissed"  # type: ignore[index]
    assert call("dismiss_reminder", reminder_id="rem_1").error_class == "business"  # already dismissed
