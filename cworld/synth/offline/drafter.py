"""The offline drafter: turns a candidate bundle into a task without any LLM.

It picks an anchor block (`blocks/`, one module per app) and two or three follow-up blocks whose tools cover the most candidates (with
some randomness, for variety), composes them against a probe session of the task's world, writes the
request from the blocks' phrasings and adds constraints. A revision reads the previous round's issue
codes and answers them: unused candidates → choose blocks by coverage alone; too few tools or servers →
one more follow-up; too few constraint types, no interaction, too few checks → every applicable
constraint; a leak → the deterministic fuzzy rewrite; a failed plan → avoid the blocks it used.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from itertools import combinations

from cworld.data_model import Scenario
from cworld.synth.checks import CheckReport
from cworld.synth.draft import Draft
from cworld.synth.leak import LeakChecker
from cworld.synth.offline.blocks import all_blocks
from cworld.synth.offline.composer import Block, BlockFailed, Composer
from cworld.synth.offline.constraints import build_constraints
from cworld.synth.offline.phrases import SHARED, join
from cworld.synth.offline.templates import Templates, default_templates
from cworld.synth.options import SynthOptions
from cworld.synth.sampling import Candidates
from cworld.synth.toolset import ToolUniverse

BLOCKS: list[Block] = all_blocks()
#: Follow-ups that add to the summary run before those that send it.
FOLLOW_ORDER = [
    "hotel_after",
    "currency",
    "workdays",
    "trip_event",
    "card",
    "doc_note",
    "reminder",
    "email",
    "chat_post",
    "chat_dm",
    "crm",
]
SCHEMA_ONLY_BLOCKS = {"crm"}
TRIES = 6
MAX_BLOCKS = 5


@dataclass
class Revision:
    """What the next round changes, accumulated from every earlier round's issues."""

    strict: bool = False
    extra: int = 0
    everything: bool = False
    rewrite: bool = False
    avoid: set[str] = field(default_factory=set)

    def learn(self, report: CheckReport | None, failed_blocks: list[str]) -> None:
        codes = {i.code for i in report.issues} if report else set()
        self.strict |= "candidates_unused" in codes
        self.extra += int(bool(codes & {"too_few_tools", "too_few_servers"}))
        self.everything |= bool(codes & {"too_few_types", "no_interaction", "unverifiable", "trivial"})
        self.rewrite |= bool(codes & {"query_leak", "constraint_leak"})
        self.avoid |= set(failed_blocks)


def composable_tools(universe: ToolUniverse) -> set[str]:
    return {t for b in BLOCKS for t in b.tools if t in universe.tools}


