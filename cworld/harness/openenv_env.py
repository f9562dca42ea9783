"""cworld episodes as an OpenEnv environment (the `cworld[openenv]` extra), on openenv-core's own server.

    cworld openenv serve --tasks tasks.jsonl --port 8000           # ws://127.0.0.1:8000/ws

    from openenv.core import GenericEnvClient
    async with GenericEnvClient(base_url="http://127.0.0.1:8000") as env:
        result = await env.reset(task="sbx-mail-forward-audit", seed=5, policy="stress")
        result = await env.step({"tool": "mail/search_messages", "arguments": {"query": "audit"}})
        result = await env.step({"final": "Done."})        # result.done, result.reward

The app is openenv-core's `HTTPEnvServer` (its WebSocket protocol, session pool, schemas and health
routes); cworld supplies the `Environment` and its pydantic types:

- `CworldAction`: the gym's actions: a tool call (`tool`, `arguments`), a search (`search`, `k`), a turn
  without a call (`message`) or the final answer (`final`; ends the episode).
- `CworldObservation`: what the gym gives: `turn`, `result` (text, is_error, error_class, structured),
  `user_messages` (the user's mid-episode messages), `tools` (the callable tools with their schemas), the
  step's `interventions`; after reset also `task` and `constraints` (the request as the user states it).
  The last one carries `done`, the gym's `reward` and `summary` (status, the verifiable metrics, the run).
- `reset(task=ID, seed=0, mode=, policy=, access=, agent=)`: a fresh episode (the task defaults to the
  file's task number `seed % len(tasks)`). A reset with an episode open stores that one as `abandoned`.

Each WebSocket session gets its own `CworldEnvironment`, so its own episode (controller, sandbox session,
World Engine log). The episodes run through `cworld serve`'s `EpisodeService`: one run folder, the gym's
reward, the verifiable judges. A session that closes with its episode open stores it `abandoned`.
Only the production routes are served (`/ws`, `/health`, `/schema`, `/metadata`): OpenEnv's stateless
HTTP `/reset` and `/step` build a new environment per request, which cannot hold an episode.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from typing import Any

from pydantic import Field

from cworld.errors import UsageError

try:
    from openenv.core.env_server.http_server import HTTPEnvServer
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, ServerMode, State
except ImportError:  # pragma: no cover - exercised only without the extra
    raise UsageError("openenv-core is not installed; install the extra: pip install 'cworld[openenv]'") from None

from cworld.serve.episodes import EpisodeService, SessionState

ABANDON_TIMEOUT_S = 60.0


class CworldAction(Action):
    """One gym action; exactly one of `tool`, `search`, `message` and `final`."""

    tool: str | None = Field(None, description="a tool id (server/name) to call")
    arguments: dict[str, Any] = Field(default_factory=dict, description="the tool call's arguments")
    search: str | None = Field(None, description="a registry search query; found tools become callable")
    k: int = Field(5, description="how many tools a search returns")
    message: str | None = Field(None, description="a turn without a tool call")
    final: str | None = Field(None, description="the final answer; ends the episode")

    def as_gym(self) -> dict[str, Any]:
        """The gym's action dict. Checked here rather than by a pydantic validator: openenv-core cannot send a
        validator's error back to the client, and this message reaches it as an execution error."""
        kinds = [name for name in ("tool", "search", "message", "final") if getattr(self, name) is not None]
        if len(kinds) != 1:
            raise UsageError(f"an action sets exactly one of tool, search, message, final; got {kinds or 'none'}")
        if self.tool is not None:
            return {"tool": self.tool, "arguments": self.arguments}
        if self.search is not None:
            return {"search": self.search, "k": self.k}
        if self.message is not None:
            return {"message": self.message}
        return {"final": self.final}


class CworldObservation(Observation):
    turn: int = 0
    result: dict[str, Any] | None = None
    user_messages: list[str] = Field(default_factory=list)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    interventions: list[dict[str, Any]] = Field(default_factory=list)
    task: str | None = None
    constraints: list[str] = Field(default_factory=list)
    context: str | None = None
    """After reset: the world's date and time and who the user is (what an LLM agent's system prompt says)."""
    episode_id: str | None = None
    max_turns: int | None = None
    summary: dict[str, Any] | None = None
    """Once the episode ended: status, reward_known, success, overall, metrics, constraints, run."""
    env_ms: float = 0.0
    """The environment's own time on this action (ms), for a trainer measuring overhead."""


class CworldState(State):
    task_id: str | None = None
    mode: str | None = None
    policy: str | None = None
    seed: int | None = None
    open: bool = False


