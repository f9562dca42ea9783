"""Parity of the constraint checks of task synthesis and of the judges, now one implementation.

Each case is a hand-made call list and final answer, checked both ways: by synthesis
(`cworld.synth.constraint_eval.evaluate` on plan-runner `CallRecord`s) and by a judge (`verify` on a
trajectory). `old` holds the verdicts (synth, judge) of the two separate implementations this replaced,
recorded on these very cases before the merge; `now` the verdicts of the merged one. Nothing may loosen:
where either old side said False, that side still says False, except the `LOOSER` cases (explained there).
Where the two sides still differ, it is on purpose: synthesis *proves* a constraint (a gold run that
never exercises it does not show it; a malformed form is not shown), a judge asks whether it was broken.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from judges_helpers import TrajectoryBuilder

from cworld.data_model import Constraint, ToolAnnotations, ToolSpec
from cworld.environment import Environment
from cworld.judges import classify_calls
from cworld.judges.checkers import CheckContext, verify
from cworld.synth.constraint_eval import evaluate
from cworld.synth.plan_exec import CallRecord

Verdict = bool | None
Pair = tuple[Verdict, Verdict]
TOOLS = {
    t.id: t
    for t in (
        ToolSpec(server="shop", name="view_cart", annotations=ToolAnnotations(read_only_hint=True)),
        ToolSpec(server="shop", name="checkout", annotations=ToolAnnotations(read_only_hint=False)),
        ToolSpec(server="shop", name="cancel_order", annotations=ToolAnnotations(destructive_hint=True)),
    )
}
LOOSER = {
    # synthesis side: the old one read a result field only at the top level and so could not find a
    # nested `booking.total`; the judges search results at any depth. The rule (at most the budget) holds.
    ("budget nested result", "synth"),
}


def C(tool: str, ok: bool = True, result: dict[str, Any] | None = None, **args: Any) -> tuple[Any, ...]:
    return (tool, args, ok, result if result is not None else {"total": 40.0})


def by_synth(form: dict[str, Any], calls: list[Any], answer: str) -> Verdict:
    records = [
        CallRecord("s", t, a, ok, result=r if ok else None, error=None if ok else "no")
        for t, a, ok, r in calls
    ]
    return evaluate(Constraint(id="c", type="t", description="d", verification=form), records, answer, TOOLS)[
        0
    ]


def by_judge(form: dict[str, Any], calls: list[Any], answer: str) -> Verdict:
    builder = TrajectoryBuilder(None)
    for tool, args, ok, result in calls:
        builder.call(tool, args, result=result if ok else None, error=None if ok else "business")
    trajectory = builder.final(answer).build()
    c = Constraint(id="c", type="t", description="d", verification=form)
    return verify(c, CheckContext(trajectory, classify_calls(trajectory, TOOLS), TOOLS, c))


BE: dict[str, Any] = {"kind": "budget", "tool": "a/x", "field": "total", "value": 50}
CASES: list[tuple[str, dict[str, Any], list[Any], str, Pair, Pair]] = [
    ("max_calls ok", {"kind": "max_calls", "value": 2}, [C("a/x"), C("a/y")], "", (True, True), (True, True)),
    (
        "max_calls over",
        {"kind": "max_calls", "value": 1},
        [C("a/x"), C("a/y", ok=False)],
        "",
        (False, False),
        (False, False),
    ),
    (
        "min_servers ok",
        {"kind": "min_servers", "value": 2},
        [C("a/x"), C("b/y")],
        "",
        (True, True),
        (True, True),
    ),
    (
        "min_servers failed one",
        {"kind": "min_servers", "value": 2},
        [C("a/x"), C("b/y", ok=False)],
        "",
        (False, False),
        (False, False),
    ),
    (
        "allowed_servers",
        {"kind": "allowed_servers", "value": ["a"]},
        [C("a/x"), C("b/y")],
        "",
        (False, False),
        (False, False),
    ),
    (
        "allowed_servers ok",
        {"kind": "allowed_servers", "value": ["a", "b"]},
        [C("a/x"), C("b/y")],
        "",
        (True, True),
        (True, True),
    ),
    (
        "mentions",
        {"kind": "final_answer_mentions", "value": ["GH502", "663.44"]},
        [],
        "flight gh502 for 663.44",
        (True, True),
        (True, True),
    ),
    (
        "mentions miss",
        {"kind": "final_answer_mentions", "value": ["GH502", "9"]},
        [],
        "flight gh502",
        (False, False),
        (False, False),
    ),
    (
        "mentions wrapped",
        {"kind": "final_answer_mentions", "value": ["Grand Hotel"]},
        [],
        "the Grand\nHotel",
        (False, True),
        (False, False),
    ),
    (
        "contains",
        {"kind": "final_answer_contains", "value": "SUMMARY:"},
        [],
        "x\nSUMMARY: ok",
        (True, True),
        (True, True),
    ),
    (
        "contains case",
        {"kind": "final_answer_contains", "value": "SUMMARY:"},
        [],
        "summary: ok",
        (False, False),
        (False, False),
    ),
    (
        "format bullets",
        {"kind": "final_answer_format", "value": "bullets"},
        [],
        "- one\n* two",
        (True, True),
        (True, True),
    ),
    (
        "format lead-in",
        {"kind": "final_answer_format", "value": "bullets"},
        [],
        "Here:\n- one",
        (False, False),
        (False, False),
    ),
    (
        "format plus",
        {"kind": "final_answer_format", "value": "bullets"},
        [],
        "+ one\n\u2022 two",
        (False, True),
        (False, False),
    ),
    (
        "format numbered",
        {"kind": "final_answer_format", "value": "numbered"},
        [],
        "1. one\n2. two",
        (None, True),
        (True, True),
    ),
    (
        "max_words over",
        {"kind": "final_answer_max_words", "value": 3},
        [],
        "far too many words here",
        (False, False),
        (False, False),
    ),
    (
        "max_words ok",
        {"kind": "final_answer_max_words", "value": 3},
        [],
        "three words here",
        (True, True),
        (True, True),
    ),
    (
        "max_words empty",
        {"kind": "final_answer_max_words", "value": 3},
        [],
        "",
        (True, False),
        (False, False),
    ),
    (
        "repeats",
        {"kind": "no_repeated_calls"},
        [C("a/x", q=1), C("a/x", q=1)],
        "",
        (False, False),
        (False, False),
    ),
    (
        "repeats failed",
        {"kind": "no_repeated_calls"},
        [C("a/x", ok=False, q=1), C("a/x", q=1)],
        "",
        (True, True),
        (True, True),
    ),
    (
        "rbw ok",
        {"kind": "reads_before_writes", "value": ["shop"]},
        [C("shop/view_cart"), C("shop/checkout")],
        "",
        (True, True),
        (True, True),
    ),
    (
        "rbw bad",
        {"kind": "reads_before_writes", "value": ["shop"]},
        [C("shop/checkout")],
        "",
        (False, False),
        (False, False),
    ),
    (
        "rbw unannotated get",
        {"kind": "reads_before_writes", "value": ["a"]},
        [C("a/get_x"), C("a/set_x")],
        "",
        (False, True),
        (False, True),
    ),
    (
        "rbw empty list",
        {"kind": "reads_before_writes", "value": []},
        [C("shop/checkout")],
        "",
        (True, False),
        (False, False),
    ),
    (
        "order bad",
        {"kind": "call_order", "before": "a/x", "after": "b/y"},
        [C("b/y"), C("a/x")],
        "",
        (False, False),
        (False, False),
    ),
    (
        "order ok",
        {"kind": "call_order", "before": "a/x", "after": "b/y"},
        [C("a/x"), C("b/y")],
        "",
        (True, True),
        (True, True),
    ),
    (
        "order before failed",
        {"kind": "call_order", "before": "a/x", "after": "b/y"},
        [C("a/x", ok=False), C("b/y")],
        "",
        (False, False),
        (False, False),
    ),
    (
        "order after never",
        {"kind": "call_order", "before": "a/x", "after": "b/y"},
        [C("a/x")],
        "",
        (False, True),
        (False, True),
    ),
    (
        "equals",
        {"kind": "argument_equals", "tool": "a/x", "argument": "id", "value": "K"},
        [C("a/x", id="k")],
        "",
        (True, True),
        (True, True),
    ),
    (
        "equals miss",
        {"kind": "argument_equals", "tool": "a/x", "argument": "id", "value": "K"},
        [C("a/x", id="j")],
        "",
        (False, False),
        (False, False),
    ),
    (
        "equals failed call",
        {"kind": "argument_equals", "tool": "a/x", "argument": "id", "value": "K"},
        [C("a/x", ok=False, id="k")],
        "",
        (False, False),
        (False, False),
    ),
    (
        "equals num/str",
        {"kind": "argument_equals", "tool": "a/x", "argument": "n", "value": 2},
        [C("a/x", n="2")],
        "",
        (True, False),
        (False, False),
    ),
    (
        "equals in list",
        {"kind": "argument_equals", "tool": "a/x", "argument": "to", "value": "p1"},
        [C("a/x", to=["p1", "p2"])],
        "",
        (False, True),
        (False, False),
    ),
    (
        "deadline late",
        {"kind": "deadline", "tool": "a/x", "argument": "due", "value": "2026-05-01T12:00:00Z"},
        [C("a/x", due="2026-05-01T13:00")],
        "",
        (False, False),
        (False, False),
    ),
    (
        "deadline ok",
        {"kind": "deadline", "tool": "a/x", "argument": "due", "value": "2026-05-01T12:00:00Z"},
        [C("a/x", due="2026-05-01T11:00")],
        "",
        (True, True),
        (True, True),
    ),
    (
        "deadline bare day",
        {"kind": "deadline", "tool": "a/x", "argument": "due", "value": "2026-05-01"},
        [C("a/x", due="2026-05-01T15:00")],
        "",
        (False, True),
        (False, True),
    ),
    (
        "deadline one of two late",
        {"kind": "deadline", "tool": "a/x", "argument": "due", "value": "2026-05-01T12:00"},
        [C("a/x", due="2026-05-01T11:00"), C("a/x", due="2026-05-02T11:00")],
        "",
        (False, True),
        (False, False),
    ),
    (
        "deadline never called",
        {"kind": "deadline", "tool": "a/x", "argument": "due", "value": "2026-05-01T12:00"},
        [],
        "",
        (False, False),
        (False, False),
    ),
    ("budget ok", BE, [C("a/x")], "", (True, True), (True, True)),
    ("budget over", {**BE, "value": 10}, [C("a/x")], "", (False, False), (False, False)),
    (
        "budget from args",
        BE,
        [C("a/x", result={"ok": True}, total="$60")],
        "",
        (False, False),
        (False, False),
    ),
    ("budget never called", BE, [], "", (False, True), (False, True)),
    ("budget no amount", BE, [C("a/x", result={"ok": True})], "", (False, None), (False, None)),
    (
        "excludes list",
        {"kind": "argument_excludes", "tool": "a/x", "argument": "to", "value": ["p2"]},
        [C("a/x", to=["p1", "p2"])],
        "",
        (False, False),
        (False, False),
    ),
    (
        "excludes ok",
        {"kind": "argument_excludes", "tool": "a/x", "argument": "to", "value": ["p3"]},
        [C("a/x", to=["p1", "p2"])],
        "",
        (True, True),
        (True, True),
    ),
    (
        "excludes case",
        {"kind": "argument_excludes", "tool": "a/x", "argument": "to", "value": ["P2"]},
        [C("a/x", to="p2")],
        "",
        (True, False),
        (False, False),
    ),
    (
        "excludes failed attempt",
        {"kind": "argument_excludes", "tool": "a/x", "argument": "to", "value": ["p2"]},
        [C("a/x", ok=False, to="p2")],
        "",
        (False, False),
        (False, False),
    ),
    (
        "destructive annotated",
        {"kind": "no_destructive_calls"},
        [C("shop/cancel_order")],
        "",
        (False, False),
        (False, False),
    ),
    (
        "destructive ok",
        {"kind": "no_destructive_calls"},
        [C("shop/view_cart")],
        "",
        (True, True),
        (True, True),
    ),
    (
        "destructive by verb",
        {"kind": "no_destructive_calls"},
        [C("a/delete_x")],
        "",
        (True, False),
        (False, False),
    ),
    ("malformed", {"kind": "max_calls"}, [C("a/x")], "", (False, None), (False, None)),
    (
        "excludes num/str",
        {"kind": "argument_excludes", "tool": "a/x", "argument": "n", "value": [2]},
        [C("a/x", n="2")],
        "",
        (False, True),
        (False, False),
    ),
    (
        "deadline offsets",
        {"kind": "deadline", "tool": "a/x", "argument": "due", "value": "2026-05-01T12:00:00+02:00"},
        [C("a/x", due="2026-05-01T11:00:00Z")],
        "",
        (False, True),
        (False, False),
    ),
    (
        "equals nested arg",
        {"kind": "argument_equals", "tool": "a/x", "argument": "id", "value": "K"},
        [C("a/x", item={"id": "K"})],
        "",
        (False, True),
        (False, False),
    ),
    (
        "budget nested result",
        BE,
        [C("a/x", result={"booking": {"total": 40.0}})],
        "",
        (False, True),
        (True, True),
    ),
    (
        "budget nested over",
        {**BE, "value": 10},
        [C("a/x", result={"booking": {"total": 40.0}})],
        "",
        (False, False),
        (False, False),
    ),
    (
        "deadline bad value",
        {"kind": "deadline", "tool": "a/x", "argument": "due", "value": "soon"},
        [C("a/x", due="2026-05-01")],
        "",
        (False, None),
        (False, None),
    ),
    (
        "deadline bad arg",
        {"kind": "deadline", "tool": "a/x", "argument": "due", "value": "2026-05-01T12:00"},
        [C("a/x", due="2026-05-01T11:00"), C("a/x", due="tomorrow")],
        "",
        (False, True),
        (False, False),
    ),
    ("unknown kind", {"kind": "nope"}, [], "", (None, None), (None, None)),
]


@pytest.mark.parametrize(("name", "form", "calls", "answer", "old", "now"), CASES, ids=[c[0] for c in CASES])
def test_both_sides_give_the_recorded_verdict(name, form, calls, answer, old, now) -> None:
    assert (by_synth(form, calls, answer), by_judge(form, calls, answer)) == now


@pytest.mark.parametrize(
    ("name", "old", "now"), [(c[0], c[4], c[5]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_no_verdict_loosened(name, old, now) -> None:
    for side, before, after in zip(("synth", "judge"), old, now, strict=True):
        if before is False and (name, side) not in LOOSER:
            assert after is False, f"{side} used to say False"


def test_every_taxonomy_kind_has_cases() -> None:
    spec = yaml.safe_load((Environment.resolve().task_synth / "constraints.yaml").read_text())
    kinds = {f["kind"] for t in spec["types"].values() for f in t.get("verification") or []}
    covered = {c[1]["kind"] for c in CASES}
    assert kinds and sorted(kinds - covered) == []
