"""`cworld registry build|show|harvest`: validate every server and write the registry to the workspace;
harvest real MCP server packages into schema-only catalogs."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path

import click
from rich.console import Console

from cworld.cli.common import echo_json, environment, json_option, workspace
from cworld.data_model import read_json
from cworld.environment import Environment
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
@click.option("--harvested", is_flag=True,
              help="Also load registry/catalogs/harvested/ (schema-only tools of harvested real servers).")
@click.option("--no-index", is_flag=True,
              help="Write tools and report only; no search index or graph (episodes then search in-process).")
@click.option("--no-progress", is_flag=True, help="No progress bars.")
@click.pass_context
def build(
    ctx: click.Context,
    as_json: bool,
    only: tuple[str, ...],
    timeout_s: float | None,
    force: bool,
    parallel: int,
    harvested: bool,
    no_index: bool,
    no_progress: bool,
) -> None:
    """Start every server, validate every tool in three stages, write tools, report, index and graph."""
    os.environ.setdefault("TQDM_DISABLE", "1")  # the embedder's own progress bars would garble ours
    env, ws = environment(ctx), workspace(ctx)
    console = Console(stderr=True)
    total = len(only) if only else len(load_manifest(env, harvested=harvested))
    bars = RichBuildProgress(total, console, enabled=not no_progress)
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
                harvested=harvested,
                with_index=not no_index,
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
@click.option("--harvest", "show_harvest", is_flag=True,
              help="The harvested catalog instead: servers, tools, categories, failure classes.")
@click.pass_context
def show(ctx: click.Context, as_json: bool, full: bool, show_harvest: bool) -> None:
    """The last build's validation report (or, with --harvest, the harvested catalog's summary)."""
    if show_harvest:
        _show_harvest(environment(ctx), as_json)
        return
    ws = workspace(ctx)
    report = load_report(ws)
    if report is None:
        raise UsageError(f"no registry in {ws.root}; run `cworld registry build` first")
    if as_json:
        echo_json(report.model_dump(mode="json") if full else summary(report))
        return
    _print(report, Console())


def _show_harvest(env: Environment, as_json: bool) -> None:
    from cworld.registry.harvest.catalog import SUMMARY, harvested_dir
    from cworld.registry.harvest.report import harvest_tables

    path = harvested_dir(env) / SUMMARY
    data = read_json(path, UsageError, str(path), missing=f"{path}: no harvest yet; run `cworld registry harvest`")
    if as_json:
        echo_json({k: v for k, v in data.items() if k != "servers"} if isinstance(data, dict) else data)
        return
    console = Console()
    for table in harvest_tables(data, console.width):
        console.print(table)


@command.command("harvest")
@click.option("--only", multiple=True, metavar="NAME", help="Harvest only this entry of harvest.yaml (repeatable).")
@click.option("--jobs", type=int, default=2, show_default=True, help="Servers installed and listed at once.")
@click.option("--list", "list_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The package list (default: the environment's registry/harvest.yaml).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the catalog goes (default: the environment's registry/catalogs/harvested).")
@click.option("--timeout", "timeout_s", type=float, default=None,
              help="Seconds for the handshake and for each listing (default: 30).")
@click.option("--retry-failed", is_flag=True, help="Try again the servers that failed last time.")
@click.option("--force", is_flag=True, help="Harvest every entry again, even those already done.")
@click.pass_context
def harvest_command(ctx: click.Context, only: tuple[str, ...], jobs: int, list_path: Path | None,
                    out: Path | None, timeout_s: float | None, retry_failed: bool, force: bool) -> None:
    """Install real MCP server packages, list their tools without real credentials, write the catalog.

    Resumes where it stopped: servers already harvested (ok or failed) are skipped unless asked for.
    """
    from cworld.registry.harvest.catalog import harvested_dir
    from cworld.registry.harvest.entries import harvest_list_path, load_harvest_list
    from cworld.registry.harvest.netns import network_isolation
    from cworld.registry.harvest.report import RichHarvestProgress, harvest_tables
    from cworld.registry.harvest.run import HarvestOptions, harvest, pending, restore_states, write_summary

    env, ws = environment(ctx), workspace(ctx)
    entries = load_harvest_list(list_path or harvest_list_path(env))
    known = {e.id for e in entries}
    if unknown := sorted(set(only) - known):
        raise UsageError(f"no entry {unknown} in the harvest list ({len(entries)} entries)")
    chosen = [e for e in entries if not only or e.id in only]
    options = HarvestOptions(out=out or harvested_dir(env), workspace=ws.path("harvest"), jobs=jobs,
                             force=force, retry_failed=retry_failed)
    if timeout_s is not None:
        options = dataclasses.replace(options, handshake_timeout_s=timeout_s, list_timeout_s=timeout_s)
    restored = restore_states(entries, options)
    todo = pending(chosen, options)
    console = Console(stderr=True)
    if restored:
        console.print(f"{restored} servers' outcomes taken from the committed {options.out / 'summary.json'}")
    console.print(f"{len(todo)} of {len(chosen)} servers to harvest ({len(chosen) - len(todo)} done before)")
    isolation = network_isolation()
    if todo and not isolation.offline:
        console.print(f"[yellow]{isolation.reason}: servers are listed with this machine's network[/yellow]",
                      soft_wrap=True)
    bars = RichHarvestProgress(len(todo), console)
    with bars.bar:
        asyncio.run(harvest(chosen, options, bars.hooks(), listed=entries))
    summary = write_summary(entries, options)
    Console().print(harvest_tables(summary)[2])
    Console().print(f"{summary['servers_ok']} of {summary['servers_tried']} servers, {summary['tools']} tools "
                    f"-> {options.out}")
