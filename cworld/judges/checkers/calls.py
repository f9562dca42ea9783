"""Constraint checkers that read which tools were called, how often and in what order.

Budgets count every call the agent is accountable for (failed ones included, infrastructure failures
not: those are not its calls), from the start of the episode: a budget is about the whole task.
Behavioural rules ("from now on, do not delete anything") count only the calls made after the
constraint arrived (`ctx.calls_in_scope`). Forms and their fields: `task_synth/constraints.yaml`.
"""

from __future__ import annotations

from typing import Any

from cworld.judges.calls import CallRecord
from cworld.judges.checkers.context import CheckContext, Verdict, as_list, tool_matches
from cworld.judges.checkers.registry import checker
from cworld.judges.toolkind import is_destructive, is_read_only


@checker("max_calls")
def _max_calls(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    return len(ctx.agent_calls) <= int(v["value"])


@checker("max_turns")
def _max_turns(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    return max((s.turn for s in ctx.trajectory.steps), default=0) <= int(v["value"])


@checker("max_searches")
def _max_searches(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    return sum(1 for s in ctx.trajectory.steps if s.kind == "search") <= int(v["value"])


@checker("max_failed_calls")
def _max_failed(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """Failures the agent caused (syntactic errors and execution failures; injected faults excluded)."""
    own = [c for c in ctx.agent_calls if c.outcome in ("syntactic_error", "execution_failure")]
    return len(own) <= int(v["value"])


@checker("no_destructive_calls")
def _no_destructive(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """No delete/cancel/... call (attempts count), except to tools the task itself asks for or `allow` lists."""
    allowed = ctx.task_tools | set(as_list(v.get("allow")))
    return not any(is_destructive(c, ctx.tools) and not any(tool_matches(c.tool, a) for a in allowed)
                   for c in ctx.calls_in_scope)


@checker("no_repeated_calls")
def _no_repeats(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """No two successful calls share the tool and the arguments."""
    seen: list[tuple[str, dict[str, Any]]] = []
    for call in ctx.succeeded:
        key = (call.tool, call.arguments)
        if key in seen:
            return False
        seen.append(key)
    return True


@checker("reads_before_writes")
def _reads_first(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """For each server in `value` (all servers called when empty), its first call is a read-only tool."""
    servers = as_list(v.get("value")) or sorted({c.server for c in ctx.calls_in_scope})
    for server in servers:
        first = next((c for c in ctx.calls_in_scope if c.server == server), None)
        if first is not None and not _reads(first, ctx):
            return False
    return True


def _reads(call: CallRecord, ctx: CheckContext) -> bool:
    """Proving takes only the tool's own annotation as evidence; a judge also trusts its name (`get_...`)."""
    if ctx.proving:
        spec = ctx.tools.get(call.tool)
        return spec is not None and bool(spec.annotations.read_only_hint)
    return is_read_only(call, ctx.tools)


@checker("must_use_tools")
def _must_use(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """Every tool in `value` was called successfully (ids, bare names or globs)."""
    wanted = as_list(v.get("value"))
    if not wanted:
        return None
    return all(any(tool_matches(c.tool, w) for c in ctx.succeeded) for w in wanted)


@checker("forbidden_tools")
def _forbidden(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    banned = as_list(v.get("value"))
    return not any(tool_matches(c.tool, b) for c in ctx.calls_in_scope for b in banned)


@checker("min_servers")
def _min_servers(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """Distinct servers that answered successfully (information diversity as a requirement)."""
    return len({c.server for c in ctx.succeeded}) >= int(v["value"])


@checker("max_servers")
def _max_servers(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    return len({c.server for c in ctx.calls_in_scope}) <= int(v["value"])


@checker("allowed_servers")
def _allowed_servers(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """Every call goes to a server listed in `value` (searching the tool index is not a server call)."""
    allowed = set(as_list(v.get("value")))
    return all(c.server in allowed for c in ctx.calls_in_scope)


@checker("call_order")
def _call_order(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """The first successful call of `before` comes before the first call (any outcome) of `after`;
    an `after` never called breaks nothing (but shows nothing when proving)."""
    after = next((c.position for c in ctx.agent_calls if tool_matches(c.tool, str(v["after"]))), None)
    if after is None:
        return not ctx.proving
    before = next((c.position for c in ctx.agent_calls if not c.failed and tool_matches(c.tool, str(v["before"]))),
                  None)
    return before is not None and before < after


@checker("tool_order")
def _tool_order(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """The first successful calls of the tools in `value` come in that order; a missing one breaks it."""
    firsts: list[int] = []
    for wanted in as_list(v.get("value")):
        hit = next((c.position for c in ctx.succeeded if tool_matches(c.tool, wanted)), None)
        if hit is None:
            return False
        firsts.append(hit)
    return firsts == sorted(firsts)
