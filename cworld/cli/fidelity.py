"""`cworld fidelity --live RUN --synth RUN` and `cworld fidelity experiment`: does synthesized execution
rank agents as live execution does (paper §5.4)?"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from cworld.cli.common import environment, preflight, read_tasks, run_tools, workspace

if TYPE_CHECKING:
    from cworld.data_model import ToolSpec
    from cworld.environment import Environment, Workspace

_run_path = click.Path(path_type=Path)


@dataclass(frozen=True)
class ReportOptions:
    """The options both commands share: the metric that ranks, the bootstrap, and where the report goes."""

    metric: str
    bootstrap: int
    seed: int
    out: Path | None
    as_json: bool


def _report_options(fn: Callable[..., None]) -> Callable[..., None]:
    """Adds the shared options and hands them to the command as one `report: ReportOptions`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        report = ReportOptions(**{f.name: kwargs.pop(f.name) for f in fields(ReportOptions)})
        fn(*args, report=report, **kwargs)

    for option in reversed(
        [
            click.option(
                "--metric",
                default="overall",
                show_default=True,
                help="Score that ranks agents: overall (both modes have the state diff), overall_comparable "
                "(without the state-diff parts; also shown as a secondary column), success, or a metric of "
                "scores.jsonl (e.g. R_c).",
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
        wrapper = option(wrapper)
    return wrapper


def _agents(ctx: click.Context, _param: click.Parameter, value: str | None) -> list[str]:
    from cworld.fidelity import DEFAULT_AGENTS

    if value:
        return [a.strip() for a in value.split(",") if a.strip()]
    return [*DEFAULT_AGENTS, *_local_agent(ctx)]


def _local_agent(ctx: click.Context) -> list[str]:
    """The local SmolLM2 agent when the workspace configures it (`openai/smollm2` as the agent model, with
    the api_base `cworld llm serve-local` prints): the server must be running, so it is never guessed."""
    from cworld.cli.llm_local import MODEL_ALIAS
    from cworld.config import load_models
    from cworld.errors import CworldError

    local = f"openai/{MODEL_ALIAS}"
    try:
        models = load_models(workspace(ctx).root)
    except CworldError:  # a broken config is reported by the commands that use it
        return []
    return [local] if any(m.model == local and m.api_base for m in models.for_role("agent")) else []


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
    ctx: click.Context, live: Path | None, synth: Path | None, reference: Path | None, report: ReportOptions
) -> None:
    """Rank agents by METRIC in a live and a synthesized run and report Spearman's rho and Kendall's tau
    with bootstrap intervals, per-task agreement and per-tool divergence (plus an HTML page)."""
    if ctx.invoked_subcommand is not None:
        return
    from cworld.judges import resolve_run

    ws = workspace(ctx)
    if live is None and synth is None and reference is None:
        raise click.UsageError("give --live RUN and --synth RUN, or run `cworld fidelity experiment`")
    runs = {k: resolve_run(v, ws) if v is not None else None for k, v in (("live", live), ("synth", synth))}
    out = report.out or ws.path("reports") / time.strftime("fidelity-%Y%m%d-%H%M%S")
    env = environment(ctx)
    folders = [run for run in runs.values() if run is not None]
    _report(report, runs["live"], runs["synth"], run_tools(env, ws, folders), env, ws, out, reference)


@command.command("experiment")
@click.option(
    "--tasks",
    "tasks_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Tasks JSONL (default: the workspace's latest).",
)
@click.option("--agents", callback=_agents, help="Comma-separated agents (default: six graded scripted agents, "
              "privileged, and eight heuristic ones, not privileged: the headline ranks those).")
@click.option(
    "--engine",
    type=click.Choice(["world", "schema", "llm"]),
    default="world",
    show_default=True,
    help="World Engine for the synthesized run: world (a run's default), schema (for comparison) or llm.",
)
@click.option("--seeds", default=1, show_default=True, type=click.IntRange(1, 100), help="Episodes per task.")
@click.option("--policy", default="default", show_default=True, help="Fault policy (the same in both modes).")
@click.option("--limit", type=click.IntRange(1), help="Only the first N tasks.")
@click.option(
    "--max-turns", default=None, type=click.IntRange(1, 1000),
    help="Turn limit per episode (default: max(30, 3 x the task's candidate tools + 10, a stated call limit + 10))."
)
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1, 64))
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where episodes run: this process, or a Ray cluster (needs the ray extra).")
@click.option("--ray-address", help="Ray cluster to join (HOST:PORT or auto); default: start a local one.")
@click.option("--no-progress", is_flag=True, help="No progress bars.")
@_report_options
@click.pass_context
def experiment_command(
    ctx: click.Context,
    tasks_file: Path | None,
    limit: int | None,
    no_progress: bool,
    report: ReportOptions,
    **settings: Any,
) -> None:
    """Run the agents live and synthesized on the same tasks, seeds and policy, score both runs, and
    write the fidelity report. Re-running with the same --out resumes the runs."""
    from cworld.errors import UsageError
    from cworld.fidelity import ExperimentConfig, live_comparable, run_experiment
    from cworld.registry.tools import environment_tools
    from cworld.rollout import RolloutContext

    env, ws = environment(ctx), workspace(ctx)
    config = ExperimentConfig(**settings, progress=not (no_progress or report.as_json))
    tasks = read_tasks(ws, tasks_file, limit)
    target = (report.out or ws.path("fidelity") / time.strftime("experiment-%Y%m%d-%H%M%S")).expanduser().resolve()
    preflight(ws, agents=config.agents, roles=["engine"] if config.engine == "llm" else [])
    tools = environment_tools(env, ws).tasks_tools(tasks)
    tasks, aside = live_comparable(tasks, tools)
    if not tasks:
        raise UsageError(f"none of the {len(aside)} task(s) can run live (each names a schema-only or unknown "
                         "tool), so there is nothing to compare; give tasks over the sandbox or real servers")
    note = (f"{len(aside)} task(s) set aside: they name tools live mode cannot run (schema-only or unknown), so "
            f"live answers them `unavailable` whatever the engine does: {', '.join(aside)}") if aside else None
    if note:
        click.echo(f"note: {note}", err=True)
    live_ctx = RolloutContext(env, ws, dict(tools))
    live, synth = asyncio.run(run_experiment(tasks, config, live_ctx, target, console=Console(stderr=True)))
    _report(report, live, synth, tools, env, ws, target, notes=[note] if note else [])


