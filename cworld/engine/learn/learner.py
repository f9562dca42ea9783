"""Learning a server's per-tool rules from its traffic: induce each tool's rule (checks, effects, list or
answer), replay held-out calls through it, let the calls it gets wrong join the evidence and induce again,
until agreement on the held-out calls stops improving. A learned rule that does no better than the rule the
engine already had (the card's family rule, the inferred one) is not proposed: the file says so instead."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.learn.atoms import Hints, server_hints
from cworld.engine.learn.checks import learn_checks, needed_steps
from cworld.engine.learn.diff import records
from cworld.engine.learn.effects import learn_effects
from cworld.engine.learn.reads import learn_answer, learn_list, made_answer
from cworld.engine.learn.replay import Agreement, agreement, run_on
from cworld.engine.learn.scope import Scope
from cworld.engine.learn.traffic import Observation, Traffic, split
from cworld.engine.rules.spec import Rule
from cworld.engine.rules.spec import parse_rule as _parse
from cworld.errors import ContentError

MAX_ROUNDS = 4
#: (tool, the offline learner's rule, its evidence) -> a model's draft of the rule, or None
Drafter = Callable[[ToolSpec, Rule | None, list[Observation]], Rule | None]


@dataclass
class ToolLearning:
    """What learning found for one tool, for the file a person reviews."""

    tool: str
    rule: Rule | None
    calls: int
    source: str = "traffic"
    """traffic (the offline learner), model (a model's draft that replayed better), base (the engine's own
    rule did as well, nothing proposed), none (no calls)"""
    support: dict[str, int] = field(default_factory=dict)
    held: Agreement = field(default_factory=Agreement)
    base: Agreement = field(default_factory=Agreement)
    final: Agreement = field(default_factory=Agreement)
    rounds: int = 0


@dataclass
class ServerLearning:
    server: str
    tools: list[ToolLearning]
    calls: int


def induce(tool: ToolSpec, calls: list[Observation], hints: Hints | None = None) -> tuple[Rule, dict[str, int]]:
    """One rule from these calls, and how many calls support each of its steps."""
    usable = [o for o in calls if o.before is not None]
    scopes = {id(o): Scope(o) for o in usable}
    learned = learn_checks(tool, usable, scopes, hints)
    support = {f"check {i + 1} ({_step_name(s)})": n for i, (s, n) in enumerate(zip(learned.steps, learned.support,
                                                                                    strict=True))}
    oks = [o for o in usable if o.valid and o.verdict == "ok"]
    writes = not tool.annotations.read_only_hint
    names = [b.name for b in learned.candidates] + (records(usable[0].before or {}) if usable else [])
    effects = learn_effects(oks, scopes, names) if writes else []
    used = set().union(*(e.names for e in effects)) if effects else set()
    steps = [*learned.steps, *needed_steps(learned, used)]
    rule = Rule(op="action" if writes else "get", check=steps, do=[e.effect for e in effects],
                read_only=None if writes else True)
    rule = _without_crashes(rule, oks)
    for i, e in enumerate(rule.do):
        support[f"effect {i + 1} ({_effect_name(e)})"] = next((x.support for x in effects if x.effect is e), 0)
    if not writes:
        listing, n = learn_list(oks, scopes)
        if listing is not None:
            rule.list_ = listing
            support["list"] = n
    elif rule.do:
        after = {id(o): Scope(o, state=_after_rule(rule, o)) for o in oks}
        made = made_answer(oks) if any(e.create is not None for e in rule.do) else None
        answer, n = (made, len(oks)) if made is not None else learn_answer(oks, after)
        if answer is not None:
            rule.answer = answer
            support["answer"] = n
        else:  # a write that answers a page of records after its change (the cart with its lines)
            listing, n = learn_list(oks, {id(o): Scope(o, state=o.after) for o in oks if o.after is not None})
            if listing is not None and n >= max(2, len(oks) * 3 // 4):
                rule.list_ = listing
                support["list"] = n
    return _valid(rule, tool), support


def _after_rule(rule: Rule, obs: Observation) -> dict[str, Any]:
    return run_on(rule, obs)[1]


def _without_crashes(rule: Rule, oks: list[Observation]) -> Rule:
    """The rule less the effects that fail to run on a call the service accepted (a rule error would answer
    `server_crash`, a refusal the service never made)."""
    kept: list[Any] = []
    for effect in rule.do:
        trial = rule.model_copy(update={"do": [*kept, effect]})
        if all(run_on(trial, o)[0] != "server_crash" for o in oks):
            kept.append(effect)
    return rule.model_copy(update={"do": kept})


def _valid(rule: Rule, tool: ToolSpec) -> Rule:
    """The rule as a rule file holds it, validated as one is on load."""
    try:
        return _parse(rule.model_dump(by_alias=True, exclude_none=True, exclude={"origin"}), f"learned: {tool.name}")
    except ContentError:  # a step or effect whose text does not compile: the rule without it
        for name in ("check", "do"):
            parts = getattr(rule, name)
            for i in range(len(parts)):
                trial = rule.model_copy(update={name: parts[:i] + parts[i + 1:]})
                try:
                    _parse(trial.model_dump(by_alias=True, exclude_none=True, exclude={"origin"}), "learned")
                except ContentError:
                    continue
                return _valid(trial, tool)
        return Rule(op=rule.op, read_only=rule.read_only)


def _step_name(step: Any) -> str:
    for kind in ("auth", "find", "fail", "let"):
        value = getattr(step, kind)
        if value is not None:
            return f"{kind} {value if not isinstance(value, dict) else ', '.join(value)}"[:80]
    return "step"


def _effect_name(effect: Any) -> str:
    for kind in ("create", "set", "add", "append", "delete", "each"):
        value = getattr(effect, kind)
        if value is not None:
            return f"{kind} {value}"[:80]
    return "effect"


def learn_tool(tool: ToolSpec, calls: list[Observation], base: Rule | None, *, every: int = 3,
               context: dict[str, Any] | None = None, drafter: Drafter | None = None,
               hints: Hints | None = None) -> ToolLearning:
    """Induce on all but every `every`-th call, replay those, let the wrong ones join the evidence and induce
    again while held-out agreement improves; the final rule is induced from every call."""
    context = context or {}
    out = ToolLearning(tool.name, None, len(calls))
    if not calls:
        out.source = "none"
        return out
    kept, held = split(calls, every)
    evidence = list(kept)
    rule, _ = induce(tool, evidence, hints)
    score = agreement(rule, held)
    for _ in range(MAX_ROUNDS):
        out.rounds += 1
        if not score.wrong_calls:
            break
        evidence = [*evidence, *[o for o in score.wrong_calls if o not in evidence]]
        better, _ = induce(tool, evidence, hints)
        again = agreement(better, held)
        if again.score <= score.score:
            break
        rule, score = better, again
    out.held = score
    rule, out.support = induce(tool, calls, hints)
    out.final = agreement(rule, calls)
    out.base = agreement(base, calls, **context)
    out.rule = rule
    for merged in with_card_checks(rule, base):
        tried = agreement(merged, calls, **context)
        if tried.score > out.final.score:
            out.rule, out.final = merged, tried
            out.support["checks from the card's rule"] = len(base.check) if base is not None else 0
    if drafter is not None:
        drafted = drafter(tool, rule, calls)
        if drafted is not None:
            tried = agreement(drafted, calls)
            if tried.score > out.final.score:
                out.rule, out.final, out.source = drafted, tried, "model"
    if out.base.score >= out.final.score and base is not None:
        out.source = "base"
    return out


def with_card_checks(rule: Rule, base: Rule | None) -> list[Rule]:
    """The learned rule with the engine's own rule's checks before or after its own: a card may state a
    refusal the traffic showed too rarely to learn (a duplicate email), while its effects are the card's guess."""
    if base is None or not base.check:
        return []
    return [rule.model_copy(update={"check": [*base.check, *rule.check]}),
            rule.model_copy(update={"check": [*rule.check, *base.check]})]


