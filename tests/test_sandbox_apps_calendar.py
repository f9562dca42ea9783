"""Calendar app: seeded conflicts and invitations, person-id resolution, double-booking, organizer rights."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sandbox_results import err, ok

from cworld.sandbox.apps._shared.values import parse_iso
from cworld.sandbox.apps.calendar import CalendarApp
from cworld.sandbox.framework import SandboxSession
from cworld.sandbox.framework.server import SandboxServer, build_server
from cworld.sandbox.framework.world import cast


@pytest.fixture
def cal() -> SandboxServer:
    return build_server(SandboxSession(seed=31, apps=[CalendarApp]), "calendar")


def _window(cal: SandboxServer, days: int = 14) -> dict[str, str]:
    now = cal.session.clock.now()
    return {"start_date": (now - timedelta(days=4)).date().isoformat(),
            "end_date": (now + timedelta(days=days)).date().isoformat(), "page_size": 50}


def _free_slot(cal: SandboxServer, people: list[str]) -> list[str]:
    today = cal.session.clock.now().date()
    for offset in range(1, 15):
        slots = ok(cal.call_tool_sync("find_free_slots", {"person_ids": people,
                                                          "date": (today + timedelta(days=offset)).isoformat()}))
        if slots["slots"]:
            return slots["slots"][0]
    raise AssertionError("no free slot in two weeks")


def test_seeded_calendar_is_messy(cal: SandboxServer) -> None:
    me = cal.session.state["calendar"]["me"]
    events = ok(cal.call_tool_sync("list_events", _window(cal)))["events"]
    mine = [e for e in events if e["organizer"] == me or any(a["person_id"] == me and a["response"] == "accepted"
                                                               for a in e["attendees"])]
    spans = sorted((parse_iso(e["start"]), parse_iso(e["end"])) for e in mine if e["calendar_id"] == "cal_mine")
    assert any(a[1] > b[0] for a, b in zip(spans, spans[1:], strict=False)), "two of your meetings overlap"
    assert len(ok(cal.call_tool_sync("list_invitations", {}))["events"]) >= 1
    with_cancelled = ok(cal.call_tool_sync("list_events", {**_window(cal), "include_cancelled": True}))["events"]
    assert any(e["status"] == "cancelled" for e in with_cancelled)
    cals = {c["calendar_id"]: c for c in ok(cal.call_tool_sync("list_calendars", {}))["calendars"]}
    assert cals["cal_holidays"]["writable"] is False


def test_attendees_are_person_ids_from_find_people(cal: SandboxServer) -> None:
    peer = cast(31)["colleagues"][5]
    start, end = _free_slot(cal, [])
    args = {"title": "Sync", "start": start, "end": end, "attendee_ids": [peer["name"]]}
    assert "find_people" in err(cal.call_tool_sync("create_event", args), "not_found")
    pid = ok(cal.call_tool_sync("find_people", {"query": peer["name"]}))["people"][0]["person_id"]
    event = ok(cal.call_tool_sync("create_event", {**args, "attendee_ids": [pid]}))
    assert event["attendees"] == [{"person_id": pid, "name": peer["name"], "response": "needs_action"}]


def test_double_booking_yourself_is_a_conflict_until_you_pick_a_free_slot(cal: SandboxServer) -> None:
    taken = next(e for e in ok(cal.call_tool_sync("list_events", _window(cal)))["events"]
                 if e["calendar_id"] == "cal_mine" and e["organizer"] == cal.session.state["calendar"]["me"]
                 and parse_iso(e["start"]) > cal.session.clock.now())
    before = cal.session.snapshot()
    args = {"title": "Clash", "start": taken["start"][:16], "end": taken["end"][:16]}
    assert "find_free_slots" in err(cal.call_tool_sync("create_event", args), "conflict")
    assert cal.session.snapshot() == before
    start, end = _free_slot(cal, [])
    assert ok(cal.call_tool_sync("create_event", {**args, "start": start[:16], "end": end[:16]}))["status"] == "confirmed"


def test_a_booked_room_cannot_be_booked_twice(cal: SandboxServer) -> None:
    start, end = _free_slot(cal, [])
    room = ok(cal.call_tool_sync("list_rooms", {"min_capacity": 2, "start": start, "end": end}))["rooms"][0]
    assert room["available"] is True
    ok(cal.call_tool_sync("create_event", {"title": "A", "start": start, "end": end, "room_id": room["room_id"]}))
    again = ok(cal.call_tool_sync("list_rooms", {"min_capacity": 2, "start": start, "end": end}))["rooms"]
    assert next(r for r in again if r["room_id"] == room["room_id"])["available"] is False
    args = {"title": "B", "start": start, "end": end, "room_id": room["room_id"], "allow_overlap": True}
    assert "list_rooms" in err(cal.call_tool_sync("create_event", args), "conflict")


def test_only_the_organizer_changes_a_meeting_others_respond(cal: SandboxServer) -> None:
    invite = ok(cal.call_tool_sync("list_invitations", {}))["events"][0]
    text = err(cal.call_tool_sync("update_event", {"event_id": invite["event_id"], "title": "Mine now"}),
               "permission_denied")
    assert "respond_to_invitation" in text
    err(cal.call_tool_sync("cancel_event", {"event_id": invite["event_id"]}), "permission_denied")
    answered = ok(cal.call_tool_sync("respond_to_invitation", {"event_id": invite["event_id"], "response": "accepted"}))
    me = cal.session.state["calendar"]["me"]
    assert {a["person_id"]: a["response"] for a in answered["attendees"]}[me] == "accepted"
    assert all(e["event_id"] != invite["event_id"] for e in ok(cal.call_tool_sync("list_invitations", {}))["events"])


def test_read_only_calendar_and_past_times_are_refused(cal: SandboxServer) -> None:
    start, end = _free_slot(cal, [])
    err(cal.call_tool_sync("create_event", {"title": "x", "start": start, "end": end, "calendar_id": "cal_holidays"}),
        "permission_denied")
    err(cal.call_tool_sync("create_event", {"title": "x", "start": "2020-01-01T10:00", "end": "2020-01-01T11:00"}),
        "invalid")
    err(cal.call_tool_sync("create_event", {"title": "x", "start": end, "end": start}), "invalid")


def test_free_slots_respect_colleagues_busy_time(cal: SandboxServer) -> None:
    peer = cast(31)["colleagues"][0]["id"]
    start, end = _free_slot(cal, [peer])
    day = start[:10]
    busy = ok(cal.call_tool_sync("get_free_busy", {"person_ids": [peer], "date": day}))["people"][0]
    hours = busy["working_hours_utc"]
    assert hours and hours[0] <= start and end <= hours[1]
    assert all(not (b[0] < end and start < b[1]) for b in busy["busy"])


def test_pending_invitations_page_soonest_first_in_a_grown_calendar(cal: SandboxServer) -> None:
    """list_invitations reads a sorted index of unanswered invitations: the same answer as filtering every event
    and sorting by start (ties in the calendar's order), past, cancelled and answered ones left out."""
    state = cal.session.state["calendar"]  # grown before any call, so the indexes are built over it
    me, now = state["me"], cal.session.clock.now()
    events = state["events"]
    for n, event in enumerate(list(events.values()) * 3):
        start, key = now + timedelta(hours=(n % 7) - 2), f"evt_9{999 - n:03d}"  # ties at a start: ids descending
        events[key] = {**event, "id": key, "start": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "end": (start + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "status": "cancelled" if n % 5 == 0 else "confirmed",
                       "attendees": {**event["attendees"], me: ("needs_action", "accepted")[n % 4 == 1]}}
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    wanted = sorted((e for e in events.values() if e["attendees"].get(me) == "needs_action"
                     and e["status"] == "confirmed" and e["end"] > stamp), key=lambda e: e["start"])
    seen, page = [], 1
    while True:
        answer = ok(cal.call_tool_sync("list_invitations", {"page": page, "page_size": 6}))
        seen += [e["event_id"] for e in answer["events"]]
        if not answer["has_more"]:
            break
        page += 1
    assert seen == [e["id"] for e in wanted] and answer["total"] == len(wanted) > 10
