"""Per-tool divergence between two runs, from paired calls: where the World Engine departs from live tools.

Episodes pair when they share agent, task, seed and fault policy. Within a pair, the k-th tool call of
one episode pairs with the k-th of the other when both call the same tool (searches are not tool calls
here). For each paired call the two *raw* results are compared (what the backends returned, before the
controller's faults, which are the same on both sides by construction):

- **schema validity**: the result's payload validates against the tool's output schema (synthesized and,
  for reference, live: a live result that fails its own schema means the schema is loose, not the engine);
- **error agreement**: both sides failed or both succeeded;
- **key-path overlap** (key-path agreement): Jaccard overlap of the two payloads' key paths (list items
  collapsed), when both succeeded with a JSON payload;
- **type agreement**: the share of the key paths both payloads have whose JSON types agree (same case);
- **same arguments**: whether the agent sent the same arguments (when not, the results may differ for a
  good reason: an earlier synthesized answer gave it other ids).

A tool's divergence is 1 - the mean of its error agreement, key-path overlap and synthesized schema
validity (the parts it has). Categories add up their tools' calls; a tool's category is the category card
the World Engine assigns it when the caller gives `category_of` (the CLI does), else the tool's own
`category`. Tools and categories are listed by divergence x paired calls: the divergent calls each one
contributes, i.e. what limits fidelity most.

`call_agreement` computes the same per-call agreement (error, key paths, types) for any pairs of results
by category, for callers that pair calls themselves (`benchmarks/engine_fidelity.py` replays recorded live
calls through the engine); `cworld.fidelity.text.agreement_lines` prints it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cworld.agents.toolbox import SEARCH_TOOL
from cworld.data_model import Step, ToolResult, ToolSpec, Trajectory
from cworld.schemas.validation import validation_error
from cworld.schemas.walk import key_paths

UNCATEGORIZED = "uncategorized"


@dataclass(frozen=True)
class PairedCall:
    tool: str
    same_args: bool
    error_agree: bool
    key_overlap: float | None
    type_agree: float | None
    schema_ok_b: bool | None
    schema_ok_a: bool | None
    outcome: str
    """'both ok', 'both error', 'a error only', 'b error only'"""


@dataclass
class Divergence:
    """Aggregates of paired calls for one tool or one category."""

    name: str
    calls: int = 0
    same_args: int = 0
    error_agree: int = 0
    key_overlap: list[float] = field(default_factory=list)
    type_agree: list[float] = field(default_factory=list)
    schema_b: list[bool] = field(default_factory=list)
    schema_a: list[bool] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)

    def add(self, call: PairedCall) -> None:
        self.calls += 1
        self.same_args += call.same_args
        self.error_agree += call.error_agree
        if call.key_overlap is not None:
            self.key_overlap.append(call.key_overlap)
        if call.type_agree is not None:
            self.type_agree.append(call.type_agree)
        if call.schema_ok_b is not None:
            self.schema_b.append(call.schema_ok_b)
        if call.schema_ok_a is not None:
            self.schema_a.append(call.schema_ok_a)
        self.outcomes[call.outcome] = self.outcomes.get(call.outcome, 0) + 1

    def summary(self) -> dict[str, Any]:
        parts = {
            "error_agreement": _share(self.error_agree, self.calls),
            "key_overlap": _mean(self.key_overlap),
            "schema_valid_b": _mean(self.schema_b),
        }
        known = [v for v in parts.values() if v is not None]
        return {
            "name": self.name,
            "calls": self.calls,
            **parts,
            "type_agreement": _mean(self.type_agree),
            "both_ok": self.outcomes.get("both ok", 0),
            "schema_valid_a": _mean(self.schema_a),
            "same_args": _share(self.same_args, self.calls),
            "outcomes": dict(self.outcomes),
            "divergence": round(1.0 - sum(known) / len(known), 4) if known else None,
        }


@dataclass
class CallDivergence:
    tools: list[dict[str, Any]]
    categories: list[dict[str, Any]]
    episodes_paired: int
    calls_a: int
    calls_paired: int


def pair_episodes(a: Iterable[Trajectory], b: Iterable[Trajectory]) -> list[tuple[Trajectory, Trajectory]]:
    def key(t: Trajectory) -> tuple[str, str, int, str]:
        return (t.agent, t.task_id, t.seed, t.policy)

    index = {key(t): t for t in b if t.status != "infra_error"}
    return [(t, index[key(t)]) for t in a if t.status != "infra_error" and key(t) in index]


CategoryOf = Callable[[ToolSpec], str]


def call_divergence(
    a: Iterable[Trajectory], b: Iterable[Trajectory], tools: Mapping[str, ToolSpec],
    category_of: CategoryOf | None = None,
) -> CallDivergence:
    by_tool: dict[str, Divergence] = {}
    by_category: dict[str, Divergence] = {}
    pairs = pair_episodes(a, b)
    calls_a = paired = 0
    for ta, tb in pairs:
        steps_a, steps_b = _tool_steps(ta), _tool_steps(tb)
        calls_a += len(steps_a)
        for sa, sb in zip(steps_a, steps_b, strict=False):
            call = paired_call(sa, sb, tools)
            if call is None:
                continue
            paired += 1
            spec = tools.get(call.tool)
            category = _category(spec, category_of)
            by_tool.setdefault(call.tool, Divergence(call.tool)).add(call)
            by_category.setdefault(category, Divergence(category)).add(call)
    return CallDivergence(
        _ranked(by_tool.values()), _ranked(by_category.values()), len(pairs), calls_a, paired
    )


def _category(spec: ToolSpec | None, category_of: CategoryOf | None) -> str:
    if spec is None:
        return UNCATEGORIZED
    return (category_of(spec) if category_of is not None else spec.category) or UNCATEGORIZED


def call_agreement(pairs: Iterable[tuple[str, ToolResult, ToolResult]]) -> list[dict[str, Any]]:
    """Per category, then `ALL`: how far results `b` agree with results `a` of the same calls, from
    (category, a, b) triples. Rows as `Divergence.summary()` (schema validity is left to the caller)."""
    by_category: dict[str, Divergence] = {}
    total = Divergence("ALL")
    for category, ra, rb in pairs:
        error_agree, overlap, types = compare_results(ra, rb)
        call = PairedCall(category, True, error_agree, overlap, types, None, None, _outcome(ra, rb))
        by_category.setdefault(category, Divergence(category)).add(call)
        total.add(call)
    rows = [by_category[name].summary() for name in sorted(by_category)]
    return [*rows, total.summary()] if rows else []


def compare_results(ra: ToolResult, rb: ToolResult) -> tuple[bool, float | None, float | None]:
    """(error agreement, key-path overlap, type agreement) of two results of one call; the last two only
    when both succeeded with a JSON payload."""
    pa, pb = payload(ra), payload(rb)
    if ra.is_error or rb.is_error or pa is None or pb is None:
        return ra.is_error == rb.is_error, None, None
    shape_a, shape_b = key_paths(pa), key_paths(pb)
    shared = shape_a.keys() & shape_b.keys()
    types = sum(shape_a[p] == shape_b[p] for p in shared) / len(shared) if shared else None
    return True, _jaccard(set(shape_a), set(shape_b)), types


def _weight(row: dict[str, Any]) -> float:
    """Divergent calls expected from a tool: what it costs the ranking (a tool called once matters less)."""
    return (row["divergence"] or 0.0) * row["calls"]


def paired_call(sa: Step, sb: Step, tools: Mapping[str, ToolSpec]) -> PairedCall | None:
    """The comparison of two calls, or None when they are not the same tool, a fault kept one from
    reaching its backend, or the live side could not run the tool at all (a schema-only tool answers
    `unavailable` live: there is no real answer to agree with)."""
    assert sa.tool_call is not None and sb.tool_call is not None
    if sa.tool_call.tool != sb.tool_call.tool or sa.raw_result is None or sb.raw_result is None:
        return None
    ra, rb = sa.raw_result, sb.raw_result
    if ra.error_class == "unavailable":
        return None
    spec = tools.get(sa.tool_call.tool)
    schema = spec.output_schema if spec is not None else None
    pa, pb = payload(ra), payload(rb)
    error_agree, overlap, types = compare_results(ra, rb)
    return PairedCall(
        sa.tool_call.tool,
        sa.tool_call.arguments == sb.tool_call.arguments,
        error_agree,
        overlap,
        types,
        _schema_ok(schema, rb, pb),
        _schema_ok(schema, ra, pa),
        _outcome(ra, rb),
    )


def payload(result: ToolResult) -> Any | None:
    """The JSON payload of a result: its structured content, else its text when that is JSON."""
    if result.structured_content is not None:
        return result.structured_content
    try:
        parsed = json.loads(result.text)
    except (json.JSONDecodeError, ValueError):
        return None
    return parsed if isinstance(parsed, dict | list) else None


def _tool_steps(trajectory: Trajectory) -> list[Step]:
    return [
        s
        for s in trajectory.steps
        if s.kind == "tool" and s.tool_call is not None and s.tool_call.tool != SEARCH_TOOL
    ]


def _schema_ok(schema: dict[str, Any] | None, result: ToolResult, body: Any | None) -> bool | None:
    if not schema or result.is_error:
        return None
    if body is None:
        return False
    return validation_error(schema, body) is None


def _outcome(ra: ToolResult, rb: ToolResult) -> str:
    if ra.is_error and rb.is_error:
        return "both error"
    if ra.is_error or rb.is_error:
        return "a error only" if ra.is_error else "b error only"
    return "both ok"


def _jaccard(x: set[str], y: set[str]) -> float:
    return len(x & y) / len(x | y) if x | y else 1.0


def _share(n: int, d: int) -> float | None:
    return round(n / d, 4) if d else None


def _mean(values: list[float] | list[bool]) -> float | None:
    return round(sum(float(v) for v in values) / len(values), 4) if values else None


def _ranked(items: Iterable[Divergence]) -> list[dict[str, Any]]:
    rows = [d.summary() for d in items]
    return sorted(rows, key=lambda r: (-_weight(r), -(r["divergence"] or 0.0), r["name"]))
