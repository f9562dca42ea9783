"""`cworld serve`: cworld episodes over MCP (stdio, or streamable HTTP on 127.0.0.1, in one process or in
worker processes behind one front)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cworld.cli.common import environment, workspace
from cworld.errors import UsageError

if TYPE_CHECKING:
    from cworld.data_model import Task
    from cworld.environment import Environment, Workspace
    from cworld.llm import Gateway
    from cworld.serve import EpisodeService
    from cworld.serve.workers import WorkerLink

MODES = ("live", "synthesized", "hybrid")


@dataclass(frozen=True)
class ServeSpec:
    """What builds the episode server, in this process or in each worker (spawned workers get a copy)."""

    env: Environment
    ws: Workspace
    tasks_file: str | None
    mode: str
    policy: str
    access: str
    max_turns: int | None
    run: Path
    offline: bool
    max_body_bytes: int
    sockets: list[str] = field(default_factory=list)
    """Worker i listens on `sockets[i]` (a Unix socket the front reaches)."""
    caps: list[int] = field(default_factory=list)
    """Worker i holds at most `caps[i]` sessions (its share of --max-sessions)."""


@click.command("serve")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@click.option("--port", type=int, default=8765, show_default=True, help="HTTP port on 127.0.0.1.")
@click.option("--token-env", metavar="NAME", help="Env var holding a bearer token that HTTP clients must send.")
@click.option("--tasks", "tasks_file", type=click.Path(dir_okay=False), help="Tasks JSONL (default: the workspace's latest).")
@click.option("--mode", type=click.Choice(MODES), default="synthesized", show_default=True,
              help="Default mode of an episode (a client may pick another in start_episode).")
@click.option("--policy", default="default", show_default=True, help="Default fault policy.")
@click.option("--access", default="full", show_default=True, help="Default tool access: full, search or rag-K.")
@click.option("--max-turns", type=int, default=None, help="Turn limit per episode (default: each task's budget).")
@click.option("--out", type=click.Path(file_okay=False), help="Run folder for the trajectories (default: a new one).")
@click.option("--offline", is_flag=True, help="Rewards without the LLM judges, even when judges are configured.")
@click.option("--max-sessions", type=click.IntRange(min=1), default=64, show_default=True,
              help="HTTP sessions open at once, over all workers; past it a new one is answered 503 with Retry-After.")
@click.option("--max-body-bytes", type=click.IntRange(min=1024), default=1024 * 1024, show_default=True,
              help="The largest HTTP request body; a larger one is answered 413.")
@click.option("--workers", type=int, default=None,
              help="HTTP: worker processes behind one front, each session kept on its worker (default: the cores "
                   "this process may use); 1 serves in this process. stdio always serves in one.")
@click.pass_context
def command(ctx: click.Context, transport: str, port: int, token_env: str | None, tasks_file: str | None, mode: str,
            policy: str, access: str, max_turns: int | None, out: str | None, offline: bool, max_sessions: int,
            max_body_bytes: int, workers: int | None) -> None:
    """Serve episodes over MCP: list_tasks, start_episode, the task's tools, submit -> reward.
    Trajectories go to a run folder of the workspace, for `cworld judge`, `report` and `export-sft`."""
    from cworld.agents.toolbox import AccessMode
    from cworld.cli.common import read_tasks
    from cworld.controller import load_policy
    from cworld.serve.transport import HOST
    from cworld.serve.workers import port_is_free

    count = _workers(transport, workers, max_sessions)
    token = _token(transport, token_env)
    env, ws = environment(ctx), workspace(ctx)
    AccessMode.parse(access)
    if max_turns is not None and max_turns < 1:
        raise UsageError(f"--max-turns must be at least 1, got {max_turns}")
    tasks = read_tasks(ws, tasks_file)
    load_policy(env, policy)  # bad input is one line before a run folder or a worker is made
    if count > 1:
        port_is_free(HOST, port)
    spec = ServeSpec(env, ws, tasks_file, mode, policy, access, max_turns, _run_folder(ws, out), offline,
                     max_body_bytes)
    click.echo(f"serving {len(tasks)} task(s); trajectories in {spec.run / 'trajectories.jsonl'}", err=True)
    if count > 1:
        _serve_workers(spec, count, port, token, max_sessions)
        return
    service, gateway = _service(spec, tasks)
    try:
        _serve_here(service, spec, transport, port, token, max_sessions)
    finally:
        if gateway is not None:
            gateway.close()


def _workers(transport: str, workers: int | None, max_sessions: int) -> int:
    """How many processes serve: stdio one; HTTP --workers (default: the cores), at most one per session."""
    from cworld.serve.workers import check_workers, default_workers

    if transport == "stdio":
        if workers is not None and workers != 1:
            raise UsageError("--workers applies to --transport http; stdio serves its one client in one process")
        return 1
    count = check_workers(default_workers() if workers is None else workers)
    if count > max_sessions:
        click.echo(f"{count} workers for --max-sessions {max_sessions}: serving with {max_sessions}", err=True)
    return min(count, max_sessions)


def _service(spec: ServeSpec, tasks: list[Task] | None = None) -> tuple[EpisodeService, Gateway | None]:
    """The episode service `spec` describes (over `tasks` when read already), and the judges' gateway (None
    offline or without judges)."""
    from cworld.cli.judge import _gateway
    from cworld.config import serving_failure_policy
    from cworld.data_model import Task, read_jsonl
    from cworld.judges import JudgeContent, JudgeSetup
    from cworld.registry.tools import environment_tools
    from cworld.rollout import RolloutContext
    from cworld.serve import EpisodeDefaults, EpisodeService

    env, ws = spec.env, spec.ws
    if tasks is None:
        tasks = read_jsonl(Path(spec.tasks_file) if spec.tasks_file else ws.latest("tasks"), Task)
    rollout = RolloutContext(env, ws, environment_tools(env, ws).tasks_tools(tasks), max_turns=spec.max_turns,
                             on_model_failure=serving_failure_policy(ws.root))
    rollout.policy(spec.policy)
    judges = JudgeSetup(JudgeContent.from_environment(env), tools=rollout.tools)
    gateway = None if spec.offline else _gateway(ws, [], judges)
    if spec.offline:
        judges.offline_reason = "judges turned off with `cworld serve --offline`"
    service = EpisodeService(rollout, tasks, spec.run, judges=judges,
                             defaults=EpisodeDefaults(mode=spec.mode, policy=spec.policy, access=spec.access))
    return service, gateway


def _serve_here(service: EpisodeService, spec: ServeSpec, transport: str, port: int, token: str | None,
                max_sessions: int) -> None:
    """Today's one process: stdio, or HTTP with every session on this event loop."""
    from cworld.serve import RegistryBrowse, build_server, serve_http, serve_stdio
    from cworld.serve.workers import settle_heap

    server = build_server(service, RegistryBrowse.of(spec.ws))
    settle_heap()
    if transport == "http":
        click.echo(f"listening on http://127.0.0.1:{port}/mcp" + (" (bearer token required)" if token else ""),
                   err=True)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_stdio(server) if transport == "stdio" else
                    serve_http(server, port, token, max_sessions=max_sessions, max_body_bytes=spec.max_body_bytes))


