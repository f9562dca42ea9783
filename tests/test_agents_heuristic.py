"""The heuristic agents: they plan from the request alone (never the answer key), solve some live tasks end to
end, are deterministic, and every agent that reads the gold plan is labelled privileged wherever it is shown."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from rollout_helpers import scratch_context, succeeded, without_timings

from cworld.agents import HeuristicAgent, LLMAgent, ScriptedAgent, fill, heuristic, intents, make_agent, rank
from cworld.agents.heuristic import AGENTS as KNOWN
from cworld.data_model import Scenario, Task, read_jsonl
from cworld.environment import Environment
from cworld.errors import UsageError
from cworld.rollout import RunConfig, Runner, build_episode, run_episode

TASKS = read_jsonl(Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl", Task)
AGENTS = [f"heuristic:{name}" for name in KNOWN]
"""The skill levels and the strategies (dense, hybrid, explorer, frugal, hasty)."""
ANSWER_KEY = {"gold_plan", "subgoals", "rationales", "final_answer_hints", "ground_truth", "scenario", "provenance",
              "metadata"}


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    return scratch_context(tmp_path_factory.mktemp("ws"))


async def run(ctx, task, agent, *, policy="none", seed=0, blind=False):
    """One live episode; `blind` hands the agent a copy of the task with its answer key and scenario removed."""
    episode = build_episode(task, agent=agent, access="full", mode="live", policy=policy, seed=seed, ctx=ctx)
    player = make_agent(agent)
    if blind:
        player = _Blind(player)
    return await run_episode(player, episode)


class _Blind:
    def __init__(self, agent):
        self.agent, self.name, self.privileged = agent, agent.name, agent.privileged

    async def reset(self, task, toolbox, *, seed):
        stripped = task.model_copy(update={"gold_plan": [], "subgoals": [], "rationales": {}, "final_answer_hints": [],
                                           "ground_truth": None, "scenario": Scenario(), "provenance": [],
                                           "metadata": {}})
        toolbox.task = stripped
        await self.agent.reset(stripped, toolbox, seed=seed)

    async def act(self, observation):
        return await self.agent.act(observation)


def test_an_unknown_level_is_a_one_line_error_that_lists_the_levels():
    with pytest.raises(UsageError) as caught:
        make_agent("heuristic:wizard")
    message = str(caught.value)
    assert "\n" not in message and all(name in message for name in AGENTS)


def test_only_agents_that_read_the_gold_plan_are_privileged():
    assert ScriptedAgent.privileged is True
    assert HeuristicAgent.privileged is False and LLMAgent.privileged is False
    assert all(isinstance(make_agent(a), HeuristicAgent) for a in AGENTS)


def test_the_heuristic_modules_never_touch_the_answer_key():
    """No attribute of the answer key (or the environment's scenario) is read anywhere in their code."""
    for module in (heuristic, fill, intents, rank):
        tree = ast.parse(inspect.getsource(module))
        read = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        assert not read & ANSWER_KEY, (module.__name__, read & ANSWER_KEY)


@pytest.mark.parametrize("agent", AGENTS)
async def test_a_task_without_its_answer_key_gives_the_same_trajectory(ctx, agent):
    for task in TASKS[:4]:
        full = await run(ctx, task, agent, policy="default")
        blind = await run(ctx, task, agent, policy="default", blind=True)
        assert without_timings(full)["steps"] == without_timings(blind)["steps"], task.id
        assert full.final_answer == blind.final_answer


@pytest.mark.parametrize("agent", AGENTS)
async def test_same_seed_same_trajectory(ctx, agent):
    for task in TASKS[:3]:
        first = await run(ctx, task, agent, policy="default", seed=2)
        second = await run(ctx, task, agent, policy="default", seed=2)
        assert without_timings(first) == without_timings(second), task.id


async def test_the_thorough_agent_solves_some_live_tasks_end_to_end(ctx):
    outcomes = [await run(ctx, task, "heuristic:thorough") for task in TASKS]
    assert any(succeeded(t) for t in outcomes)
    assert all(t.privileged is False for t in outcomes)
    assert sum(t.status == "completed" for t in outcomes) >= len(TASKS) // 2


async def test_privileged_is_recorded_and_shown_in_the_leaderboard_and_the_export(ctx, tmp_path):
    from cworld.export import ExportFilters, export_sft
    from cworld.judges import JudgeContent
    from cworld.judges.runs import load_runs
    from cworld.report.leaderboard import build_rows
    from cworld.report.markdown import render_compact

    folders = []
    for agent in ("scripted:oracle", "heuristic:careful"):
        folder = tmp_path / agent.replace(":", "-")
        await Runner(TASKS[:2], RunConfig(agent=agent, policy="none", progress=False), ctx, folder).run()
        folders.append(folder)
    content = JudgeContent.from_environment(Environment.resolve())
    runs = load_runs(folders, content, ctx.tools)
    assert {e.trajectory.agent: e.trajectory.privileged for r in runs for e in r.episodes} == {
        "scripted:oracle": True, "heuristic:careful": False}
    rows, columns = build_rows(runs)
    labels = {r.agent: r.display_agent for r in rows}
    assert labels == {"scripted:oracle": "scripted:oracle (privileged)", "heuristic:careful": "heuristic:careful"}
    assert any(c.key == "subgoals" for c in columns)
    assert "scripted:oracle (privileged)" in render_compact(runs, rows, columns)
    summary = export_sft(folders, "openai", tmp_path / "sft.jsonl", ExportFilters(), ctx.tools)
    assert {(m["agent"], m["privileged"]) for m in summary["records"]} == {
        ("scripted:oracle", True), ("heuristic:careful", False)}
    assert summary["privileged_agents"] == ["scripted:oracle"]


async def test_strategies_work_differently_not_just_less(ctx, monkeypatch):
    """Each strategy shows its own way of working on the same tasks: the budget stops the frugal agent, the explorer
    lists a server before its first write there, the hasty one sends required arguments only, and the dense and
    hybrid rankers order tools by another measure than BM25."""
    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")
    runs = {a: [await run(ctx, t, a) for t in TASKS[:6]] for a in ("heuristic:thorough", "heuristic:frugal",
                                                                      "heuristic:explorer", "heuristic:careful",
                                                                      "heuristic:hasty")}
    calls = {a: [[s.tool_call for s in r.steps if s.tool_call] for r in rs] for a, rs in runs.items()}
    assert all(len(c) <= 6 for c in calls["heuristic:frugal"])
    assert any(len(c) > 6 for c in calls["heuristic:thorough"])
    first = {a: [c[0].tool if c else None for c in cs] for a, cs in calls.items()}
    assert first["heuristic:explorer"] != first["heuristic:careful"]
    assert any(c.tool.split("/")[1].startswith(("list", "get_my", "search")) for c in calls["heuristic:explorer"][0])
    optional = {a: sum(1 for cs in calls[a] for c in cs if c.tool in ctx.tools for name in c.arguments
                       if name not in fill.required(ctx.tools[c.tool])) for a in ("heuristic:careful", "heuristic:hasty")}
    assert optional["heuristic:hasty"] == 0 < optional["heuristic:careful"]
    tools = sorted(ctx.tools.values(), key=lambda t: t.id)[:80]
    orders = {r: [t.id for _, t in rank.rank_tools(r, "forward the email to a colleague", tools)]  # type: ignore[arg-type]
              for r in rank.RANKERS}
    assert orders["bm25"] and orders["dense"] and orders["bm25"] != orders["dense"]
