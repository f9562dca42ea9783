"""Episode-by-episode agreement and the measured headline (issue 25): the figures, their intervals, and an
experiment that fails when the World Engine is made wrong."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from cworld.data_model import Score, Task, ToolResult, ToolSpec, Trajectory, read_jsonl
from cworld.engine.protocol import SessionLog, WorldEngine
from cworld.fidelity import experiment as experiment_module
from cworld.fidelity.build import build_fidelity, goals
from cworld.fidelity.episodes import EpisodePair, agreement, episode_agreement, pair_episodes
from cworld.fidelity.experiment import ExperimentConfig, run_experiment
from cworld.judges import JudgeContent

FIXTURE = Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl"


def pair(task: str, live: bool, synth: bool, agent: str = "a", privileged: bool = False,
         rc: tuple[float, float] = (0.5, 0.5), categories: tuple[str, ...] = ("email",)) -> EpisodePair:
    return EpisodePair(agent, task, 0, privileged, categories, (float(live), float(synth)),
                       (float(live), float(synth)), rc, (rc[0] * 10, rc[1] * 10))


def test_kappa_accuracy_and_flips_match_their_definitions() -> None:
    rng = random.Random(3)
    pairs = []
    for i in range(60):
        live = rng.random() < 0.5
        synth = live if rng.random() < 0.8 else not live
        pairs.append(pair(f"t{i % 15}", live, synth, rc=(rng.random(), rng.random())))
    found = agreement("all", pairs, 500, 0.95, 0)
    live = [p.success[0] for p in pairs]
    synth = [p.success[1] for p in pairs]
    assert found.kappa.value == pytest.approx(cohen_kappa_score(live, synth))
    assert found.accuracy.value == pytest.approx(np.mean(np.array(live) == np.array(synth)))
    assert found.flips.value == pytest.approx(1 - found.accuracy.value)
    x, y = zip(*(p.r_c for p in pairs), strict=True)
    assert found.r_c.value == pytest.approx(np.corrcoef(x, y)[0, 1])
    for figure in (found.kappa, found.accuracy, found.flips, found.r_c, found.overall):
        assert figure.low is not None and figure.high is not None
        assert figure.low <= figure.value <= figure.high
    again = agreement("all", pairs, 500, 0.95, 0)
    assert again.kappa == found.kappa  # seeded bootstrap


def test_groups_categories_and_undefined_kappa() -> None:
    pairs = [pair(f"t{i}", False, False, agent="h", categories=("email", "travel")) for i in range(4)]
    pairs += [pair(f"t{i}", True, i != 0, agent="oracle", privileged=True, categories=("travel",)) for i in range(4)]
    data = episode_agreement(pairs, bootstrap=200)
    groups = data["groups"]
    assert groups["non-privileged"]["state_success"]["kappa"]["value"] is None  # nobody succeeds: undefined
    assert groups["non-privileged"]["state_success"]["accuracy"]["value"] == 1.0
    assert groups["privileged"]["verdict_flips"]["share"]["value"] == 0.25
    assert groups["all"]["episodes"] == 8
    assert {c["name"]: c["episodes"] for c in data["categories"]} == {"email": 4, "travel": 8}


def test_pairing_skips_infra_errors_and_unpaired_episodes() -> None:
    def episode(mode: str, task: str, status: str = "completed", seed: int = 0) -> tuple[Trajectory, Score]:
        t = Trajectory(episode_id=f"{mode}-{task}-{seed}", task_id=task, agent="a", mode=mode,  # type: ignore[arg-type]
                       seed=seed, status=status)  # type: ignore[arg-type]
        return t, Score(episode_id=t.episode_id, task_id=task, agent="a", mode=mode, overall=5.0, success=True,
                        metrics={"state_success": 1.0, "R_c": 1.0})

    live = [episode("live", "t1"), episode("live", "t2"), episode("live", "t3", seed=1)]
    synth = [episode("synthesized", "t1"), episode("synthesized", "t2", status="infra_error")]
    assert [(p.task_id, p.seed) for p in pair_episodes(live, synth)] == [("t1", 0)]


def test_goals_say_which_figure_fails() -> None:
    episodes = {"groups": {"all": {"state_success": {"kappa": {"value": 0.85}},
                                   "verdict_flips": {"share": {"value": 0.07}}}}}
    found = goals(None, episodes)
    assert found["rho_measured"]["met"] is None
    assert found["kappa_state_success"]["met"] is True
    assert found["verdict_flips"]["met"] is False
    assert found["all_met"] is False


class SaysYesToWrites:
    """A World Engine made wrong on purpose: every write answers success and changes nothing; reads are the
    faithful engine's."""

    def __init__(self, inner: WorldEngine) -> None:
        self.inner = inner
        self.name = f"says-yes({inner.name})"

    async def respond(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult:
        if tool.is_read_only:
            return await self.inner.respond(tool, arguments, session)
        return ToolResult.ok({"status": "ok"})

    def end_state(self, session: SessionLog) -> Any:
        end = getattr(self.inner, "end_state", None)
        return end(SessionLog(seed=session.seed, context=session.context)) if end is not None else None


AGENTS = ["heuristic:careful", "heuristic:thorough", "heuristic:explorer", "heuristic:frugal", "heuristic:hasty",
          "heuristic:basic", "scripted:oracle", "scripted:no-look", "scripted:no-retry"]


def test_a_wrong_engine_fails_the_experiment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same live run against the shipped engine and against one that says yes to every write: the wrong one
    loses the measured ranking (it scores every agent alike) and misses the goals."""
    from cworld.environment import Environment, Workspace
    from cworld.fidelity.experiment import make_engine
    from cworld.registry.tools import environment_tools
    from cworld.rollout import RolloutContext
    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")
    env, ws = Environment.resolve(), Workspace(tmp_path / "ws")
    tools = dict(environment_tools(env, ws).episode())
    tasks = read_jsonl(FIXTURE, Task)
    config = ExperimentConfig(agents=AGENTS, seeds=1, policy="none", concurrency=4, progress=False)
    live_ctx = RolloutContext(env, ws, tools)
    live, faithful = asyncio.run(run_experiment(tasks, config, live_ctx, tmp_path / "faithful"))
    monkeypatch.setattr(experiment_module, "make_engine",
                        lambda *a, **k: SaysYesToWrites(make_engine(*a, **k)))
    (tmp_path / "wrong").mkdir()
    (tmp_path / "wrong" / "live").symlink_to(live, target_is_directory=True)
    _, wrong = asyncio.run(run_experiment(tasks, config, live_ctx, tmp_path / "wrong"))
    content = JudgeContent.from_environment(env)
    good = build_fidelity(live=live, synth=faithful, tools=tools, content=content, bootstrap=300).to_dict()
    bad = build_fidelity(live=live, synth=wrong, tools=tools, content=content, bootstrap=300).to_dict()

    # Since issue 32 the shipped engine is what any server of the apps' categories gets (card rules, inference):
    # it no longer meets the goals by construction. It still ranks agents; the wrong engine cannot.
    assert not bad["goals"]["all_met"], bad["goals"]
    flips = {name: r["goals"]["verdict_flips"]["value"] for name, r in (("good", good), ("bad", bad))}
    assert flips["bad"] >= flips["good"]
    good_rho, wrong_rho = good["measured"]["spearman"]["value"], bad["measured"]["spearman"]["value"]
    assert good_rho is not None and good_rho > 0.5  # the shipped engine keeps the agents' order
    assert wrong_rho is None or wrong_rho < good_rho  # None: the wrong engine scores every agent alike
