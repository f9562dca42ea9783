"""What a revision is told when its gold plan failed on execution: the step, what it really sent, and what
the results it referenced really hold.

A reason like "unresolved {{find.contacts.0.id}}: no such field" alone leaves the drafter to guess the
right key again. Here the failed step comes with its arguments as resolved, and each result it referenced
with its keys at the place the reference stopped (and its whole shape), so the next draft can name a key
that exists.
"""

from __future__ import annotations

import json
import re
from typing import Any

from cworld.agents.references import UnresolvedReference, lookup, referenced_steps, resolve
from cworld.synth.draft import Draft
from cworld.synth.plan_exec import CallRecord, ExecutionTrace
from cworld.synth.shapes import cut, keys_at, value_shape

_PART = re.compile(r"\.[^.\[\]]+|\[[^\]]*\]")
ARGUMENT_CHARS = 600


def execution_feedback(reason: str, draft: Draft, trace: ExecutionTrace | None) -> str:
    """The feedback lines for a plan that failed or broke its constraints: the reason, then, for a failed
    step, its resolved arguments and the referenced results' keys."""
    lines = [f"- [execution] {reason}"]
    failed = _failed_call(trace)
    if trace is not None and failed is not None:
        lines += ["  " + line for line in failed_step_lines(failed, draft, trace.results)]
    return "\n".join(lines)


def failed_step_lines(call: CallRecord, draft: Draft, results: dict[str, Any]) -> list[str]:
    step = next((s for s in draft.gold_plan if s.id == call.step_id), None)
    written = step.arguments if step is not None else call.arguments
    lines = []
    try:
        sent = resolve(written, results)
        lines.append(f"- step {call.step_id} sent (references resolved): {_json(sent)}")
    except UnresolvedReference as exc:
        lines.append(f"- step {call.step_id} could not be sent: {_where_it_stopped(exc, draft, results)}")
    for ref in referenced_steps(written):
        lines.append(f"- {_result_line(ref, draft, results)}")
    return lines


def _failed_call(trace: ExecutionTrace | None) -> CallRecord | None:
    if trace is None:
        return None
    return next((c for c in reversed(trace.calls) if not c.ok), None)


def _where_it_stopped(exc: UnresolvedReference, draft: Draft, results: dict[str, Any]) -> str:
    reference = f"{{{{{exc.step_id}{exc.path}}}}}"
    if exc.step_id not in results:
        have = ", ".join(results) or "none"
        return f"{reference} names step {exc.step_id!r}, which has no result before this step (steps with results: {have})"
    parts = _PART.findall(exc.path)
    parent = "".join(parts[:-1])
    try:
        holder = lookup(results, exc.step_id, parent)
    except UnresolvedReference:  # cannot happen: the walk reached the last part
        return f"{reference}: {exc.reason}"
    place = f"{exc.step_id}{parent}"
    return f"{reference} fails at {parts[-1] if parts else '(the whole result)'!r} ({exc.reason}); at {place} there is {keys_at(holder)}"


def _result_line(step_id: str, draft: Draft, results: dict[str, Any]) -> str:
    tool = next((s.tool for s in draft.gold_plan if s.id == step_id), "?")
    if step_id not in results:
        return f"step {step_id} ({tool}) has no result to read"
    return f"step {step_id} ({tool}) returned: {value_shape(results[step_id])}"


def _json(value: Any) -> str:
    return cut(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str), ARGUMENT_CHARS)