def learn_server(traffic: Traffic, base: Callable[[ToolSpec], Rule | None], *, every: int = 3,
                 context: dict[str, Any] | None = None, drafter: Drafter | None = None) -> ServerLearning:
    """Every tool of the server that the traffic called."""
    tools = []
    hints = server_hints(traffic.calls)
    for tool in traffic.tools:
        calls = traffic.of(tool.name)
        tools.append(learn_tool(tool, calls, base(tool), every=every, context=context, drafter=drafter, hints=hints))
    _share_checks(traffic, tools)
    return ServerLearning(traffic.server, tools, len(traffic.calls))


def _share_checks(traffic: Traffic, tools: list[ToolLearning]) -> None:
    """An argument name means the same on every tool of a server: a check on the arguments and the state
    alone that a sibling tool learned (a path outside the allowed folder) is put first in a tool's rule that
    takes those arguments, where its calls replay at least as well (the traffic may never have sent this tool
    such a path)."""
    learned = [(t, t.rule) for t in tools if t.rule is not None and t.source in ("traffic", "model")]
    shared = [(t.tool, c) for t, rule in learned for c in rule.check if c.fail is not None and _on_args(c.fail, rule)]
    by_name = {t.name: t for t in traffic.tools}
    for t, rule in learned:
        props = set((by_name[t.tool].input_schema or {}).get("properties") or {})
        calls = traffic.of(t.tool)
        have = {c.fail for c in rule.check}
        for source, check in shared:
            names = set(re.findall(r"args\['(\w+)'\]", check.fail or ""))
            if source == t.tool or check.fail in have or not names or not names <= props:
                continue
            trial = rule.model_copy(update={"check": [check, *rule.check]})
            tried = agreement(trial, calls)
            if tried.score >= t.final.score:
                t.rule, t.final, rule = trial, tried, trial
                t.support[f"check from {source}"] = 0
                have.add(check.fail)


def _on_args(expr: str, rule: Rule) -> bool:
    """The condition names no record the rule's own steps bind (only arguments and the state)."""
    bound = {c.find for c in rule.check if c.find} | {k for c in rule.check for k in (c.let or {})}
    return not any(re.search(rf"\b{re.escape(b)}\b", expr) for b in bound)
