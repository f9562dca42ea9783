"""A calendar written for the test (issue 33): `add_attendees`/`remove_attendee` change the list field of the
event they name (inference: they neither make nor delete a record), and the calendar card's no-overlap family
refuses a meeting over one already on the calendar unless the create's allow-overlap flag is set."""

from __future__ import annotations

from typing import Any

import pytest
from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

SERVER = "team-calendar"
EVENTS = {"evt_1": {"calendar_id": "cal_1", "title": "Standup", "start": "2026-08-03T09:00:00Z",
                    "end": "2026-08-03T09:30:00Z", "organizer": "p_1", "attendees": ["p_1", "p_2"], "status": "confirmed"}}
PEOPLE = {f"p_{n}": {"name": f"Person {n}", "email": f"p{n}@example.com"} for n in (1, 2, 3)}


def tool(name: str, props: dict[str, Any], required: list[str]) -> ToolSpec:
    return ToolSpec(server=SERVER, name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": required})


STR, IDS = {"type": "string"}, {"type": "array", "items": {"type": "string"}}
TOOLS = [
    tool("add_attendees", {"event_id": STR, "person_ids": IDS}, ["event_id", "person_ids"]),
    tool("remove_attendee", {"event_id": STR, "person_id": STR}, ["event_id", "person_id"]),
    tool("get_event", {"event_id": STR}, ["event_id"]),
    tool("create_event", {"title": STR, "start": STR, "end": STR, "calendar_id": STR,
                          "allow_overlap": {"type": "boolean", "default": False}}, ["title", "start", "end"]),
]


@pytest.fixture()
def call() -> Any:
    return rules_caller(SERVER, "calendar", {"events": EVENTS, "people": PEOPLE},
                        {"event": "events", "person": "people"}, TOOLS)


def attendees(call: Any) -> list[str]:
    return list(call("get_event", event_id="evt_1").structured_content["attendees"])


def test_removing_an_attendee_keeps_the_event_and_one_not_there_is_not_found(call: Any) -> None:
    assert not call("remove_attendee", event_id="evt_1", person_id="p_2").is_error
    assert attendees(call) == ["p_1"]  # the event is still there, without p_2
    assert call("remove_attendee", event_id="evt_1", person_id="p_2").error_class == "not_found"


def test_adding_attendees_appends_the_new_ones_and_checks_they_exist(call: Any) -> None:
    assert call("add_attendees", event_id="evt_1", person_ids=["p_9"]).error_class == "not_found"
    assert not call("add_attendees", event_id="evt_1", person_ids=["p_2", "p_3"]).is_error
    assert attendees(call) == ["p_1", "p_2", "p_3"]


def test_a_meeting_over_another_on_the_calendar_needs_the_overlap_flag(call: Any) -> None:
    over = dict(title="Sync", start="2026-08-03T09:15", end="2026-08-03T10:00", calendar_id="cal_1")
    assert call("create_event", **over).error_class == "business"  # a conflict
    assert not call("create_event", **{**over, "start": "2026-08-03T09:30"}).is_error  # back to back is free
    assert not call("create_event", **over, allow_overlap=True).is_error


def test_a_create_stores_the_fields_its_kind_holds_not_its_options(call: Any) -> None:
    made = call("create_event", title="Sync", start="2026-08-05T09:00", end="2026-08-05T10:00", calendar_id="cal_1",
                allow_overlap=True).structured_content
    record = call("get_event", event_id=made["event_id"]).structured_content
    assert record["start"] == "2026-08-05T09:00:00Z"  # a field here, not a paging offset; kept as the world keeps times
    assert "allow_overlap" not in record