def _serve_workers(spec: ServeSpec, count: int, port: int, token: str | None, max_sessions: int) -> None:
    """`count` worker processes on private Unix sockets, the front on 127.0.0.1:port routing each session
    to its worker; back when a signal stops the front (or a worker ended: one line, non-zero exit)."""
    from cworld.serve.transport import HOST, serve_front
    from cworld.serve.workers import Workers, running, sigterm_after_uvicorn, split_sessions

    with tempfile.TemporaryDirectory(prefix="cworld-serve-") as folder:  # mode 0700: only this user reaches it
        sockets = [os.path.join(folder, f"w{i}.sock") for i in range(count)]
        workers = Workers(count, _http_worker, replace(spec, sockets=sockets,
                                                       caps=split_sessions(max_sessions, count)))
        with running(workers):
            click.echo(f"listening on http://{HOST}:{port}/mcp with {count} workers"
                       + (" (bearer token required)" if token else ""), err=True)
            with sigterm_after_uvicorn():
                asyncio.run(serve_front(workers, sockets, port, token, max_sessions=max_sessions,
                                        max_body_bytes=spec.max_body_bytes))


def _http_worker(link: WorkerLink, spec: ServeSpec) -> None:
    """One worker process: the service as one process builds it, its MCP app on its Unix socket (no token:
    the front checked it; the socket's folder is this user's alone)."""
    import uvicorn

    from cworld.serve import RegistryBrowse, build_server, http_app
    from cworld.serve.workers import GRACEFUL_S, settle_heap, unix_socket

    service, gateway = _service(spec)
    try:
        app = http_app(build_server(service, RegistryBrowse.of(spec.ws)), None, max_sessions=spec.caps[link.index],
                       max_body_bytes=spec.max_body_bytes)
        settle_heap()
        link.built()
        link.released()
        sock = unix_socket(spec.sockets[link.index])
        link.serving()
        config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=GRACEFUL_S)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        if gateway is not None:
            gateway.close()


def _token(transport: str, token_env: str | None) -> str | None:
    if not token_env:
        return None
    if transport == "stdio":
        raise UsageError("--token-env applies to --transport http only; stdio is private to the client process")
    token = os.environ.get(token_env)
    if not token:
        raise UsageError(f"--token-env {token_env}: that env var is not set; export it or drop --token-env")
    return token


def _run_folder(ws: Workspace, out: str | None) -> Path:
    if out:
        folder = Path(out).expanduser().resolve()
        ws.mark_latest("run", folder)
        return folder
    return ws.new_run_dir()
