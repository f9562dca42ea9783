"""The offline composer: writes a gold plan step by step while running it against a seeded probe session.

Workflow blocks (see `blocks/`) call `step(...)` for each tool call of the plan: the call is recorded
as a `PlanStep` (arguments may hold `{{step_id.path}}` references) and at once executed on the probe, a
session of the task's own world seed, so the block reads real results (real flights, real colleagues,
real cart problems) to decide its next call. A call that fails makes the block fail (`BlockFailed`) and
the drafter tries something else. A second session, `peek`, answers exploratory look-ups that must not
become part of the plan (they would tick the probe's clock and so change what the plan sees).

Every sentence comes from the block's template file (`task_synth/templates/<app>.yaml`, see
`cworld.synth.offline.templates`): a step's rationale is `why.<step key>`, a sub-goal's label
`goals.<sub-goal key>`, a decision's wording `rules.<decision key>`; `text` and `variants` read the rest.

The probe is only the drafter's guide: the task is verified afterwards by re-running the finished plan
in a fresh session (`cworld.synth.verify`).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from cworld.data_model import Constraint, PlanStep, ScenarioEntity, SubGoal
from cworld.synth.offline.templates import Phrasebook, Templates, default_templates
from cworld.synth.plan_exec import PlanRunner


class BlockFailed(Exception):
    """A block could not build a working piece of plan in this world (no route, no contact...)."""


@dataclass(frozen=True)
class Handle:
    """A recorded step: its id (for references) and the probe's result (for decisions)."""

    id: str
    value: Any

    def ref(self, path: str = "") -> str:
        return "{{" + self.id + (f".{path}" if path else "") + "}}"


@dataclass
class Decision:
    """A requirement a block's choices depend on; it becomes a constraint of the task."""

    key: str
    type: str
    description: str
    verification: dict[str, Any] | None
    interacts: list[str] = field(default_factory=list)


