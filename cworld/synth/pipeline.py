"""One synthesis attempt: sample → draft → (fuzzy rewrite) → check → [critic] → verify, revising up to
`max_rounds` times. Every round (the draft, the check results, the feedback) goes into the provenance.

The same loop serves both drafters. The LLM drafter revises from the feedback text; the offline one
from the issue codes (see `cworld.synth.offline.drafter.Revision`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cworld.data_model import Scenario, Task
from cworld.errors import ModelError
from cworld.seeding import derive_rng, derive_seed
from cworld.synth.checks import CheckReport, run_checks
from cworld.synth.draft import Draft, to_task
from cworld.synth.feedback import execution_feedback
from cworld.synth.goal_shapes import Drawn, ShapeSampler, describe
from cworld.synth.harvest_pool import Theme, sample_harvested
from cworld.synth.leak import LeakChecker, scenario_leaks
from cworld.synth.llm_drafter import LLMDrafter
from cworld.synth.offline import OfflineDrafter, Revision
from cworld.synth.offline.composer import BlockFailed
from cworld.synth.offline.goal_chain import GoalDrafter
from cworld.synth.offline.goal_roles import Roles
from cworld.synth.offline.shape_chain import ShapeDrafter
from cworld.synth.options import SynthOptions
from cworld.synth.sampling import Candidates, sample_candidates
from cworld.synth.scenario import sandbox_kinds, write_scenario
from cworld.synth.taxonomy import Taxonomy
from cworld.synth.toolset import ToolUniverse
from cworld.synth.verify import Verification, verify_draft, verify_synthesized

WORLD_SEEDS = 1_000_000


@dataclass
class Outcome:
    index: int
    task: Task | None = None
    reason: str = ""
    code: str = ""
    rounds: int = 0
    provenance: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Round:
    """The state one attempt carries from round to round."""

    candidates: Candidates
    world_seed: int
    schema_only: bool
    revision: Revision = field(default_factory=Revision)
    draft: Draft | None = None
    feedback: str = ""
    blocks: list[str] = field(default_factory=list)
    drawn: Drawn | None = None


class Synthesis:
    def __init__(
        self,
        universe: ToolUniverse,
        taxonomy: Taxonomy,
        options: SynthOptions,
        *,
        offline: OfflineDrafter | None = None,
        llm: LLMDrafter | None = None,
        chain: GoalDrafter | None = None,
        engine: Any = None,
        themes: dict[str, Theme] | None = None,
        shaper: ShapeDrafter | None = None,
        sampler: ShapeSampler | None = None,
    ) -> None:
        """`chain` is the offline drafter of the harvested pool; `engine` the World Engine its tasks are
        verified with (synthesized mode) and `themes` its bundles' themes, needed by either drafter on
        that pool. `shaper` is the goal-shape drafter of that pool and `sampler` draws its shapes and tools
        (`goal_shapes.py`); they replace `chain` and `themes`."""
        if sum(d is not None for d in (offline, llm, chain, shaper)) != 1:
            raise ValueError("give exactly one drafter")
        if options.pool == "harvested" and engine is None:
            raise ValueError("the harvested pool verifies with a World Engine: give one")
        if options.pool == "harvested" and not themes and sampler is None:
            raise ValueError("the harvested pool draws its bundles from themes: give them")
        self.universe, self.taxonomy, self.options = universe, taxonomy, options
        self.offline, self.llm, self.chain, self.engine = offline, llm, chain, engine
        self.themes = themes or {}
        self.shaper, self.sampler = shaper, sampler
        self.roles = chain.roles if chain is not None else Roles(engine) if engine is not None else None
        self.leaks = LeakChecker(universe)
        self.kinds = sandbox_kinds()

    @property
    def source(self) -> str:
        return "llm" if self.llm is not None else "offline"

    @property
    def harvested(self) -> bool:
        return self.options.pool == "harvested"

    def task_id(self, index: int) -> str:
        return f"synth-{self.options.seed}-{index:04d}"

    async def attempt(self, index: int) -> Outcome:
        rng = derive_rng(self.options.seed, f"synth:attempt:{index}")
        state = self._start(index, rng)
        outcome = Outcome(index, provenance=[self._sampled(state)])
        for number in range(1, self.options.max_rounds + 1):
            outcome.rounds = number
            entry: dict[str, Any] = {"stage": "round", "round": number}
            outcome.provenance.append(entry)
            try:
                draft = await self._draft(state, rng)
            except (BlockFailed, ModelError) as exc:
                _drop(exc, entry, outcome)
                self._settle(state, outcome)
                return outcome
            draft = await self._rewrite(draft, state, entry)
            entry["draft"] = draft.compact()
            report = await self._check(draft, state)
            entry["checks"] = report.as_dict()
            verification = self._verify(draft, state, index) if report.passed else None
            if verification is not None:
                entry["verification"] = verification.as_dict()
                if verification.ok:
                    scenario, report = self._scenario(draft, state, verification, entry)
                    if report.passed:
                        outcome.code = outcome.reason = ""
                        draft = draft.model_copy(update={"scenario": scenario})
                        outcome.task = self._task(index, draft, state, verification, outcome)
                        self._settle(state, outcome)
                        return outcome
                    verification = None
            self._learn(state, draft, report, verification, entry, outcome)
        self._settle(state, outcome)
        return outcome

    def _settle(self, state: Round, outcome: Outcome) -> None:
        if self.sampler is not None and state.drawn is not None:
            refused = self.shaper.refused if self.shaper is not None else set()
            self.sampler.settle(state.drawn, outcome.task is not None, refused)

    # --- stages ---------------------------------------------------------------------------------------
    def _verify(self, draft: Draft, state: Round, index: int) -> Verification:
        if self.harvested:
            return verify_synthesized(draft, self.universe, state.world_seed, self.engine, self.task_id(index))
        return verify_draft(draft, self.universe, state.world_seed)

    def _start(self, index: int, rng: Any) -> Round:
        world_seed = derive_seed(self.options.seed, f"synth:world:{index}") % WORLD_SEEDS
        if self.sampler is not None:
            refused = self.shaper.refused if self.shaper is not None else set()
            candidates, drawn = self.sampler.sample(rng, refused)
            return Round(candidates, world_seed, False, drawn=drawn)
        if self.harvested:
            o = self.options
            assert self.roles is not None
            candidates = sample_harvested(
                self.universe, rng, roles=self.roles, themes=self.themes, min_tools=o.min_tools,
                max_tools=o.max_tools, min_servers=o.min_servers,
            )
            return Round(candidates, world_seed, False)
        share = self.options.schema_only_share
        schema_only = self.offline is not None and int((index + 1) * share) > int(index * share)
        pool = None
        if self.offline is not None:
            pool = {t for t in self.offline.pool() if schema_only or self.universe.executable(t)}
        o = self.options
        candidates = sample_candidates(
            self.universe,
            rng,
            min_tools=o.min_tools,
            max_tools=o.max_tools,
            min_servers=o.min_servers,
            pool=pool,
        )
        return Round(candidates, world_seed, schema_only)

    @staticmethod
    def _sampled(state: Round) -> dict[str, Any]:
        c = state.candidates
        return {
            "stage": "sample",
            "seed_tools": c.seeds,
            "retrieval_query": c.query,
            "candidates": c.tools,
            "world_seed": state.world_seed,
        }

    async def _draft(self, state: Round, rng: Any) -> Draft:
        if self.shaper is not None and state.drawn is not None:
            return self.shaper.draft(state.drawn, state.world_seed, rng, state.revision.everything)
        if self.chain is not None:
            r = state.revision
            return self.chain.draft(state.candidates, state.world_seed, rng, r.avoid, r.everything)
        if self.offline is not None:
            draft, state.blocks = self.offline.draft(
                state.candidates, state.world_seed, rng, state.revision, state.schema_only
            )
            return draft
        assert self.llm is not None
        if state.draft is None:
            return await self.llm.draft(state.candidates.tools, state.world_seed)
        return await self.llm.revise(state.candidates.tools, state.world_seed, state.draft, state.feedback)

    async def _rewrite(self, draft: Draft, state: Round, entry: dict[str, Any]) -> Draft:
        """Fuzzy rewriting when the query names a tool or server: the model first, then the rule-based
        rewriter.
        """
        leaks = [str(leak) for leak in self.leaks.leaks(draft.query)]
        if not leaks:
            return draft
        query = draft.query
        if self.llm is not None:
            try:
                query = await self.llm.rewrite(query, leaks, state.world_seed)
            except ModelError as exc:
                entry["rewrite_error"] = str(exc)
        if self.leaks.leaks(query):
            query = self.leaks.rewrite(query)
        entry["rewrite"] = {"leaks": leaks, "before": draft.query, "after": query}
        return draft.model_copy(update={"query": query})

    async def _check(self, draft: Draft, state: Round) -> CheckReport:
        report = run_checks(
            draft,
            state.candidates.tools,
            self.universe,
            self.taxonomy,
            self.options,
            self.leaks,
            require_scenario=self.llm is not None,
        )
        if report.passed and self.llm is not None:
            try:
                verdict = await self.llm.critique(draft, state.world_seed)
            except ModelError as exc:
                report.add("critic", "critic_failed", f"the critic gave no usable verdict ({exc})")
                return report
            if not verdict.passed:
                for issue in verdict.issues or ["the critic rejected the task without saying why"]:
                    report.add("critic", "critic", issue)
        return report

    def _scenario(
        self, draft: Draft, state: Round, verification: Verification, entry: dict[str, Any]
    ) -> tuple[Scenario, CheckReport]:
        """The task's scenario (`write_scenario`; on the harvested pool the drafter's own: no seeded state
        holds schema-only records) and the facts-only check of it."""
        if self.harvested:
            scenario, dropped = draft.scenario, list[str]()
        else:
            scenario, dropped = write_scenario(
                draft, self.universe, state.world_seed, trace=verification.trace, kinds=self.kinds
            )
        entry["scenario"] = {
            "entities": len(scenario.entities),
            "relations": len(scenario.relations),
            "stated": len(draft.scenario.entities),
            "dropped": dropped,
        }
        report = CheckReport()
        found = scenario_leaks(
            self.leaks, scenario, step_ids=[s.id for s in draft.gold_plan], hints=draft.final_answer_hints
        )
        if found:
            report.add(
                "scenario", "scenario_leak", "the written scenario is not facts only: " + "; ".join(found[:5])
            )
            entry["scenario"]["problems"] = found
        return scenario, report

    def _learn(
        self,
        state: Round,
        draft: Draft,
        report: CheckReport,
        verification: Verification | None,
        entry: dict[str, Any],
        outcome: Outcome,
    ) -> None:
        """Targeted feedback for the next round; also what the attempt is rejected for if it was the last."""
        if verification is not None:
            state.feedback = execution_feedback(verification.reason, draft, verification.trace)
            state.revision.learn(None, state.blocks)
            if verification.trace is not None:
                state.revision.avoid |= {c.tool for c in verification.trace.calls if not c.ok}
            outcome.code = "verify:" + (verification.code or (
                "plan_failed" if "plan failed" in verification.reason else "constraints"))
            outcome.reason = verification.reason
        else:
            state.feedback = report.feedback()
            state.revision.learn(report, [])
            first = report.issues[0]
            outcome.code = f"{first.check}:{first.code}"
            outcome.reason = "; ".join(i.message for i in report.issues)[:500]
        entry["feedback"] = state.feedback
        state.draft = draft

    def _task(
        self, index: int, draft: Draft, state: Round, verification: Verification, outcome: Outcome
    ) -> Task:
        metadata = {
            "candidates": state.candidates.tools,
            "seed_tools": state.candidates.seeds,
            "retrieval_query": state.candidates.query,
            "rounds": outcome.rounds,
            "drafter": self._drafter_name(),
            "verification": verification.as_dict(),
        }
        if state.blocks:
            metadata["blocks"] = state.blocks
        if state.drawn is not None:
            metadata.update(describe(state.drawn))
        if verification.outcome_steps is not None:
            metadata["outcome"] = verification.outcome_steps
        task = to_task(
            draft,
            task_id=self.task_id(index),
            world_seed=state.world_seed,
            source=self.source,
            provenance=outcome.provenance,
            metadata=metadata,
        )
        task.verifiable = verification.verifiable and verification.ok
        task.ground_truth = verification.ground_truth if task.verifiable else None
        return task

    def _drafter_name(self) -> str:
        if self.llm is not None:
            model = getattr(self.llm.model, "model", self.llm.model)
            return f"llm:{model or 'synth role'}"
        if self.shaper is not None:
            return "offline:goal-shapes"
        return "offline:goal-chain" if self.chain is not None else "offline"


def _drop(exc: Exception, entry: dict[str, Any], outcome: Outcome) -> None:
    """No draft this round: the model failed for good, or no block combination composed (or a block has a bug)."""
    if isinstance(exc, ModelError):
        outcome.code, what = "model", "model failed"
    else:
        outcome.code = "internal" if str(exc).startswith("internal error") else "compose"
        what = "no workable draft"
    outcome.reason = f"{what}: {exc}"
    entry["error"] = outcome.reason
