"""Ground truth in the world and verification that can fail (issue 24): a plan's end state is a task's
ground truth only when doing nothing misses it and every write step is needed."""

from __future__ import annotations

import pytest

from cworld.controller.factory import build_engine
from cworld.data_model import PlanStep, Task
from cworld.engine.protocol import SessionLog, WorldEngine
from cworld.environment import Environment, Workspace
from cworld.registry.tools import sandbox_tools
from cworld.sandbox.statediff import sandbox_state_diff
from cworld.synth.outcome import NO_OUTCOME, STEP_NOT_NEEDED, check_outcome, run_plan

TOOLS = dict(sandbox_tools())
SEED = 0


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> WorldEngine:
    return build_engine("auto", Environment.resolve(), Workspace(tmp_path_factory.mktemp("ws")), TOOLS.values())


def _check(engine: WorldEngine, plan: list[PlanStep]):  # type: ignore[no-untyped-def]
    trace, writes = run_plan(plan, TOOLS, engine, SessionLog(seed=SEED))
    assert trace.failure is None, trace.failure
    return check_outcome(plan, TOOLS, engine, lambda: SessionLog(seed=SEED), trace, writes, SEED), writes


def step(i: int, tool: str, **arguments: object) -> PlanStep:
    return PlanStep(id=f"s{i}", tool=tool, arguments=dict(arguments))


def test_a_plan_that_only_reads_has_no_outcome(engine: WorldEngine) -> None:
    outcome, writes = _check(engine, [step(1, "docs/list_folders"), step(2, "docs/search_documents", query="plan")])
    assert writes == [] and outcome.ground_truth is None and outcome.code == NO_OUTCOME


def test_a_write_the_outcome_does_not_need_is_refused(engine: WorldEngine) -> None:
    plan = [step(1, "docs/create_folder", name="Archive 2026"),
            step(2, "docs/create_document", title="Q3 notes", folder_id="fld_0001", content="draft")]
    outcome, writes = _check(engine, plan)
    assert writes == ["s1", "s2"] and outcome.ground_truth is not None  # both writes are the outcome
    made = "{{s2.document_id}}"  # the document just made: a seeded one may be locked (documents card)
    there_and_back = [*plan, step(3, "docs/move_document", document_id=made, folder_id="fld_0002"),
                      step(4, "docs/move_document", document_id=made, folder_id="fld_0001")]
    outcome, writes = _check(engine, there_and_back)
    assert "s3" in writes and outcome.ground_truth is None and outcome.code == STEP_NOT_NEEDED


def test_another_route_to_the_same_end_state_succeeds(engine: WorldEngine) -> None:
    plan = [step(1, "docs/create_document", title="Q3 notes", folder_id="fld_0001", content="draft"),
            step(2, "docs/move_document", document_id="{{s1.document_id}}", folder_id="fld_0002")]
    outcome, _ = _check(engine, plan)
    assert outcome.ground_truth is not None and set(outcome.ground_truth) == {"docs"}
    other = [step(1, "docs/list_folders"),
             step(2, "docs/create_document", title="Q3 notes", folder_id="fld_0002", content="draft")]
    trace, _ = run_plan(other, TOOLS, engine, SessionLog(seed=SEED))
    assert trace.end_state is not None
    assert sandbox_state_diff(SEED, outcome.ground_truth, trace.end_state).success
    nothing, _ = run_plan([], TOOLS, engine, SessionLog(seed=SEED))
    assert nothing.end_state is not None
    assert not sandbox_state_diff(SEED, outcome.ground_truth, nothing.end_state).success


def _trajectory(task: Task, trace_plan: list[PlanStep], engine: WorldEngine, answer: str):  # type: ignore[no-untyped-def]
    """The episode an agent making `trace_plan`'s calls leaves, with its end state in the world."""
    from judges_helpers import TrajectoryBuilder

    trace, _ = run_plan(trace_plan, TOOLS, engine, SessionLog(seed=SEED))
    builder = TrajectoryBuilder(task, mode="synthesized")
    for call in trace.calls:
        builder.call(call.tool, call.arguments, result=call.result if isinstance(call.result, dict) else {"v": call.result})
    builder.end_state = trace.end_state
    return builder.final(answer).build()


