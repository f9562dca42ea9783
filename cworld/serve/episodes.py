"""Episodes for served clients: one `EpisodeDriver` per MCP session, trajectories stored as `cworld run`
stores them, and the reward on submit.

Each MCP session (an HTTP `Mcp-Session-Id`, or the one stdio client) gets a `SessionState`. Its episode is
an `EpisodeDriver` over the server's one `RolloutContext`: a fresh controller per episode (its own
sandbox session, real-server scratch folder and World Engine session log), the fault policy and the
backends of `cworld run`. Nothing of that machinery lives here.

Every episode that ends is appended to the server's run folder (`<run>/trajectories.jsonl`, the
`TrajectoryStore` of `cworld run`): submitted (`completed`), cut by the turn limit (`turn_limit`), ended
by an infrastructure failure (`infra_error`), or left open when its session ended (`abandoned`: the
client disconnected, its HTTP session was deleted or timed out idle, or the server stopped). So
`cworld judge`, `cworld report` and `cworld export-sft` read served episodes like any run's.

Episode ids: a served (task, agent, mode, policy, seed) may run in many sessions at once, so each served
episode's id also hashes its session and its number there: every stored trajectory has its own id.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cworld.data_model import Score, Task, Trajectory
from cworld.data_model.trajectory import EpisodeStatus
from cworld.errors import UsageError
from cworld.judges.scoring import JudgeSetup, score_offline, score_trajectory
from cworld.rollout.driver import EpisodeDriver, Step
from cworld.rollout.episode import EpisodeInfraError, episode_id
from cworld.rollout.loop import RolloutContext
from cworld.rollout.store import TrajectoryStore
from cworld.sandbox.statediff import StateDiffResult

DEFAULT_AGENT = "mcp"


@dataclass
class EpisodeDefaults:
    """What `start_episode` uses for what the client leaves out (the `cworld serve` flags)."""

    mode: str = "synthesized"
    policy: str = "default"
    access: str = "full"
    agent: str = DEFAULT_AGENT


@dataclass
class SessionState:
    """One MCP session: at most one open episode at a time, its calls one after another."""

    key: str = field(default_factory=lambda: uuid.uuid4().hex)
    driver: EpisodeDriver | None = None
    started: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def open(self) -> bool:
        return self.driver is not None and self.driver.open


@dataclass
class Ended:
    """An episode that ended, as stored, with its reward (the gym's) and its score."""

    trajectory: Trajectory
    reward: float
    reward_known: bool
    score: Score | None = None

    def summary(self, run: Path) -> dict[str, Any]:
        t, s = self.trajectory, self.score
        out: dict[str, Any] = {"episode_id": t.episode_id, "task_id": t.task_id, "status": t.status,
                               "reward": self.reward, "reward_known": self.reward_known,
                               "turns": max((step.turn for step in t.steps), default=0), "run": str(run)}
        if s is not None:
            out.update(success=s.success, overall=s.overall, metrics=s.metrics, constraints=s.constraints,
                       state=_state(s), judges=s.judges,
                       dimensions={k: v.model_dump(mode="json") for k, v in s.dimensions.items()})
        return out


class EpisodeService:
    def __init__(self, ctx: RolloutContext, tasks: Sequence[Task], run: Path, *, judges: JudgeSetup,
                 defaults: EpisodeDefaults | None = None) -> None:
        self.ctx, self.run, self.judges = ctx, run, judges
        self.defaults = defaults or EpisodeDefaults()
        self.tasks = {t.id: t for t in tasks}
        self.store = TrajectoryStore(run)
        self.store.open(resume=True)
        self.stored = 0
        self._serial = itertools.count(1)

    # --- the client's requests --------------------------------------------------------------------
    def list_tasks(self) -> list[dict[str, Any]]:
        """What a client may know before it starts: the public part of each task, never the answer key."""
        out = []
        for task in self.tasks.values():
            public = task.public()
            out.append({"id": public.id, "query": public.query,
                        "constraints": list(public.constraints), "tools": len(public.tools)})
        return out

    async def start(self, state: SessionState, task_id: str, *, seed: int = 0, mode: str | None = None,
                    policy: str | None = None, access: str | None = None, agent: str | None = None) -> dict[str, Any]:
        if state.open:
            raise UsageError("an episode is open in this session; submit it before starting another")
        task = self.tasks.get(task_id)
        if task is None:
            raise UsageError(f"no task {task_id!r}; list_tasks gives the ids")
        mode, policy = mode or self.defaults.mode, policy or self.defaults.policy
        access, agent = access or self.defaults.access, agent or self.defaults.agent
        state.started += 1
        salt = f"{episode_id(task.id, agent, mode, policy, seed)}\x1f{state.key}\x1f{state.started}"
        served_id = hashlib.sha256(salt.encode()).hexdigest()[:20]
        driver = EpisodeDriver(self.ctx, task, mode=mode, policy=policy, access=access, agent=agent, seed=seed,
                               episode_id=served_id)
        first = await driver.start()
        state.driver = driver
        return {**first, "episode_id": served_id, "task_id": task.id, "seed": seed, "mode": mode, "policy": policy,
                "access": access, "agent": agent, "max_turns": driver.episode.max_turns}

    async def act(self, state: SessionState, action: dict[str, Any]) -> tuple[Step, Ended | None]:
        """One action in the session's episode; the ended episode (stored) when this action ended it."""
        driver = self._driver(state)
        try:
            step = await driver.act(action)
        except EpisodeInfraError as exc:
            trajectory = await driver.end("infra_error", infra=exc)
            return Step(None, trajectory=trajectory), await self._ended(trajectory, 0.0, False)
        if step.trajectory is None:
            return step, None
        return step, await self._ended(step.trajectory, step.reward, step.reward_known, state=step.state)

    async def abandon(self, state: SessionState, status: EpisodeStatus = "abandoned") -> Ended | None:
        """The session ended with its episode open: record it, so nothing a client did is lost."""
        async with state.lock:
            if not state.open:
                return None
            assert state.driver is not None
            trajectory = await state.driver.end(status)
            return await self._ended(trajectory, 0.0, False, score=False)

    # --- internals --------------------------------------------------------------------------------
    def _driver(self, state: SessionState) -> EpisodeDriver:
        if not state.open:
            raise UsageError("no episode is open in this session; call start_episode first")
        assert state.driver is not None
        return state.driver

    async def _ended(self, trajectory: Trajectory, reward: float, known: bool, *, score: bool = True,
                     state: StateDiffResult | None = None) -> Ended:
        """Stored (its line in the run folder before the answer, fsynced just after: `TrajectoryStore.write`)
        and scored. Offline, nothing here waits: the step runs to its answer without yielding the event loop."""
        self.store.write(trajectory)
        self.stored += 1
        ended = Ended(trajectory, reward, known)
        if score:
            ended.score = await self._score(trajectory, state)
        return ended

    async def _score(self, trajectory: Trajectory, state: StateDiffResult | None) -> Score:
        """Verifiable metrics and the state diff (the reward's, not computed again) always; the judge
        ensemble when judges are configured. Offline it is ~0.5 ms of CPU, run on the loop: in a worker
        thread it would hold the GIL against the loop and the answer would wait for every other session."""
        if self.judges.online:
            return await score_trajectory(trajectory, self.judges, state)
        return score_offline(trajectory, self.judges, state)

    async def flush(self) -> None:
        """Every stored line is fsynced (a server's shutdown)."""
        await self.store.flush()


def _state(score: Score) -> dict[str, Any] | None:
    """The state diff against the task's ground truth; None for tasks that carry none."""
    details = score.details or {}
    if "state_diff" not in details:
        return None
    return {"diff": details["state_diff"], "missed": details.get("state_missed", []),
            "unwanted": details.get("state_unwanted", [])}