@dataclass
class Composer:
    seed: int
    rng: random.Random
    wanted: set[str] = field(default_factory=set)
    steps: list[PlanStep] = field(default_factory=list)
    goals: list[SubGoal] = field(default_factory=list)
    rationales: dict[str, str] = field(default_factory=dict)
    clauses: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    reports: list[tuple[str, str]] = field(default_factory=list)
    presumed: list[ScenarioEntity] = field(default_factory=list)
    templates: Templates = field(default_factory=default_templates)

    def __post_init__(self) -> None:
        self.probe = PlanRunner(self.seed)
        self._peek: PlanRunner | None = None
        self._goal: SubGoal | None = None
        self._book: Phrasebook | None = None

    # --- the words --------------------------------------------------------------------------------------
    def enter(self, app: str) -> None:
        """Let the next block write with `<templates>/<app>.yaml`."""
        self._book = self.templates.book(app)

    @property
    def book(self) -> Phrasebook:
        if self._book is None:
            raise RuntimeError("enter a block's template file before writing")
        return self._book

    def text(self, key: str, **fields: Any) -> str:
        return self.book.text(key, **fields)

    def variants(self, key: str, **fields: Any) -> list[str]:
        return self.book.variants(key, **fields)

    # --- the world --------------------------------------------------------------------------------------
    @property
    def state(self) -> dict[str, Any]:
        """The probe's live state (read it, never write it)."""
        return self.probe.session.state

    @property
    def now(self) -> datetime:
        return self.probe.session.clock.now()

    @property
    def today(self) -> date:
        return self.now.date()

    def peek(self, tool: str, **arguments: Any) -> Any:
        """An exploratory call on a separate session of the same world; None when it fails."""
        if self._peek is None:
            self._peek = PlanRunner(self.seed)
        record = self._peek.run(
            PlanStep(id=f"peek{len(self._peek.trace.calls)}", tool=tool, arguments=arguments)
        )
        return record.result if record.ok else None

    def wants(self, *tools: str) -> bool:
        """Whether the sampled candidates include any of these tools (or, failing that, a coin says so)."""
        return any(t in self.wanted for t in tools) or self.rng.random() < 0.3

    # --- writing the plan -----------------------------------------------------------------------------------
    def subgoal(self, key: str, /, *, after: list[str] | None = None, **fields: Any) -> str:
        """Open a sub-goal labelled `goals.<key>`; it depends on `after` (default: `upstream()`)."""
        goal_id = self._unique(key, {g.id for g in self.goals})
        depends = [g for g in (after if after is not None else self.upstream()) if g]
        description = self.text(f"goals.{key}", **fields)
        self._goal = SubGoal(id=goal_id, description=description, depends_on=list(dict.fromkeys(depends)))
        self.goals.append(self._goal)
        return goal_id

    def upstream(self) -> list[str]:
        """Sub-goals a follow-up builds on: the anchors', and those whose results the summary now quotes."""
        return [*self.facts.get("anchor_goals", []), *self.facts.get("summary_goals", [])]

    def quote_in_summary(self, text: str) -> None:
        """Append to the summary a sentence that quotes the current sub-goal's results."""
        self.facts["summary"] = f"{self.facts.get('summary', '')} {text}".strip()
        if self._goal is not None:
            self.facts.setdefault("summary_goals", []).append(self._goal.id)

    def step(
        self, key: str, tool: str, arguments: dict[str, Any], /, *, why: str | None = None, **fields: Any
    ) -> Handle:
        """Record a call and run it on the probe. Its rationale is `why.<why or key>` (the first one given
        for a tool wins)."""
        step, rationale = self._planned(key, tool, arguments, why, fields)
        record = self.probe.run(step)
        if not record.ok:
            raise BlockFailed(f"{tool} failed in the probe: {record.error}")
        return self._keep(step, rationale, record.result)

    def describe(
        self, key: str, tool: str, arguments: dict[str, Any], /, *, why: str | None = None, **fields: Any
    ) -> Handle:
        """Record a call of a tool that cannot run here (a schema-only catalog): planned, never probed."""
        step, rationale = self._planned(key, tool, arguments, why, fields, "schema-only tool: not executed")
        return self._keep(step, rationale, None)

    def _planned(
        self,
        key: str,
        tool: str,
        arguments: dict[str, Any],
        why: str | None,
        fields: dict[str, Any],
        note: str = "",
    ) -> tuple[PlanStep, str]:
        if self._goal is None:
            raise RuntimeError("open a sub-goal before adding steps")
        step_id = self._unique(key, {s.id for s in self.steps})
        step = PlanStep(id=step_id, tool=tool, arguments=arguments, subgoal=self._goal.id, note=note)
        return step, self.text(f"why.{why or key}", **fields)

    def _keep(self, step: PlanStep, rationale: str, result: Any) -> Handle:
        assert self._goal is not None
        self.steps.append(step)
        if step.tool not in self._goal.tools:
            self._goal.tools.append(step.tool)
        self.rationales.setdefault(step.tool, rationale)
        return Handle(step.id, result)

    def say(self, *variants: str) -> None:
        """Add one clause of the request, picked among phrasings."""
        self.clauses.append(self.rng.choice(variants))

    def presume(self, app: str, kind: str, attributes: dict[str, Any], key: str | None = None) -> None:
        """A fact of the scenario that no seeded state holds (a schema-only catalog's record): only what
        the request states of it. Sandbox records are written from the verified run instead."""
        self.presumed.append(ScenarioEntity(app=app, kind=kind, id=key, attributes=attributes))

    def hint(self, text: str) -> None:
        self.hints.append(text)

    def report(self, label: str, value: str) -> None:
        """A fact the final answer could be asked to state: `label` in words, `value` a reference or
        literal.
        """
        self.reports.append((label, value))

    def value_of(self, value: str) -> Any:
        """A reference resolved against the probe's results (what the verified run will produce too)."""
        from cworld.agents.references import resolve

        return resolve(value, self.probe.trace.results)

    def decide(
        self,
        key: str,
        ctype: str,
        verification: dict[str, Any] | None,
        interacts: list[str] | None = None,
        /,
        *,
        rule: str | None = None,
        **fields: Any,
    ) -> None:
        """A decision worded by `rules.<rule or key>`."""
        description = self.text(f"rules.{rule or key}", **fields)
        self.decisions.append(Decision(key, ctype, description, verification, list(interacts or [])))

    def pick(self, items: list[Any]) -> Any:
        if not items:
            raise BlockFailed("nothing to choose from")
        return self.rng.choice(items)

    @staticmethod
    def _unique(key: str, taken: set[str]) -> str:
        base = re.sub(r"[^a-z0-9_]+", "_", key.lower()).strip("_") or "step"
        candidate, n = base, 2
        while candidate in taken:
            candidate, n = f"{base}_{n}", n + 1
        return candidate

    def constraints(self) -> list[Constraint]:
        """The block decisions as constraints, ids c1.., interactions mapped from keys to ids."""
        kept: list[Decision] = []
        for decision in self.decisions:
            if all(d.description != decision.description for d in kept):
                kept.append(decision)
        ids = {d.key: f"c{i}" for i, d in enumerate(kept, 1)}
        return [
            Constraint(
                id=ids[d.key],
                type=d.type,
                description=d.description,
                verification=d.verification,
                interacts_with=[ids[k] for k in d.interacts if k in ids],
            )
            for d in kept
        ]


@dataclass(frozen=True)
class Block:
    """One piece of workflow. An anchor starts a story and leaves facts (`topic`, `summary`, `when`, ...);
    a follow-up needs the facts named in `needs`. `tools` are every tool the block may call; `app` names
    its module and its template file."""

    name: str
    app: str
    anchor: bool
    tools: frozenset[str]
    run: Any
    needs: frozenset[str] = frozenset()
    gives: frozenset[str] = frozenset()


def anchor(name: str, app: str, tools: frozenset[str], run: Any, gives: str) -> Block:
    """A block that starts a story; `gives` names the facts it leaves, space-separated."""
    return Block(name, app, True, tools, run, gives=frozenset(gives.split()))


def follow_up(name: str, app: str, tools: frozenset[str], run: Any, needs: str) -> Block:
    """A block that builds on an anchor; `needs` names the facts it reads, space-separated."""
    return Block(name, app, False, tools, run, needs=frozenset(needs.split()))


def on_argument(kind: str, tool: str, argument: str, value: Any) -> dict[str, Any]:
    """A verification over one argument of one tool (`argument_equals`, `argument_excludes`, `deadline`)."""
    return {"kind": kind, "tool": tool, "argument": argument, "value": value}


def tools(prefix: str, *names: str) -> frozenset[str]:
    """`prefix` + each name: a block's tools on one server."""
    return frozenset(prefix + n for n in names)
