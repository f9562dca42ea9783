"""Booking a meeting as a person does: the time comes from when everyone is free, the room from those free then.

A clause that gives a day but no time of day ("45 minutes with Ivan Murray on Thursday 7 May, with a room
with video") leaves the write's `start` and `end` to be found: the earliest free slot on that day that a
free-slot finder answered. A room the clause asks for is one the room listing shows free then (and with
video when the clause says so). Only the clause and the answers are read.
"""

from __future__ import annotations

from typing import Any

from cworld.agents.intents import Intent

MOMENTS = ("start", "end")


def open_time(intent: Intent, props: dict[str, Any]) -> bool:
    """Whether the clause leaves the time of a start/end write to be found: it gives a day, no time of day."""
    dates = intent.facts.dates
    return all(m in props for m in MOMENTS) and bool(dates) and dates[0].hour is None


def slot_moment(memory: list[Any], intent: Intent, name: str) -> str | None:
    """`start` or `end` of the earliest free slot on the clause's day in the latest answer that lists slots."""
    when = intent.facts.dates[0]
    day = f"-{when.month:02d}-{when.day:02d}"
    for record in reversed(memory):
        slots = record.payload.get("slots") if isinstance(record.payload, dict) else None
        if isinstance(slots, list):
            fitting = [s for s in slots if isinstance(s, list) and len(s) == 2 and str(s[0])[4:10] == day]
            return str(fitting[0][MOMENTS.index(name)])[:16] if fitting else None
    return None


def fits_room(item: dict[str, Any], intent: Intent) -> bool:
    """A listed room the clause can take: free then (when the listing says), seats for everyone the clause
    names and me, with video when asked for."""
    if item.get("available") is False:
        return False
    seats = item.get("capacity")
    if isinstance(seats, int) and seats < len(set(intent.facts.names)) + 1:
        return False
    return not ("video" in intent.words and item.get("video") is False)


def room_size(item: dict[str, Any]) -> float:
    """How much of a preference a room's size costs, under one point: a person books the smallest room that
    seats everyone, not the boardroom for two."""
    seats = item.get("capacity")
    return min(seats, 999) / 1000 if isinstance(seats, int) and not isinstance(seats, bool) and seats > 0 else 0.0


def finder(tools: list[Any], server: str) -> Any:
    """The server's free-slot finder (a read named for free time or slots), if visible."""
    return next((t for t in tools if t.server == server and t.is_read_only
                 and any(w in t.name for w in ("free_slots", "free_time", "slots", "availability"))), None)
