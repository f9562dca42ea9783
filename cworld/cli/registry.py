"""`cworld registry build|show`: validate every server and write the registry to the workspace."""

from __future__ import annotations

import asyncio

import click
from rich.console import Console

from cworld.cli.common import echo_json, environment, json_option, workspace
from cworld.errors import UsageError
from cworld.registry.build import DEFAULT_PARALLEL, BuildReport, build_registry, load_report, summary
from cworld.registry.manifest import load_manifest
from cworld.registry.report import RichBuildProgress, failures_table, server_table


@click.group("registry")
def command() -> None:
    """The tool registry: validated tools, the validation report, the index and the dependency graph."""


@command.command("build")
@json_option
@click.option(
    "--only",
    multiple=True,
    metavar="ID",
    help="Validate only this server (repeatable); others keep their results.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=float,
    default=None,
    help="Seconds per server start and per call (default: each server's).",
)
@click.option("--force", is_flag=True, help="Validate every tool again, even when nothing changed.")
@click.option(
    "--parallel", type=int, default=DEFAULT_PARALLEL, show_default=True, help="Servers validated at once."
)
@click.pass_context
def build(
    ctx: click.Context,
    as_json: bool,
    only: tuple[str, ...],
    timeout_s: float | None,
    force: bool,
    parallel: int,
) -> None:
    """Start every server, validate every tool in three stages, write tools, report, index and graph."""
    env, ws = environment(ctx), workspace(ctx)
    console = Console(stderr=True)
    total = len(only) if only else len(load_manifest(env))
    bars = RichBuildProgress(total, console)
    with bars.bar:
        report = asyncio.run(
            build_registry(
                env,
                ws,
                only=list(only) or None,
                timeout_s=timeout_s,
                force=force,
                parallel=parallel,
                progress=bars.hooks(),
            )
        )
    if as_json:
        echo_json(summary(report))
        return
    _print(report, Console())
    Console().print(f"written to {ws.root / 'registry'}")


def _print(report: BuildReport, console: Console) -> None:
    console.print(server_table(report))
    failures = failures_table(report)
    if failures is not None:
        console.print(failures)
    console.print(f"index: {report.index}\ngraph: {report.graph}")


@command.command("show")
@json_option
@click.option("--full", is_flag=True, help="With --json: the whole validation report, every tool.")
@click.pass_context
def show(ctx: click.Context, as_json: bool, full: bool) -> None:
    """The last build's validation report."""
    ws = workspace(ctx)
    report = load_report(ws)
    if report is None:
        raise UsageError(f"no registry in {ws.root}; run `cworld registry build` first")
    if as_json:
        echo_json(report.model_dump(mode="json") if full else summary(report))
        return
    _print(report, Console())
