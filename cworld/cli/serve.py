"""`cworld serve`: cworld episodes over MCP (stdio, or streamable HTTP on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cworld.cli.common import environment, workspace
from cworld.errors import UsageError

if TYPE_CHECKING:
    from cworld.environment import Workspace

MODES = ("live", "synthesized", "hybrid")


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
              help="HTTP sessions open at once; past it a new one is answered 503 with Retry-After.")
@click.option("--max-body-bytes", type=click.IntRange(min=1024), default=1024 * 1024, show_default=True,
              help="The largest HTTP request body; a larger one is answered 413.")
@click.pass_context
def command(ctx: click.Context, transport: str, port: int, token_env: str | None, tasks_file: str | None, mode: str,
            policy: str, access: str, max_turns: int | None, out: str | None, offline: bool, max_sessions: int,
            max_body_bytes: int) -> None:
    """Serve episodes over MCP: list_tasks, start_episode, the task's tools, submit -> reward.
    Trajectories go to a run folder of the workspace, for `cworld judge`, `report` and `export-sft`."""
    from cworld.agents.toolbox import AccessMode
    from cworld.cli.judge import _gateway
    from cworld.config import serving_failure_policy
    from cworld.data_model import Task, read_jsonl
    from cworld.judges import JudgeContent, JudgeSetup
    from cworld.registry.tools import environment_tools
    from cworld.rollout import RolloutContext
    from cworld.serve import (
        EpisodeDefaults,
        EpisodeService,
        RegistryBrowse,
        build_server,
        serve_http,
        serve_stdio,
    )

    token = _token(transport, token_env)
    env, ws = environment(ctx), workspace(ctx)
    AccessMode.parse(access)
    if max_turns is not None and max_turns < 1:
        raise UsageError(f"--max-turns must be at least 1, got {max_turns}")
    tasks = read_jsonl(Path(tasks_file) if tasks_file else ws.latest("tasks"), Task)
    if not tasks:
        raise UsageError("the tasks file holds no tasks; create some with `cworld synth` or pass --tasks FILE")
    rollout = RolloutContext(env, ws, environment_tools(env, ws).tasks_tools(tasks), max_turns=max_turns,
                             on_model_failure=serving_failure_policy(ws.root))
    rollout.policy(policy)
    judges = JudgeSetup(JudgeContent.from_environment(env), tools=rollout.tools)
    gateway = None if offline else _gateway(ws, [], judges)
    if offline:
        judges.offline_reason = "judges turned off with `cworld serve --offline`"
    run = _run_folder(ws, out)
    service = EpisodeService(rollout, tasks, run, judges=judges,
                             defaults=EpisodeDefaults(mode=mode, policy=policy, access=access))
    server = build_server(service, RegistryBrowse.of(ws))
    click.echo(f"serving {len(tasks)} task(s); trajectories in {run / 'trajectories.jsonl'}", err=True)
    if transport == "http":
        click.echo(f"listening on http://127.0.0.1:{port}/mcp" + (" (bearer token required)" if token else ""),
                   err=True)
    try:
        asyncio.run(serve_stdio(server) if transport == "stdio" else
                    serve_http(server, port, token, max_sessions=max_sessions, max_body_bytes=max_body_bytes))
    except KeyboardInterrupt:
        pass
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
