"""Reminders set for a wall-clock time (the time card): what reminder services do, tried on a small reminder
service written for these tests (its own field names and states), not our clock app."""

from __future__ import annotations

from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec
from cworld.engine.rules.family import answer_values
from cworld.engine.rules.spans import in_utc

STR: dict[str, Any] = {"type": "string"}
#: What the service answers for a reminder: the instant it fires in UTC, and its state.
REMINDER: dict[str, Any] = {"type": "object", "properties": {
    "reminder_id": STR, "note": STR, "fires_at": {"type": "string", "description": "when it fires, UTC"},
    "status": {"type": "string", "enum": ["armed", "ringing", "done"]}}}


def _remindme(zone: str | None) -> Any:
    """A reminder service that keeps the user's zone as a setting and no reminder yet (the clock: 1 August, 09:00
    UTC)."""
    tool = ToolSpec(server="remindme", name="add_reminder", description="Remind me at a local time.",
                    input_schema={"type": "object", "required": ["note", "when"], "properties": {
                        "note": STR, "when": {"type": "string", "description": "local time, YYYY-MM-DDTHH:MM"}}},
                    output_schema=REMINDER)
    state: dict[str, Any] = {"reminders": {}, **({"timezone": zone} if zone else {})}
    return rules_caller("remindme", "time", state, {"reminder": "reminders"}, [tool])


def _stored(call: Any) -> dict[str, Any]:
    """The reminders the session made, as the engine hands them to the grader."""
    return call.engine.end_state(call.log)["_world"]["remindme"]["reminders"]["after"]


def test_a_local_time_is_kept_as_its_utc_instant_in_the_first_state_the_service_lists() -> None:
    call = _remindme("America/New_York")
    made = call("add_reminder", note="Call the bank", when="2026-08-03T09:30")
    assert made.meta.get("rule") == "family", made.text
    (key, record), = _stored(call).items()
    assert record["fires_at"] == "2026-08-03T13:30:00Z"  # 09:30 in New York (EDT, UTC-4)
    assert record["status"] == "armed" and record["id"] == key
    assert "when" not in record  # the wall-clock time is not what the service keeps


def test_a_moment_already_passed_in_the_users_zone_is_refused() -> None:
    call = _remindme("Asia/Tokyo")
    late = call("add_reminder", note="Too late", when="2026-08-01T17:30")  # 08:30 UTC, before the clock's 09:00
    assert late.is_error and late.error_class == "business", late.text
    assert not call("add_reminder", note="Fine", when="2026-08-01T18:30").is_error  # 09:30 UTC


def test_a_world_that_keeps_no_zone_reads_the_time_as_utc() -> None:
    call = _remindme(None)
    assert not call("add_reminder", note="Stand-up", when="2026-08-02T10:00").is_error
    (_, record), = _stored(call).items()
    assert record["fires_at"] == "2026-08-02T10:00:00Z"


def test_in_utc_and_the_values_an_answer_documents() -> None:
    assert in_utc("2026-01-15T09:00", "Europe/Lisbon") == "2026-01-15T09:00:00Z"
    assert in_utc("2026-07-15T09:00", "Europe/Lisbon") == "2026-07-15T08:00:00Z"
    assert in_utc("2026-07-15T09:00+02:00", "Asia/Tokyo") == "2026-07-15T07:00:00Z"  # its own offset kept
    assert in_utc("soon", "UTC") is None
    order = ToolSpec(server="s", name="get_order", description="", input_schema={"type": "object"}, output_schema={
        "type": "object", "properties": {"status": {"type": "string", "description": "received, packed or shipped"},
                                         "total": {"type": "number"}}})
    assert answer_values(order) == {"status": ["received", "packed", "shipped"], "total": []}
