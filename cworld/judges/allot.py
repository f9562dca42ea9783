"""How a judge's character budget is shared among an episode's steps.

The observations that hold the final answer's facts (`facts.py`) come first: whole, in order of
evidence value, within WHOLE_SHARE of the room, or an excerpt around their facts when one is too long.
The other observations share what is left by water-filling: short ones whole, long ones cut to one
common length. Every observation keeps at least MIN_OBSERVATION characters; each step's arguments and
thought are bounded too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from cworld.data_model import Step
from cworld.judges.facts import Fact, answer_facts, by_evidence_value, holders

STEP_TAGS = 150
"""Characters of tags and attributes per step (a call and its observation), set aside before the step
texts share the budget."""
WHOLE_SHARE = 0.6
"""Of the observations' room, what the fact-holding ones may take whole."""
MIN_OBSERVATION = 80
MIN_DETAIL, MAX_DETAIL = 80, 600
"""Bounds on a step's arguments and thought (each)."""


def clip(text: str, limit: int) -> tuple[str, int]:
    """`text` with whitespace collapsed, cut to `limit` characters; and how many were cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text, 0
    return f"{text[:limit]}…", len(text) - limit


def excerpt(text: str, spans: list[tuple[int, int]], limit: int) -> tuple[str, int]:
    """`text` cut to about `limit` characters: its head and a window around each span (a fact), the
    windows as wide as the limit allows; and how many characters were cut."""
    if len(text) <= limit:
        return text, 0
    low, high = 0, len(text)
    while low < high:  # the widest padding whose merged windows still fit the limit
        pad = (low + high + 1) // 2
        if _covered(_windows(text, spans, pad)) <= limit:
            low = pad
        else:
            high = pad - 1
    windows = _windows(text, spans, low)
    return " … ".join(text[start:end] for start, end in windows if end > start), len(text) - _covered(windows)


def _windows(text: str, spans: list[tuple[int, int]], pad: int) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted([(0, 0), *spans]):
        window = (max(0, start - pad), min(len(text), end + pad))
        if merged and window[0] <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], window[1]))
        else:
            merged.append(window)
    return merged


def _covered(windows: list[tuple[int, int]]) -> int:
    return sum(end - start for start, end in windows)


@dataclass(frozen=True)
class StepRoom:
    """What one step may show: its observation (None = whole) and each of its arguments and thought."""

    observation: int | None
    detail: int
    spans: list[tuple[int, int]] = field(default_factory=list)


def allocate(steps: list[Step], texts: list[str], budget: int, answer: str) -> tuple[dict[int, StepRoom], list[int]]:
    """Each step's room (by position) and the positions of the observations kept whole for `answer`'s facts."""
    room = max(0, budget - STEP_TAGS * len(steps))
    detail = max(MIN_DETAIL, min(MAX_DETAIL, room // (6 * max(1, len(steps)))))
    obs_room = max(0, room - sum(_details(s, detail) for s in steps))
    held = holders(answer_facts(answer), texts)
    floors = MIN_OBSERVATION * sum(1 for s in steps if s.observation is not None)
    rooms = _fact_rooms(held, texts, int(min(obs_room * WHOLE_SHARE, obs_room - floors)), detail)
    spent = sum(len(texts[i]) if r.observation is None else r.observation for i, r in rooms.items())
    rest = [i for i in range(len(steps)) if i not in rooms]
    cap = max(MIN_OBSERVATION, water_level([len(texts[i]) for i in rest], max(0, obs_room - spent)))
    for i in rest:
        rooms[i] = StepRoom(cap, detail, _spans(held.get(i, []), texts[i]))
    return rooms, [i for i, r in rooms.items() if r.observation is None]


def _details(step: Step, detail: int) -> int:
    return min(detail, len(step.message)) + (min(detail, len(arguments_text(step))) if step.tool_call else 0)


def _fact_rooms(held: dict[int, list[Fact]], texts: list[str], room: int, detail: int) -> dict[int, StepRoom]:
    """The fact-holding observations, best first: whole while they fit `room`, then one excerpt with
    what is left; the ones after that are cut with the rest (still around their facts)."""
    rooms: dict[int, StepRoom] = {}
    for i in by_evidence_value(held):
        if len(texts[i]) <= room:
            rooms[i] = StepRoom(None, detail)
            room -= len(texts[i])
        elif room >= MIN_OBSERVATION * 4:
            rooms[i] = StepRoom(room, detail, _spans(held[i], texts[i]))
            room = 0
    return rooms


def _spans(facts: list[Fact], text: str) -> list[tuple[int, int]]:
    """Where each fact first appears in `text`."""
    return [m.span() for f in facts if (m := f.pattern().search(text))]


def water_level(needs: list[int], room: int) -> int:
    """The largest cap c with sum(min(need, c)) <= room: short texts stay whole, long ones share the rest."""
    left = room
    ordered = sorted(needs)
    for taken, need in enumerate(ordered):
        share = left // (len(ordered) - taken)
        if need > share:
            return share
        left -= need
    return max(ordered, default=0) + left


def arguments_text(step: Step) -> str:
    if step.tool_call is None:
        return "{}"
    return json.dumps(step.tool_call.arguments, ensure_ascii=False, sort_keys=True, default=str)
