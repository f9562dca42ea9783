"""Shared helpers for commands: resolve the environment and workspace from the root options."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cworld.environment import Environment, Workspace

if TYPE_CHECKING:
    from cworld.config import Role
    from cworld.data_model import Task, ToolSpec


def environment(ctx: click.Context) -> Environment:
    return Environment.resolve(ctx.find_root().obj.get("env_dir"))


def workspace(ctx: click.Context) -> Workspace:
    return Workspace.resolve(ctx.find_root().obj.get("workspace"))


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")


def preflight(ws: Workspace, *, agents: Iterable[str] = (), roles: Iterable[Role] = ()) -> None:
    """Before the first episode or call: check the model behind each LLM agent named and each model of
    `roles`, once (`cworld.llm.preflight`). Rule-based agents and unconfigured roles need nothing, so an
    offline command neither checks nor imports litellm."""
    from cworld.agents import is_rule_based
    from cworld.config import load_models

    models = load_models(ws.root)
    named = [a for a in agents if not is_rule_based(a)]
    if not named and not any(models.configured(r) for r in roles):
        return
    from cworld.llm.preflight import preflight as check
    from cworld.llm.preflight import role_models

    check([*(("agent", models.for_model("agent", a)) for a in named), *role_models(models, roles)])


def run_tools(env: Environment, ws: Workspace, runs: Iterable[Path]) -> dict[str, ToolSpec]:
    """The tools the tasks of these run folders name, as `cworld run` got them (the harvested pool's too,
    without a build): what the commands that read run folders score, report and export against."""
    from cworld.registry.tools import environment_tools
    from cworld.rollout import run_tasks

    return environment_tools(env, ws).tasks_tools([t for run in runs for t in run_tasks(run)])


def read_tasks(ws: Workspace, tasks_file: str | Path | None, limit: int | None = None) -> list[Task]:
    """The tasks of --tasks (default: the workspace's latest tasks file), the first `limit` of them; a bad
    line names FILE:LINE, and a file without tasks says so."""
    from cworld.data_model import Task, read_jsonl
    from cworld.errors import UsageError

    path = Path(tasks_file) if tasks_file else ws.latest("tasks")
    tasks = read_jsonl(path, Task)[: limit or None]
    if not tasks:
        raise UsageError(f"{path}: the tasks file holds no tasks; create some with `cworld synth` or pass --tasks FILE")
    return tasks
