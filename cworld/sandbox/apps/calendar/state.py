"""The seeded start state of the calendar app, and the time helpers its tools share.

Messy on purpose: two of your meetings overlap, two invitations wait for an answer, a cancelled
meeting still shows, the company-holidays calendar is read-only, and colleagues are busy at times
you cannot see without asking for their free/busy.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from cworld.sandbox.apps._shared.values import iso
from cworld.sandbox.framework import SandboxApp, kb
from cworld.sandbox.framework.world import cast, everyone

WORK_START_HOUR, WORK_END_HOUR = 9, 17


def working_window(person: dict[str, Any], day_utc: datetime) -> tuple[datetime, datetime] | None:
    """The person's 09:00-17:00 on the local weekday that contains noon UTC of `day_utc`; None on weekends."""
    local = (day_utc.replace(hour=12, minute=0, second=0, microsecond=0)).astimezone(ZoneInfo(person["timezone"]))
    if local.weekday() >= 5:
        return None
    start = local.replace(hour=WORK_START_HOUR, minute=0, second=0, microsecond=0)
    return start, start.replace(hour=WORK_END_HOUR)


def _slot(rng: random.Random, person: dict[str, Any], day: datetime, minutes: int,
          window: tuple[datetime, datetime] | None = None) -> tuple[datetime, datetime] | None:
    window = window or working_window(person, day)
    if window is None:
        return None
    hours = WORK_END_HOUR - WORK_START_HOUR - minutes // 60 - 1
    start = window[0] + timedelta(minutes=30 * rng.randint(0, max(0, hours * 2)))
    return start, start + timedelta(minutes=minutes)


def _event(app: SandboxApp, cal: str, title: str, span: tuple[datetime, datetime], organizer: str,
           attendees: dict[str, str], **extra: Any) -> dict[str, Any]:
    rec = {"id": app.new_id("evt"), "calendar_id": cal, "title": title, "start": iso(span[0]), "end": iso(span[1]),
           "organizer": organizer, "attendees": attendees, "room_id": None, "description": "", "status": "confirmed"}
    rec.update(extra)
    return rec


def _days(app: SandboxApp, n: int) -> list[datetime]:
    today = app.now.replace(hour=0, minute=0, second=0, microsecond=0)
    return [today + timedelta(days=d) for d in range(-3, n)]


def _meetings(app: SandboxApp, world: dict[str, Any], rng: random.Random, cal: str) -> list[dict[str, Any]]:
    me, people, out = world["me"], world["colleagues"], []
    days = [d for d in _days(app, 10) if working_window(me, d)]
    for topic in world["topics"]:
        day = rng.choice(days)
        span = _slot(rng, me, day, rng.choice([30, 60]))
        if span is None:  # never for a working day, but a slot is only ever offered, not promised
            continue
        group = rng.sample(people, rng.randint(2, 4))
        organizer = rng.choice([me, group[0]])
        attendees = {p["id"]: rng.choice(["accepted", "accepted", "tentative"]) for p in group if p is not organizer}
        attendees[me["id"]] = "accepted"
        attendees.pop(organizer["id"], None)
        out.append(_event(app, cal, topic["meeting"], span, organizer["id"], attendees, description=topic["agenda"]))
    return out


def _messy(app: SandboxApp, world: dict[str, Any], rng: random.Random, cal: str,
           meetings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An overlapping 1:1, two pending invitations and one cancelled meeting."""
    me, now = world["me"], app.now
    upcoming = [m for m in meetings if m["start"] > iso(now)] or meetings
    clash_with = rng.choice(upcoming)
    start = datetime.strptime(clash_with["start"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=now.tzinfo)
    peer = rng.choice(world["colleagues"])
    clash = _event(app, cal, f"1:1 {me['first']} / {peer['first']}", (start + timedelta(minutes=15), start + timedelta(minutes=45)),
                   me["id"], {peer["id"]: "accepted"})
    out = [clash]
    for topic in world["topics"][:2]:
        host = rng.choice(world["colleagues"])
        span = _slot(rng, host, rng.choice([d for d in _days(app, 8)[4:] if working_window(host, d)] or _days(app, 8)), 30)
        if span:
            out.append(_event(app, cal, f"{topic['project']}: decision needed", span, host["id"],
                              {me["id"]: "needs_action"}, description=f"Please confirm. {topic['agenda']}"))
    old = rng.choice([m for m in meetings if m is not clash_with])
    old["status"] = "cancelled"
    return out


def _holidays(app: SandboxApp, cal: str, rng: random.Random) -> list[dict[str, Any]]:
    day = _days(app, 12)[rng.randint(6, 14)]
    return [_event(app, cal, "Company holiday (office closed)", (day, day + timedelta(days=1)), "company", {})]


def _busy(world: dict[str, Any], app: SandboxApp, rng: random.Random) -> dict[str, list[list[str]]]:
    busy: dict[str, list[list[str]]] = {}
    for person in everyone(world):
        blocks = []
        for day in _days(app, 7)[3:]:
            window = working_window(person, day)
            for _ in range(rng.randint(0, 3) if window else 0):
                start, end = _slot(rng, person, day, rng.choice([30, 60, 90]), window)  # type: ignore[misc]
                blocks.append([iso(start), iso(end)])
        busy[person["id"]] = sorted(blocks)
    return busy


def _directory(world: dict[str, Any]) -> dict[str, dict[str, Any]]:
    keys = ("id", "name", "email", "title", "company", "timezone")
    return {p["id"]: {k: p[k] for k in keys} for p in [world["me"], *everyone(world)]}


def seed_state(app: SandboxApp, rng: random.Random) -> dict[str, Any]:
    world = cast(app.session.seed)
    me = world["me"]
    cals = {"cal_mine": {"id": "cal_mine", "name": "My calendar", "owner": me["id"], "writable": True},
            "cal_team": {"id": "cal_team", "name": f"{me['department']} team", "owner": me["id"], "writable": True},
            "cal_holidays": {"id": "cal_holidays", "name": "Company holidays", "owner": "company", "writable": False}}
    rooms = {}
    for room in kb.sample("rooms", rng, 7):
        rid = app.new_id("room")
        rooms[rid] = {"id": rid, **room}
    meetings = _meetings(app, world, rng, "cal_mine")
    events = meetings + _messy(app, world, rng, "cal_mine", meetings) + _holidays(app, "cal_holidays", rng)
    for event in rng.sample(meetings, min(3, len(meetings))):
        fits = sorted(r for r, room in rooms.items() if room["capacity"] > len(event["attendees"]))
        event["room_id"] = rng.choice(fits) if fits else None
    return {"me": me["id"], "calendars": cals, "rooms": rooms, "directory": _directory(world),
            "events": {e["id"]: e for e in events}, "busy": _busy(world, app, rng)}
