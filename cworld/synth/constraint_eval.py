"""Evaluate a constraint's `verification` form against a run: its calls in order and its final answer.

Synthesis uses it to prove that the gold plan satisfies every verifiable constraint of its own task
(a constraint the reference solution breaks is a broken task). The forms are those of
`task_synth/constraints.yaml`; a form this module does not know evaluates to None ("cannot tell").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from cworld.data_model import Constraint, ToolSpec
from cworld.synth.plan_exec import CallRecord

Verdict = tuple[bool | None, str]
Checker = Callable[[dict[str, Any], Sequence[CallRecord], str, dict[str, ToolSpec]], Verdict]


def evaluate(
    constraint: Constraint, calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    verification = constraint.verification or {}
    checker = CHECKERS.get(str(verification.get("kind")))
    if checker is None:
        return None, "no machine check for this constraint"
    try:
        return checker(verification, calls, answer, tools)
    except (TypeError, ValueError, KeyError) as exc:
        return False, f"malformed verification ({type(exc).__name__}: {exc})"


def _ok(calls: Sequence[CallRecord], tool: str | None = None) -> list[CallRecord]:
    return [c for c in calls if c.ok and (tool is None or c.tool == tool)]


def _max_calls(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    return len(calls) <= int(v["value"]), f"{len(calls)} calls, limit {v['value']}"


def _min_servers(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    servers = {c.tool.split("/", 1)[0] for c in _ok(calls)}
    return len(servers) >= int(v["value"]), f"{len(servers)} servers, need {v['value']}"


def _allowed(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    outside = sorted({c.tool for c in calls if c.tool.split("/", 1)[0] not in set(v["value"])})
    return not outside, f"calls outside the allowed servers: {outside}" if outside else "all calls allowed"


def _mentions(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    missing = [str(x) for x in v["value"] if str(x).lower() not in answer.lower()]
    return not missing, f"answer lacks {missing}" if missing else "answer mentions every fact"


def _contains(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    return str(
        v["value"]
    ) in answer, f"answer {'has' if str(v['value']) in answer else 'lacks'} {v['value']!r}"


def _format(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    if v["value"] != "bullets":
        return None, f"format {v['value']!r} needs a judge"
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    good = bool(lines) and all(line.startswith(("- ", "* ")) for line in lines)
    return good, "every line is a bullet" if good else "some lines are not bullets"


def _max_words(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    words = len(answer.split())
    return words <= int(v["value"]), f"{words} words, limit {v['value']}"


def _no_repeats(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    seen: set[str] = set()
    for call in _ok(calls):
        key = call.tool + json.dumps(call.arguments, sort_keys=True, default=str)
        if key in seen:
            return False, f"{call.tool} repeated with the same arguments"
        seen.add(key)
    return True, "no call repeated"


def _reads_first(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    for server in v["value"]:
        first = next((c for c in calls if c.tool.split("/", 1)[0] == server), None)
        spec = tools.get(first.tool) if first else None
        if first is not None and not (spec and spec.is_read_only):
            return False, f"first call on {server} is {first.tool}, which writes"
    return True, "every listed server was read before written"


def _order(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    before = next((i for i, c in enumerate(calls) if c.ok and c.tool == v["before"]), None)
    after = next((i for i, c in enumerate(calls) if c.tool == v["after"]), None)
    if after is None:
        return False, f"{v['after']} never called"
    good = before is not None and before < after
    return good, f"{v['before']} {'precedes' if good else 'does not precede'} {v['after']}"


def _equals(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    values = [c.arguments.get(v["argument"]) for c in _ok(calls, v["tool"])]
    good = any(_same(x, v["value"]) for x in values)
    return good, f"{v['tool']}.{v['argument']} was {values}, wanted {v['value']!r}"


def _deadline(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    limit = _moment(str(v["value"]))
    values = [c.arguments.get(v["argument"]) for c in _ok(calls, v["tool"])]
    moments = [_moment(str(x)) for x in values if x is not None]
    good = bool(moments) and all(m <= limit for m in moments)
    return good, f"{v['tool']}.{v['argument']} was {values}, deadline {v['value']}"


def _budget(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    found = [_amount(c, v["field"]) for c in _ok(calls, v["tool"])]
    amounts = [a for a in found if a is not None]
    good = bool(amounts) and all(a <= float(v["value"]) for a in amounts)
    return good, f"{v['tool']} spent {amounts}, budget {v['value']}"


def _excludes(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    banned = {str(x) for x in v["value"]}
    for call in calls:
        if call.tool != v["tool"]:
            continue
        given = call.arguments.get(v["argument"])
        items = given if isinstance(given, list) else [given]
        hit = banned & {str(x) for x in items}
        if hit:
            return False, f"{v['tool']}.{v['argument']} used excluded {sorted(hit)}"
    return True, "no excluded value used"


def _no_destructive(
    v: dict[str, Any], calls: Sequence[CallRecord], answer: str, tools: dict[str, ToolSpec]
) -> Verdict:
    bad = [
        c.tool for c in calls if (spec := tools.get(c.tool)) is not None and spec.annotations.destructive_hint
    ]
    return not bad, f"destructive calls: {bad}" if bad else "nothing destructive"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(float(a) - float(b)) < 1e-6
    return str(a).strip().lower() == str(b).strip().lower()


def _moment(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _amount(call: CallRecord, name: str) -> float | None:
    source = call.result if isinstance(call.result, dict) and name in call.result else call.arguments
    value = source.get(name) if isinstance(source, dict) else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    match = re.search(r"-?\d+(?:\.\d+)?", str(value or ""))
    return float(match.group(0)) if match else None


CHECKERS: dict[str, Checker] = {
    "max_calls": _max_calls,
    "min_servers": _min_servers,
    "allowed_servers": _allowed,
    "final_answer_mentions": _mentions,
    "final_answer_contains": _contains,
    "final_answer_format": _format,
    "final_answer_max_words": _max_words,
    "no_repeated_calls": _no_repeats,
    "reads_before_writes": _reads_first,
    "call_order": _order,
    "argument_equals": _equals,
    "deadline": _deadline,
    "budget": _budget,
    "argument_excludes": _excludes,
    "no_destructive_calls": _no_destructive,
}
