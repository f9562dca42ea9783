"""`cworld openenv serve`: cworld episodes behind openenv-core's WebSocket server (the cworld[openenv] extra),
in one process or in worker processes sharing the port."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from cworld.cli.common import environment, workspace
from cworld.errors import UsageError

if TYPE_CHECKING:
    from cworld.environment import Environment, Workspace
    from cworld.harness.doors import DoorConfig
    from cworld.serve.workers import WorkerLink

MODES = ("live", "synthesized", "hybrid")
# No per-message deflate: an observation is a few KB, and compressing each one cost the server's event loop
# more than sending it (hundreds of sessions share that loop).
UVICORN: dict[str, Any] = {"log_level": "warning", "ws_max_size": 16 * 1024 * 1024, "ws_per_message_deflate": False}


@dataclass(frozen=True)
class OpenEnvSpec:
    """What each worker process builds its server from."""

    door: DoorConfig
    env: Environment
    ws: Workspace
    host: str
    port: int
    max_sessions: int


@click.group("openenv")
def command() -> None:
    """cworld as an OpenEnv environment (reset/step over WebSocket), for TRL, SkyRL, Unsloth and others."""


@command.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", type=int, default=8000, show_default=True)
@click.option("--tasks", "tasks_file", type=click.Path(dir_okay=False), help="Tasks JSONL (default: the workspace's latest).")
@click.option("--mode", type=click.Choice(MODES), default="synthesized", show_default=True,
              help="Default mode of an episode (a client may pick another in reset).")
@click.option("--policy", default="default", show_default=True, help="Default fault policy.")
@click.option("--access", default="full", show_default=True, help="Default tool access: full, search or rag-K.")
@click.option("--max-turns", type=int, default=None, help="Turn limit per episode (default: each task's budget).")
@click.option("--max-sessions", type=int, default=256, show_default=True,
              help="Concurrent WebSocket sessions per worker.")
@click.option("--out", type=click.Path(file_okay=False), help="Run folder for the trajectories (default: a new one).")
@click.option("--workers", type=int, default=None,
              help="Worker processes sharing the port, each WebSocket session (an episode) on one of them (default: "
                   "the cores this process may use); 1 serves in this process.")
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, tasks_file: str | None, mode: str, policy: str, access: str,
          max_turns: int | None, max_sessions: int, out: str | None, workers: int | None) -> None:
    """Serve episodes to OpenEnv clients at ws://HOST:PORT/ws: reset(task=, seed=) starts one, each step is a
    tool call, a search, a message or the final answer. Trajectories go to a run folder of the workspace."""
    from cworld.harness.doors import DoorConfig
    from cworld.serve.workers import check_workers, default_workers

    if max_sessions < 1:
        raise UsageError(f"--max-sessions must be at least 1, got {max_sessions}")
    count = check_workers(default_workers() if workers is None else workers)
    door = DoorConfig(tasks=tasks_file, mode=mode, policy=policy, access=access, max_turns=max_turns, out=out,
                      agent="openenv", run_prefix="openenv")
    if count == 1:
        _serve_here(door, environment(ctx), workspace(ctx), host, port, max_sessions)
    else:
        _serve_workers(OpenEnvSpec(door, environment(ctx), workspace(ctx), host, port, max_sessions), count)


def _serve_here(door: DoorConfig, env: Environment, ws: Workspace, host: str, port: int, max_sessions: int) -> None:
    """One process: every session on this event loop."""
    import uvicorn

    from cworld.harness.doors import episode_service
    from cworld.harness.openenv_env import build_app
    from cworld.serve.workers import settle_heap

    service = episode_service(door, env=env, workspace=ws)
    app = build_app(service, max_sessions=max_sessions)
    settle_heap()
    click.echo(f"serving {len(service.tasks)} task(s) at ws://{host}:{port}/ws; trajectories in "
               f"{service.run / 'trajectories.jsonl'}", err=True)
    uvicorn.run(app, host=host, port=port, **UVICORN)


def _serve_workers(spec: OpenEnvSpec, count: int) -> None:
    """`count` worker processes, each listening on host:port itself (SO_REUSEPORT): the kernel hands each new
    connection, so each session and its episode, to one of them, and no process relays its messages."""
    from dataclasses import replace

    from cworld.cli.common import read_tasks
    from cworld.controller import load_policy
    from cworld.harness.doors import with_run_folder
    from cworld.serve.workers import Workers, port_is_free, running, sigterm_as_interrupt

    spec.door.check()
    tasks = read_tasks(spec.ws, spec.door.tasks)
    load_policy(spec.env, spec.door.policy)  # bad input is one line before a run folder or a worker is made
    port_is_free(spec.host, spec.port)
    spec = replace(spec, door=with_run_folder(spec.door, spec.ws))  # one run folder for every worker
    with running(Workers(count, _worker, spec)) as workers, sigterm_as_interrupt():
        click.echo(f"serving {len(tasks)} task(s) at ws://{spec.host}:{spec.port}/ws with {count} workers; "
                   f"trajectories in {spec.door.out}/trajectories.jsonl", err=True)
        workers.wait()


def _worker(link: WorkerLink, spec: OpenEnvSpec) -> None:
    """One worker process: the door's service and app as one process builds them, on its own socket of the
    shared port."""
    import uvicorn

    from cworld.harness.doors import episode_service
    from cworld.harness.openenv_env import build_app
    from cworld.serve.workers import GRACEFUL_S, reuse_port_socket, settle_heap

    service = episode_service(spec.door, env=spec.env, workspace=spec.ws)
    app = build_app(service, max_sessions=spec.max_sessions)
    settle_heap()
    link.built()
    link.released()
    sock = reuse_port_socket(spec.host, spec.port)
    link.serving()
    uvicorn.Server(uvicorn.Config(app, timeout_graceful_shutdown=GRACEFUL_S, **UVICORN)).run(sockets=[sock])
