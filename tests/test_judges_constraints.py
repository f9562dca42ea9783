"""Constraint checkers: one for every verification kind the synthesizer and the controller write, and
each one right and wrong on a hand-made trajectory."""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml
from judges_helpers import TrajectoryBuilder

from cworld.data_model import Constraint, Task, ToolAnnotations, ToolSpec
from cworld.environment import Environment
from cworld.judges import CHECKERS, classify_calls
from cworld.judges.checkers import CheckContext, verify

TOOLS = {t.id: t for t in (
    ToolSpec(server="travel", name="search_flights", annotations=ToolAnnotations(read_only_hint=True)),
    ToolSpec(server="travel", name="book_flight"),
    ToolSpec(server="calendar", name="create_event"),
    ToolSpec(server="calendar", name="list_events", annotations=ToolAnnotations(read_only_hint=True)),
    ToolSpec(server="mail", name="send_message"),
    ToolSpec(server="shop", name="cancel_order", annotations=ToolAnnotations(destructive_hint=True)),
)}
TASK = Task(id="t", query="Book the cheapest morning flight and put it in my calendar.",
            tools=["travel/search_flights", "travel/book_flight", "calendar/create_event"])


def trip(answer: str = "- Booked AF12 for 320.\n- Added to the calendar.") -> TrajectoryBuilder:
    return (TrajectoryBuilder(TASK)
            .call("travel/search_flights", {"from": "SFO", "to": "JFK"}, result={"flights": [{"id": "AF12"}]})
            .call("travel/book_flight", {"flight_id": "AF12", "card": "visa-1", "passengers": ["ana", "bo"]},
                  result={"booking": {"id": "b1", "total": 320.0, "currency": "EUR"}})
            .call("calendar/create_event", {"title": "Flight", "start": "2026-08-26T09:00:00"}, result={"id": "e1"})
            .final(answer))


def check(builder: TrajectoryBuilder, verification: dict[str, Any], added_at_turn: int | None = None) -> bool | None:
    t = builder.build()
    c = Constraint(id="c", type="x", description="x", verification=verification, added_at_turn=added_at_turn)
    return verify(c, CheckContext(t, classify_calls(t, TOOLS), TOOLS, c))