def _score(task: Task, trace_plan: list[PlanStep], engine: WorldEngine) -> tuple[float, float | None]:
    from cworld.judges.content import load_weights
    from cworld.judges.overall import overall
    from cworld.judges.verifiable import verifiable_scores

    result = verifiable_scores(_trajectory(task, trace_plan, engine, "Done: Q3 notes filed under Team."), TOOLS)
    weights = load_weights(Environment.resolve().judges / "weights.yaml")
    total = overall(result.metrics, {}, weights).score
    assert total is not None
    return total, result.metrics.get("state_success")


def test_an_agent_on_another_route_scores_as_the_oracle(engine: WorldEngine) -> None:
    plan = [step(1, "docs/list_folders"), step(2, "docs/search_documents", query="privacy"),
            step(3, "docs/create_document", title="Q3 notes", folder_id="fld_0001", content="draft"),
            step(4, "docs/move_document", document_id="{{s3.document_id}}", folder_id="fld_0002")]
    outcome, writes = _check(engine, plan)
    assert outcome.ground_truth is not None and writes == ["s3", "s4"] and outcome.needed == ["s3", "s4"]
    task = Task(id="t1", query="File a new 'Q3 notes' draft under Team.", tools=sorted({p.tool for p in plan}),
                gold_plan=plan, verifiable=True, ground_truth=outcome.ground_truth, initial_state_seed=SEED,
                metadata={"outcome": {"writes": outcome.writes, "needed": outcome.needed}})
    oracle, oracle_success = _score(task, plan, engine)
    route = [step(1, "docs/create_document", title="Q3 notes", folder_id="fld_0002", content="draft")]
    other, other_success = _score(task, route, engine)
    idle, idle_success = _score(task, [step(1, "docs/list_folders")], engine)
    assert oracle_success == other_success == 1.0 and idle_success == 0.0
    assert abs(oracle - other) <= 0.5, (oracle, other)
    assert idle <= 2.0 < other - 5.0, (idle, other)


def _metrics(task: Task, trace_plan: list[PlanStep], engine: WorldEngine) -> dict[str, float | None]:
    from cworld.judges.verifiable import verifiable_scores

    return verifiable_scores(_trajectory(task, trace_plan, engine, "Done."), TOOLS).metrics


def test_a_subgoal_that_writes_is_reached_by_its_effect_not_by_its_calls(engine: WorldEngine) -> None:
    from cworld.data_model import SubGoal

    plan = [PlanStep(id="s1", tool="docs/list_folders", subgoal="g1"),
            PlanStep(id="s2", tool="docs/create_document", subgoal="g2",
                     arguments={"title": "Q3 notes", "folder_id": "fld_0001", "content": "draft"}),
            PlanStep(id="s3", tool="docs/move_document", subgoal="g2",
                     arguments={"document_id": "{{s2.document_id}}", "folder_id": "fld_0002"})]
    outcome, _ = _check(engine, plan)
    assert outcome.ground_truth is not None and set(outcome.effects) == {"s2", "s3"}
    assert all(outcome.effects.values())  # each write makes paths of the ground truth no other step makes
    task = Task(id="t2", query="File a new 'Q3 notes' draft under Team.", tools=sorted({p.tool for p in plan}),
                subgoals=[SubGoal(id="g1", description="see the folders"),
                          SubGoal(id="g2", description="the draft filed under Team", depends_on=["g1"])],
                gold_plan=plan, verifiable=True, ground_truth=outcome.ground_truth, initial_state_seed=SEED,
                metadata={"outcome": {"writes": outcome.writes, "needed": outcome.needed,
                                      "effects": outcome.effects}})
    # another route: no move at all, the draft created where it belongs: both sub-goals reached
    direct = [step(1, "docs/list_folders"),
              step(2, "docs/create_document", title="Q3 notes", folder_id="fld_0002", content="draft")]
    assert _metrics(task, direct, engine)["subgoals"] == 1.0
    # the sub-goal's own tools all succeed, but the draft ends in the wrong folder: not reached
    astray = [step(1, "docs/list_folders"),
              step(2, "docs/create_document", title="Q3 notes", folder_id="fld_0001", content="draft"),
              step(3, "docs/move_document", document_id="{{s2.document_id}}", folder_id="fld_0003")]
    assert _metrics(task, astray, engine)["subgoals"] == 0.5