class OfflineDrafter:
    def __init__(
        self,
        universe: ToolUniverse,
        options: SynthOptions,
        leaks: LeakChecker,
        templates: Templates | None = None,
    ) -> None:
        self.universe = universe
        self.options = options
        self.leaks = leaks
        self.templates = templates or default_templates()
        self.blocks = [b for b in BLOCKS if b.tools <= set(universe.tools)]

    def pool(self) -> set[str]:
        return {t for b in self.blocks for t in b.tools}

    def draft(
        self,
        candidates: Candidates,
        world_seed: int,
        rng: random.Random,
        revision: Revision,
        schema_only: bool,
    ) -> tuple[Draft, list[str]]:
        """A draft and the names of the blocks it is made of; `BlockFailed` when no combination composes."""
        problems: list[str] = []
        failed: set[str] = set()
        tries = 0
        for blocks in self._ranked(set(candidates.tools), rng, revision, schema_only):
            if tries >= TRIES:
                break
            if {x.name for x in blocks} & failed:
                continue
            tries += 1
            names = "+".join(b.name for b in blocks)
            try:
                composer = self._compose(blocks, world_seed, rng, set(candidates.tools))
            except BlockFailed as exc:
                problems.append(f"{names}: {exc}")
                failed.add(getattr(exc, "block", ""))
                continue
            except (
                LookupError,
                ValueError,
                TypeError,
                ArithmeticError,
            ) as exc:  # a bug in a block: reported, not fatal
                raise BlockFailed(f"internal error in {names}: {type(exc).__name__}: {exc}") from exc
            return self._to_draft(composer, rng, revision), [b.name for b in blocks]
        raise BlockFailed("no block combination composed: " + "; ".join(problems[-3:]))

    # --- choosing blocks ----------------------------------------------------------------------------------
    def _ranked(
        self, wanted: set[str], rng: random.Random, revision: Revision, schema_only: bool
    ) -> list[list[Block]]:
        """Every block combination (one or two anchors, then follow-ups), best first."""
        anchors = [b for b in self.blocks if b.anchor and b.name not in revision.avoid]
        follows = [b for b in self.blocks if not b.anchor and b.name not in revision.avoid]
        if not schema_only:
            follows = [b for b in follows if b.name not in SCHEMA_ONLY_BLOCKS]
        leads = [
            tuple(sorted(group, key=lambda b: "city" not in b.gives))
            for k in range(1, 3 + revision.strict)
            for group in combinations(anchors, k)
        ]
        scored = []
        for lead in leads:
            gives = frozenset().union(*(a.gives for a in lead))
            fitting = [f for f in follows if f.needs <= gives]
            for size in range(max(0, 3 - len(lead)), MAX_BLOCKS + 1 - len(lead) + revision.extra):
                for combo in combinations(fitting, size):
                    if schema_only and not any(b.name in SCHEMA_ONLY_BLOCKS for b in combo):
                        continue
                    blocks = [*lead, *self._ordered(combo)]
                    scored.append((self._score(blocks, wanted, rng, revision), blocks))
        scored.sort(key=lambda pair: -pair[0])
        return [blocks for score, blocks in scored if score > float("-inf")]

    def _score(self, blocks: list[Block], wanted: set[str], rng: random.Random, revision: Revision) -> float:
        tools = set().union(*(b.tools for b in blocks))
        servers = {t.split("/", 1)[0] for t in tools}
        if len(servers) < self.options.min_servers or len(tools) < self.options.min_tools:
            return float("-inf")
        coverage = len(tools & wanted) / max(1, len(wanted))
        noise = rng.uniform(0, 0.02 if revision.strict else 0.3)
        return coverage + noise - 0.04 * len(blocks)

    @staticmethod
    def _ordered(combo: tuple[Block, ...]) -> list[Block]:
        return sorted(
            combo, key=lambda b: FOLLOW_ORDER.index(b.name) if b.name in FOLLOW_ORDER else len(FOLLOW_ORDER)
        )

    # --- composing ------------------------------------------------------------------------------------------
    def _compose(
        self, blocks: list[Block], world_seed: int, rng: random.Random, wanted: set[str]
    ) -> Composer:
        composer = Composer(world_seed, random.Random(rng.random()), wanted, templates=self.templates)
        for block in blocks:
            composer.enter(block.app)
            try:
                if block.anchor:
                    _run_anchor(composer, block)
                else:
                    block.run(composer)
            except BlockFailed as exc:
                exc.block = block.name  # type: ignore[attr-defined]
                raise
        return composer

    def _to_draft(self, c: Composer, rng: random.Random, revision: Revision) -> Draft:
        constraints = build_constraints(
            c, self.universe, rng, min_types=self.options.min_constraint_types, everything=revision.everything
        )
        query = join(self.templates.book(SHARED), rng, c.clauses)
        if revision.rewrite:
            query = self.leaks.rewrite(query)
        tools = list(dict.fromkeys(s.tool for s in c.steps))
        return Draft(
            query=query,
            tools=tools,
            rationales={t: c.rationales[t] for t in tools},
            constraints=constraints,
            subgoals=c.goals,
            gold_plan=c.steps,
            final_answer_hints=c.hints,
            scenario=Scenario(entities=c.presumed),
        )


def _run_anchor(c: Composer, block: Block) -> None:
    """An anchor's facts; a second anchor adds its summary and topic and keeps the first one's other facts."""
    before = dict(c.facts)
    for key in ("summary", "topic"):
        c.facts.pop(key, None)
    goals = len(c.goals)
    block.run(c)
    c.facts["anchor_goals"] = [*before.get("anchor_goals", []), *(g.id for g in c.goals[goals:])]
    topics = {**before.get("goal_topics", {}), **{g.id: c.facts.get("topic", "") for g in c.goals[goals:]}}
    if "summary" in before:
        merged = {
            **c.facts,
            **{
                k: v
                for k, v in before.items()
                if k not in ("summary", "topic", "anchor_goals", "goal_topics")
            },
        }
        merged["summary"] = f"{before['summary']} {c.facts['summary']}"
        merged["topic"] = f"{before['topic']} and {c.facts['topic']}"
        c.facts.clear()
        c.facts.update(merged)
    c.facts["goal_topics"] = topics