def _report(
    report: ReportOptions,
    live: Path | None,
    synth: Path | None,
    tools: dict[str, ToolSpec],
    env: Environment,
    ws: Workspace,
    out: Path,
    reference: Path | None = None,
    notes: list[str] | None = None,
) -> None:
    """Build the fidelity report, write its files, and print it (a table, or JSON with --json)."""
    from cworld.engine.cards.assign import CardIndex
    from cworld.engine.cards.card import load_cards
    from cworld.fidelity import build_fidelity, save_fidelity
    from cworld.fidelity.text import render_fidelity
    from cworld.judges import JudgeContent

    cards = CardIndex(load_cards(env.category_cards))

    result = build_fidelity(
        live=live,
        synth=synth,
        tools=tools,
        content=JudgeContent.from_environment(env),
        metric=report.metric,
        reference=reference,
        bootstrap=report.bootstrap,
        seed=report.seed,
        category_of=lambda spec: cards.card_for(spec).name,
    )
    result.notes.extend(notes or [])
    json_path, html_path = save_fidelity(result, out.expanduser().resolve(), ws)
    data = result.to_dict()
    if report.as_json:
        click.echo(json.dumps({**data, "files": {"json": str(json_path), "html": str(html_path)}}, indent=2))
        return
    render_fidelity(data, Console())
    click.echo(f"fidelity report: {json_path}")
    click.echo(f"html:            {html_path}")
