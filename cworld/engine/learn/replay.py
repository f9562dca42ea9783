"""Replaying recorded calls through a rule with the rules engine's interpreter (`rules.run.run_rule`), each
on the state the service had just before it: does the rule refuse what the service refused, with the same
class, and change the same state leaves to the same values? What it gets wrong is shown to a person."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cworld.engine.learn.diff import changed_leaves
from cworld.engine.learn.traffic import Observation
from cworld.engine.rules.run import CallContext, run_rule
from cworld.engine.rules.spec import Def, Rule
from cworld.sandbox.framework.session import plain_copy

_RESULT_CLASSES = frozenset({"invalid_args", "not_found", "auth", "rate_limit", "timeout", "unavailable", "business",
                             "server_crash"})


@dataclass
class Agreement:
    """How a rule fared on some calls."""

    calls: int = 0
    verdict: int = 0
    agree: int = 0
    live_leaves: int = 0
    reproduced: int = 0
    unwanted: int = 0
    wrong: list[str] = field(default_factory=list)
    wrong_calls: list[Observation] = field(default_factory=list)

    @property
    def score(self) -> float:
        """Calls agreed on, and changes reproduced minus changes made that the service did not make."""
        return self.agree + 0.5 * (self.reproduced - self.unwanted)

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "verdict": self.verdict, "agree": self.agree, "live_changed_leaves": self.live_leaves,
                "reproduced_leaves": self.reproduced, "unwanted_leaves": self.unwanted}


def result_class(kind: str | None) -> str:
    from cworld.sandbox.framework.tools import ERROR_CLASS_OF_KIND

    kind = kind or "business"
    return kind if kind in _RESULT_CLASSES else ERROR_CLASS_OF_KIND.get(kind, "business")


def run_on(rule: Rule | None, obs: Observation, *, kinds: dict[str, str] | None = None,
           consts: dict[str, Any] | None = None, defs: dict[str, Def] | None = None) -> tuple[str, dict[str, Any]]:
    """(the verdict, the state after) of a rule on the call's state before (no rule: accepted, no change)."""
    state = _copied(obs)
    if rule is None:
        return "ok", state
    props = (obs.tool.input_schema or {}).get("properties") or {}
    ctx = CallContext(state, {**dict.fromkeys(props), **obs.arguments}, obs.now, kinds=kinds or {},
                      ids=dict(obs.ids), consts={**(consts or {}), **obs.reference}, defs=defs or {})
    outcome = run_rule(rule, ctx)
    if outcome.error_class:
        return result_class(outcome.error_class), _copied(obs)
    return "ok", state


def _copied(obs: Observation) -> dict[str, Any]:
    """The state before the call to run a rule on: the service's entries copied, the reference data shared
    (the world's own for the call's seed, read-only)."""
    return {k: v if k in obs.reference else plain_copy(v) for k, v in (obs.before or {}).items()}


def agreement(rule: Rule | None, calls: list[Observation], **context: Any) -> Agreement:
    """The rule against the calls whose arguments pass the schema (the engine refuses the rest itself)."""
    out = Agreement()
    for obs in calls:
        if not obs.valid or obs.before is None:
            continue
        verdict, state = run_on(rule, obs, **context)
        live = obs.verdict
        out.calls += 1
        same_verdict = (verdict == "ok") == (live == "ok")
        out.verdict += same_verdict
        right = same_verdict and (live == "ok" or verdict == live)
        out.agree += right
        if obs.after is not None:
            wanted = changed_leaves(obs.before, obs.after)
            made = changed_leaves(obs.before, state)
            out.live_leaves += len(wanted)
            out.reproduced += sum(1 for p, v in wanted.items() if made.get(p) == v and not _volatile(p))
            out.reproduced += sum(1 for p in wanted if _volatile(p) and p in made)
            out.unwanted += len(set(made) - set(wanted))
            right = right and set(made) == set(wanted)
        if not right:
            out.wrong.append(f"{obs.origin}: live {live}, rule {verdict}")
            out.wrong_calls.append(obs)
    return out


def _volatile(path: str) -> bool:
    """A leaf whose value a rule cannot know in advance (a fresh token): its change counts. A time is no such
    leaf: `now` moved by the service's own period (a token's expiry) is known, and a wrong one refuses calls."""
    last = path.rsplit("/", 1)[-1]
    return last in ("value", "token") or last.endswith("token")
