"""`cworld fidelity --live RUN --synth RUN` and `cworld fidelity experiment`: does synthesized execution
rank agents as live execution does (paper §5.4)?"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

from cworld.cli.common import environment, workspace

if TYPE_CHECKING:
    from cworld.environment import Workspace
    from cworld.report.fidelity_report import FidelityReport

_run_path = click.Path(path_type=Path)


def _report_options(fn: click.decorators.FC) -> click.decorators.FC:
    for option in reversed(
        [
            click.option(
                "--metric",
                default="overall_comparable",
                show_default=True,
                help="Score that ranks agents: overall_comparable (the overall score without the state-diff parts, "
                "which only live runs have), overall, success, or a metric of scores.jsonl (e.g. R_c).",
            ),
            click.option(
                "--bootstrap",
                default=2000,
                show_default=True,
                type=click.IntRange(100, 100000),
                help="Bootstrap draws over tasks for the intervals.",
            ),
            click.option("--seed", default=0, show_default=True, type=int, help="Seed of the bootstrap."),
            click.option(
                "--out",
                type=click.Path(file_okay=False, path_type=Path),
                help="Folder for fidelity.json and fidelity.html.",
            ),
            click.option("--json", "as_json", is_flag=True, help="Print the report as JSON."),
        ]
    ):
        fn = option(fn)
    return fn


@click.group("fidelity", invoke_without_command=True)
@click.option("--live", type=_run_path, help="Run folder with the live episodes.")
@click.option("--synth", type=_run_path, help="Run folder with the synthesized episodes.")
@click.option(
    "--reference",
    type=click.Path(dir_okay=False, path_type=Path),
    help="CSV of reference scores (agent,score[,task_id]) to correlate each run with.",
)
@_report_options
@click.pass_context
def command(
    ctx: click.Context,
    live: Path | None,
    synth: Path | None,
    reference: Path | None,
    metric: str,
    bootstrap: int,
    seed: int,
    out: Path | None,
    as_json: bool,
) -> None:
    """Rank agents by METRIC in a live and a synthesized run and report Spearman's rho and Kendall's tau
    with bootstrap intervals, per-task agreement and per-tool divergence (plus an HTML page)."""
    if ctx.invoked_subcommand is not None:
        return
    from cworld.judges import JudgeContent, resolve_run
    from cworld.registry.tools import environment_tools
    from cworld.report.fidelity_report import build_fidelity

    ws = workspace(ctx)
    if live is None and synth is None and reference is None:
        raise click.UsageError("give --live RUN and --synth RUN, or run `cworld fidelity experiment`")
    runs = {k: resolve_run(v, ws) if v is not None else None for k, v in (("live", live), ("synth", synth))}
    report = build_fidelity(
        live=runs["live"],
        synth=runs["synth"],
        tools=environment_tools(workspace=ws).episode(),
        content=JudgeContent.from_environment(environment(ctx)),
        metric=metric,
        reference=reference,
        bootstrap=bootstrap,
        seed=seed,
    )
    _finish(report, out or ws.path("reports") / time.strftime("fidelity-%Y%m%d-%H%M%S"), ws, as_json)


@command.command("experiment")
@click.option(
    "--tasks",
    "tasks_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Tasks JSONL (default: the workspace's latest).",
)
@click.option("--agents", help="Comma-separated agents (default: six graded scripted agents).")
@click.option(
    "--engine",
    type=click.Choice(["schema", "llm"]),
    default="schema",
    show_default=True,
    help="World Engine for the synthesized run.",
)
@click.option("--seeds", default=1, show_default=True, type=click.IntRange(1, 100), help="Episodes per task.")
@click.option("--policy", default="default", show_default=True, help="Fault policy (the same in both modes).")
@click.option("--limit", type=click.IntRange(1), help="Only the first N tasks.")
@click.option(
    "--max-turns", default=None, type=click.IntRange(1, 1000),
    help="Turn limit per episode (default: max(30, 2 x the task's gold-plan length + 10))."
)
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1, 64))
@click.option("--no-progress", is_flag=True, help="No progress bars.")
@_report_options
@click.pass_context
def experiment_command(
    ctx: click.Context,
    tasks_file: Path | None,
    agents: str | None,
    engine: str,
    seeds: int,
    policy: str,
    limit: int | None,
    max_turns: int | None,
    concurrency: int,
    no_progress: bool,
    metric: str,
    bootstrap: int,
    seed: int,
    out: Path | None,
    as_json: bool,
) -> None:
    """Run the agents live and synthesized on the same tasks, seeds and policy, score both runs, and
    write the fidelity report. Re-running with the same --out resumes the runs."""
    from cworld.data_model import Task, read_jsonl
    from cworld.judges import JudgeContent
    from cworld.registry.tools import environment_tools
    from cworld.report.fidelity_experiment import DEFAULT_AGENTS, ExperimentConfig, run_experiment
    from cworld.report.fidelity_report import build_fidelity

    env, ws = environment(ctx), workspace(ctx)
    chosen = [a.strip() for a in agents.split(",") if a.strip()] if agents else list(DEFAULT_AGENTS)
    config = ExperimentConfig(
        agents=chosen,
        engine=engine,
        seeds=seeds,
        policy=policy,
        concurrency=concurrency,
        max_turns=max_turns,
        progress=not (no_progress or as_json),
    )
    tasks = read_jsonl(tasks_file or ws.latest("tasks"), Task)[: limit or None]
    target = (out or ws.path("fidelity") / time.strftime("experiment-%Y%m%d-%H%M%S")).expanduser().resolve()
    tools = environment_tools(env, ws).episode()
    live, synth = asyncio.run(
        run_experiment(tasks, config, env, ws, target, tools, console=Console(stderr=True))
    )
    report = build_fidelity(
        live=live,
        synth=synth,
        tools=tools,
        content=JudgeContent.from_environment(env),
        metric=metric,
        bootstrap=bootstrap,
        seed=seed,
    )
    _finish(report, target, ws, as_json)


def _finish(report: FidelityReport, out: Path, ws: Workspace, as_json: bool) -> None:
    from cworld.report.fidelity_report import save_fidelity
    from cworld.report.fidelity_text import render_fidelity

    json_path, html_path = save_fidelity(report, out.expanduser().resolve(), ws)
    data = report.to_dict()
    if as_json:
        click.echo(json.dumps({**data, "files": {"json": str(json_path), "html": str(html_path)}}, indent=2))
        return
    render_fidelity(data, Console())
    click.echo(f"fidelity report: {json_path}")
    click.echo(f"html:            {html_path}")
