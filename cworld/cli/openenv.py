"""`cworld openenv serve`: cworld episodes behind openenv-core's WebSocket server (the cworld[openenv] extra)."""

from __future__ import annotations

import click

from cworld.cli.common import environment, workspace
from cworld.errors import UsageError

MODES = ("live", "synthesized", "hybrid")


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
@click.option("--max-sessions", type=int, default=256, show_default=True, help="Concurrent WebSocket sessions.")
@click.option("--out", type=click.Path(file_okay=False), help="Run folder for the trajectories (default: a new one).")
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, tasks_file: str | None, mode: str, policy: str, access: str,
          max_turns: int | None, max_sessions: int, out: str | None) -> None:
    """Serve episodes to OpenEnv clients at ws://HOST:PORT/ws: reset(task=, seed=) starts one, each step is a
    tool call, a search, a message or the final answer. Trajectories go to a run folder of the workspace."""
    import uvicorn

    from cworld.harness.doors import DoorConfig, episode_service
    from cworld.harness.openenv_env import build_app

    if max_sessions < 1:
        raise UsageError(f"--max-sessions must be at least 1, got {max_sessions}")
    door = DoorConfig(tasks=tasks_file, mode=mode, policy=policy, access=access, max_turns=max_turns, out=out,
                      agent="openenv", run_prefix="openenv")
    service = episode_service(door, env=environment(ctx), workspace=workspace(ctx))
    app = build_app(service, max_sessions=max_sessions)
    click.echo(f"serving {len(service.tasks)} task(s) at ws://{host}:{port}/ws; trajectories in "
               f"{service.run / 'trajectories.jsonl'}", err=True)
    # No per-message deflate: an observation is a few KB, and compressing each one cost the server's one
    # event loop more than sending it (hundreds of sessions share that loop).
    uvicorn.run(app, host=host, port=port, log_level="warning", ws_max_size=16 * 1024 * 1024,
                ws_per_message_deflate=False)
