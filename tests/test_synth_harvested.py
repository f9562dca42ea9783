"""`cworld synth --pool harvested`: tasks composed from harvested schemas alone over the world engine's world
of their seed, verified by executing their gold plan in synthesized mode; an episode over one such task runs
on the same world; the LLM drafter works on the same pool."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import HARVESTED_BATCH

from cworld.data_model import Task, read_jsonl
from cworld.engine.rules import RulesEngine
from cworld.environment import Environment, Workspace
from cworld.llm import mock
from cworld.synth import SynthOptions, prepare, run_prepared

ENV = Environment.resolve()


@pytest.fixture(scope="module")
def synthesized(harvested_batch) -> Iterator[tuple[Workspace, list[Task], object]]:
    """The worker's harvested batch (conftest `harvested_batch`), with the hashing embedder for this file's
    episodes."""
    mp = pytest.MonkeyPatch()
    mp.setenv("CWORLD_EMBED_MODEL", "hash")
    yield harvested_batch
    mp.undo()


def test_tasks_span_harvested_servers_and_verify_in_synthesized_mode(synthesized) -> None:
    _, tasks, prepared = synthesized
    universe = prepared.synthesis.universe
    assert isinstance(prepared.synthesis.engine, RulesEngine)  # drawn over the world a run uses
    assert len(tasks) == HARVESTED_BATCH["n"]
    for task in tasks:
        servers = {t.split("/", 1)[0] for t in task.tools}
        assert len(servers) >= 2 and servers <= universe.harvested  # a goal shape: 2-4 services
        assert {s.tool for s in task.gold_plan} <= set(task.tools)
        verification = task.metadata["verification"]
        assert verification["ok"] and "synthesized mode" in verification["reason"]
        assert verification["calls"] == len(task.gold_plan)
        # the end state its plan reaches in the world is its ground truth, graded by the state diff
        assert task.verifiable is True and task.ground_truth and "_world" in task.ground_truth
        writes = task.metadata["outcome"]["writes"]
        assert writes and set(writes) <= set(task.metadata["outcome"]["needed"]) <= {s.id for s in task.gold_plan}
        assert len({c.type for c in task.constraints}) >= 4
        assert task.metadata["drafter"] == "offline:goal-shapes" and task.metadata["shape"]


def test_no_tool_or_server_name_leaks(synthesized) -> None:
    _, tasks, prepared = synthesized
    leaks = prepared.synthesis.leaks
    for task in tasks:
        assert leaks.leaks(task.query) == [], task.query
        for server in {t.split("/", 1)[0] for t in task.tools}:
            assert server.lower() not in task.query.lower()
        for c in task.constraints:
            assert leaks.leaks(c.description) == []
            assert "{{" not in json.dumps(task.scenario.model_dump())


def test_a_synthesized_mode_episode_over_a_harvested_task_completes(synthesized, tmp_path: Path) -> None:
    """The run's world engine (the default) finds the records the task was composed over: same seed, same
    world, whether the synthesizer built it server by server or the run builds it whole."""
    from cworld.rollout import RolloutContext, RunConfig, Runner

    ws, tasks, prepared = synthesized
    tools = prepared.synthesis.universe.tools
    ctx = RolloutContext(ENV, ws, dict(tools))
    for agent in ("scripted:oracle", "heuristic:basic"):
        report = asyncio.run(
            Runner(tasks[:1], RunConfig(agent=agent, mode="synthesized", progress=False), ctx, tmp_path / agent).run()
        )
        # the oracle completes; the heuristic may give up (its arguments are guesses), never on an infra error
        allowed = {"completed"} if agent == "scripted:oracle" else {"completed", "gave_up", "turn_limit"}
        assert report.ran == 1 and set(report.statuses) <= allowed, (agent, dict(report.statuses))
        assert sum(r.state_checked for r in report.rows) == 1  # its end state is graded, not set aside


def test_the_llm_drafter_works_on_the_harvested_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, synthesized,
                                                    shared_worlds) -> None:
    """The mock model returns a task the offline composer wrote for the same candidates: it is checked,
    verified in synthesized mode and accepted over >=2 harvested servers, its shape recorded."""
    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")
    _, tasks, _ = synthesized
    good = tasks[0]
    draft = {k: getattr(good, k) for k in ("query", "tools", "rationales", "subgoals", "gold_plan",
                                            "final_answer_hints", "scenario")}
    draft["constraints"] = [c.model_dump() for c in good.constraints]
    reply = json.dumps(draft, default=lambda o: o.model_dump())
    ok = json.dumps({"passed": True, "issues": []})
    index = int(good.id.rsplit("-", 1)[1])  # the attempt whose world it was drawn over: run up to that one
    mock.script("harvested", [reply, ok] * (index + 1))
    ws = shared_worlds(Workspace.resolve(tmp_path / "ws"))
    options = SynthOptions(n=1, seed=HARVESTED_BATCH["seed"], pool="harvested", min_candidate_share=0.0,
                           max_attempts=index + 1, max_rounds=1, concurrency=1)
    try:
        prepared = prepare(ENV, ws, options, model="mock/harvested", out=ws.root / "tasks.jsonl")
        result, summary = asyncio.run(run_prepared(prepared))
    finally:
        mock.clear()
    written = read_jsonl(ws.root / "tasks.jsonl", Task)
    assert prepared.synthesis.source == "llm"
    assert len(written) == 1, summary.model_dump()
    assert len({t.split("/", 1)[0] for t in written[0].tools}) >= 2
    assert written[0].metadata["verification"]["ok"] and written[0].metadata["shape"]


def test_later_steps_take_earlier_answers_across_services(synthesized) -> None:
    """References are really in the plans (the composer once lost them) and some cross services."""
    from cworld.agents.references import referenced_steps

    _, tasks, _ = synthesized
    crossing = 0
    for task in tasks:
        server_of = {s.id: s.tool.split("/", 1)[0] for s in task.gold_plan}
        linked = [s for s in task.gold_plan if referenced_steps(s.arguments)]
        assert linked, task.id
        crossing += any(server_of[ref] != s.tool.split("/", 1)[0] for s in linked
                        for ref in referenced_steps(s.arguments))
    assert crossing >= 1


def test_semantic_types_link_parameters_to_answer_fields() -> None:
    from cworld.synth.offline.schema_links import (
        id_entity,
        id_leaf_entity,
        input_type,
        leaf_type,
        same_entity,
        takes,
    )

    assert takes(input_type("city", {"type": "string"}), leaf_type("items.0.city", "Lyon"))
    assert takes(input_type("query", {"type": "string"}), leaf_type("papers.0.title", "Heat islands"))
    assert takes(input_type("to", {"type": "string", "format": "email"}), leaf_type("contact.mail", "a@b.org"))
    assert not takes(input_type("query", {"type": "string"}), leaf_type("items.0.email", "a@b.org"))
    assert id_entity("issueId") == "issue" and id_entity("id") is None
    assert same_entity("issue", id_leaf_entity("card.id") or "")
    assert not same_entity("issue", id_leaf_entity("document.id") or "")


def test_requests_are_written_from_the_content_templates(synthesized) -> None:
    """The purpose of the task's goal shape opens the request (task_synth/templates/shapes.yaml), not a tool's
    description."""
    import yaml

    _, tasks, _ = synthesized
    book = yaml.safe_load((ENV.task_synth / "templates" / "shapes.yaml").read_text())
    for task in tasks:
        assert any(task.query.startswith(p) for p in book["purposes"][task.metadata["shape"]]), task.query