def kinds_in(value: Any) -> set[str]:
    if isinstance(value, dict):
        found = {str(value["kind"])} if "kind" in value and isinstance(value["kind"], str) else set()
        return found.union(*(kinds_in(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(kinds_in(v) for v in value)) if value else set()
    return set()


def test_every_kind_in_the_constraint_taxonomy_has_a_checker():
    path = Environment.resolve().task_synth / "constraints.yaml"
    if not path.is_file():
        pytest.skip("task_synth/constraints.yaml not written yet")
    kinds = kinds_in(yaml.safe_load(path.read_text()))
    assert kinds, "constraints.yaml lists no verification kinds"
    assert sorted(kinds - CHECKERS.keys()) == []


def test_every_kind_the_controller_injects_has_a_checker():
    from cworld.controller.faults.base import PlanInput
    from cworld.controller.faults.constraint_level import VARIANTS, NewConstraintFault, graded_change

    budget = Constraint(id="b", type="budget", description="Don't spend more than 100 on it.",
                        verification={"kind": "budget", "value": 100, "tool": "shop/buy", "field": "total"})
    due = Constraint(id="d", type="deadline", description="It has to be done by 2026-01-05.",
                     verification={"kind": "deadline", "value": "2026-01-05", "tool": "x/y", "argument": "date"})
    task = Task(id="t", query="q", constraints=[budget, due])
    kinds = set()
    for seed in range(40):
        for variant in VARIANTS:
            for t in (task, Task(id="t2", query="q")):
                target = NewConstraintFault.plan_target(PlanInput(t.public(), {}), {"variant": variant},
                                                        random.Random(seed))
                if target is not None:  # planned from the public task; delivered against the task's forms
                    kinds.add(graded_change(target.content, t.constraints).verification["kind"])
    assert {"max_calls", "final_answer_max_words", "budget", "deadline"} <= kinds
    assert sorted(kinds - CHECKERS.keys()) == []


@pytest.mark.parametrize(("verification", "expected"), [
    ({"kind": "max_calls", "value": 3}, True),
    ({"kind": "max_calls", "value": 2}, False),
    ({"kind": "max_turns", "value": 3}, False),
    ({"kind": "min_servers", "value": 2}, True),
    ({"kind": "min_servers", "value": 3}, False),
    ({"kind": "allowed_servers", "value": ["travel", "calendar"]}, True),
    ({"kind": "allowed_servers", "value": ["travel"]}, False),
    ({"kind": "final_answer_mentions", "value": ["af12", "320"]}, True),
    ({"kind": "final_answer_mentions", "value": ["AF12", "hotel"]}, False),
    ({"kind": "final_answer_contains", "value": "Booked"}, True),
    ({"kind": "final_answer_contains", "value": "SUMMARY:"}, False),
    ({"kind": "final_answer_contains", "value": "booked", "case_sensitive": False}, True),
    ({"kind": "final_answer_format", "value": "bullets"}, True),
    ({"kind": "final_answer_format", "value": "numbered"}, False),
    ({"kind": "final_answer_format", "value": "json"}, False),
    ({"kind": "final_answer_max_words", "value": 10}, True),
    ({"kind": "final_answer_max_words", "value": 5}, False),
    ({"kind": "no_repeated_calls"}, True),
    ({"kind": "reads_before_writes", "value": ["travel"]}, True),
    ({"kind": "reads_before_writes", "value": ["calendar"]}, False),
    ({"kind": "call_order", "before": "travel/book_flight", "after": "calendar/create_event"}, True),
    ({"kind": "call_order", "before": "create_event", "after": "book_flight"}, False),
    ({"kind": "call_order", "before": "book_flight", "after": "mail/send_message"}, True),
    ({"kind": "argument_equals", "tool": "travel/book_flight", "argument": "flight_id", "value": "af12"}, True),
    ({"kind": "argument_equals", "tool": "travel/book_flight", "argument": "flight_id", "value": "BA7"}, False),
    ({"kind": "argument_excludes", "tool": "book_flight", "argument": "card", "value": ["amex-9"]}, True),
    ({"kind": "argument_excludes", "tool": "book_flight", "argument": "passengers", "value": ["bo"]}, False),
    ({"kind": "deadline", "tool": "calendar/create_event", "argument": "start", "value": "2026-08-26"}, True),
    ({"kind": "deadline", "tool": "calendar/create_event", "argument": "start", "value": "2026-08-25T23:00"}, False),
    ({"kind": "deadline", "tool": "calendar/create_event", "argument": "start", "value": "soon"}, None),
    ({"kind": "budget", "tool": "travel/book_flight", "field": "total", "value": 350}, True),
    ({"kind": "budget", "tool": "travel/book_flight", "field": "total", "value": 300}, False),
    ({"kind": "budget", "tool": "travel/book_flight", "field": "no_such_field", "value": 300}, None),
    ({"kind": "no_destructive_calls"}, True),
    ({"kind": "must_use_tools", "value": ["travel/*"]}, True),
    ({"kind": "forbidden_tools", "value": ["calendar/create_event"]}, False),
    ({"kind": "no_such_kind"}, None),
    ({"kind": "max_calls"}, None),    # malformed form: unknown, not failed
])
def test_checker_on_a_known_trajectory(verification, expected):
    assert check(trip(), verification) is expected


def test_repeats_and_destructive_calls_break_their_rules():
    t = (trip().call("travel/search_flights", {"from": "SFO", "to": "JFK"}, result={"flights": []})
         .call("shop/cancel_order", {"order_id": "o1"}, error="not_found"))
    assert check(t, {"kind": "no_repeated_calls"}) is False
    assert check(t, {"kind": "no_destructive_calls"}) is False
    assert check(t, {"kind": "no_destructive_calls"}, added_at_turn=6) is False   # the cancel is at turn 6
    assert check(t, {"kind": "no_destructive_calls"}, added_at_turn=7) is True    # the rule came after it


def test_bullets_needs_every_line_unless_relaxed():
    lead_in = trip("Here is what I did:\n- booked\n- added the event\n- mailed the team")
    assert check(lead_in, {"kind": "final_answer_format", "value": "bullets"}) is False
    assert check(lead_in, {"kind": "final_answer_format", "value": "bullets", "min_share": 0.6}) is True
