"""Shared helpers for commands: resolve the environment and workspace from the root options."""

from __future__ import annotations

import json
from typing import Any

import click

from cworld.environment import Environment, Workspace


def environment(ctx: click.Context) -> Environment:
    return Environment.resolve(ctx.find_root().obj.get("env_dir"))


def workspace(ctx: click.Context) -> Workspace:
    return Workspace.resolve(ctx.find_root().obj.get("workspace"))


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