class CworldEnvironment(Environment[CworldAction, CworldObservation, CworldState]):
    """One WebSocket session: at most one open cworld episode at a time."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    REQUIRES_SINGLE_THREAD_EXECUTOR = True
    """openenv-core runs a session's factory and `close` in an executor: a new thread per session unless this
    is set (then one thread for all). Ours are trivial (the episode is async, on the loop), so one thread."""

    def __init__(self, service: EpisodeService) -> None:
        super().__init__()
        self.service = service
        self.session = SessionState()
        self._state = CworldState()
        self._loop: asyncio.AbstractEventLoop | None = None

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> CworldObservation:
        raise UsageError("the cworld environment is asynchronous; use reset_async (the WebSocket server does)")

    def step(self, action: CworldAction, timeout_s: float | None = None, **kwargs: Any) -> CworldObservation:
        raise UsageError("the cworld environment is asynchronous; use step_async (the WebSocket server does)")

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None, task: str | None = None,
                          mode: str | None = None, policy: str | None = None, access: str | None = None,
                          agent: str | None = None, **kwargs: Any) -> CworldObservation:
        self._loop = asyncio.get_running_loop()
        await self.service.abandon(self.session)
        seed = 0 if seed is None else int(seed)
        task_id = task or list(self.service.tasks)[seed % len(self.service.tasks)]
        first = await self.service.start(self.session, task_id, seed=seed, mode=mode, policy=policy, access=access,
                                         agent=agent or "openenv")
        self._state = CworldState(episode_id=first["episode_id"], step_count=0, task_id=task_id, mode=first["mode"],
                                  policy=first["policy"], seed=seed, open=True)
        return CworldObservation(turn=first["turn"], result=first["result"], user_messages=first["user_messages"],
                                 tools=first["tools"], task=first["task"], constraints=first["constraints"],
                                 context=first.get("context"),
                                 episode_id=first["episode_id"], max_turns=first["max_turns"], reward=0.0)

    async def step_async(self, action: CworldAction, timeout_s: float | None = None,
                         **kwargs: Any) -> CworldObservation:
        started = time.perf_counter()
        step, ended = await self.service.act(self.session, action.as_gym())
        self._state.step_count += 1
        env_ms = (time.perf_counter() - started) * 1000
        if ended is None:
            obs = step.observation or {}
            return CworldObservation(turn=obs.get("turn", 0), result=obs.get("result"),
                                     user_messages=obs.get("user_messages", []), tools=obs.get("tools", []),
                                     interventions=step.interventions, episode_id=self._state.episode_id,
                                     reward=0.0, env_ms=env_ms)
        self._state.open = False
        summary = ended.summary(self.service.run)
        return CworldObservation(turn=summary["turns"], interventions=step.interventions, done=True,
                                 reward=ended.reward, episode_id=ended.trajectory.episode_id, env_ms=env_ms,
                                 summary={k: v for k, v in summary.items() if k not in ("judges", "dimensions")})

    @property
    def state(self) -> CworldState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        from cworld import __version__

        return EnvironmentMetadata(name="cworld", version=__version__, description=(
            "cworld episodes: a task's tools (live sandbox apps or the World Engine), faults, the user's "
            "mid-episode messages; actions are tool calls, searches, messages and the final answer"))

    def close(self) -> None:
        """The session ended: an open episode is stored `abandoned` (on the server's loop; the server calls
        close from a worker thread)."""
        if not self.session.open or self._loop is None:
            return
        coro = self.service.abandon(self.session)
        if _on_loop(self._loop):
            self._loop.create_task(coro)
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(coro, self._loop).result(ABANDON_TIMEOUT_S)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def build_app(service: EpisodeService, *, max_sessions: int = 256) -> Any:
    """openenv-core's server over the service: a FastAPI app with the WebSocket route `/ws`."""
    from fastapi import FastAPI

    server = HTTPEnvServer(functools.partial(CworldEnvironment, service), CworldAction, CworldObservation,
                           max_concurrent_envs=max_sessions)
    app = FastAPI(title="cworld (OpenEnv)")
    server.register_routes(app, mode=ServerMode.PRODUCTION)
    app.router.on_shutdown.append(service.flush)  # after the sessions closed: every line written is fsynced
    app.add_middleware(QuietClose)
    return app


class QuietClose:
    """ASGI middleware: a WebSocket close sent to a client that has already gone is a no-op.

    openenv-core's endpoint closes the socket after the client's own `close` message; the client has
    hung up by then, uvicorn raises `ClientDisconnected` (an `OSError`) from that send, and logs it with a
    full traceback: at hundreds of sessions a tenth of the server's CPU went to formatting those."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "websocket":
            await self.app(scope, receive, send)
            return

        async def quiet_send(message: Any) -> None:
            try:
                await send(message)
            except OSError:
                if message.get("type") != "websocket.close":
                    raise

        await self.app(scope, receive, quiet_send)
