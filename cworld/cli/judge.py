"""`cworld judge [RUN...] [--judges m1,m2,m3]`: score runs' episodes into each `<run>/scores.jsonl`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

from cworld.cli.common import environment, run_tools, workspace
from cworld.environment import Workspace

if TYPE_CHECKING:
    from cworld.judges import JudgeRunReport, JudgeSetup
    from cworld.llm import Gateway


def _split(value: str | None) -> list[str]:
    return [m.strip() for m in (value or "").split(",") if m.strip()]


@click.command("judge")
@click.argument("runs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--judges", "judges_opt", default=None, metavar="M1,M2,M3",
              help="Judge models (litellm strings), overriding the configured judge role.")
@click.option("--concurrency", default=4, show_default=True, type=click.IntRange(1, 64),
              help="Episodes judged at once.")
@click.option("--max-repairs", default=1, show_default=True, type=click.IntRange(0, 5),
              help="Times an unparseable judge answer is sent back before the vote counts as unscored.")
@click.option("--evidence-chars", default=None, type=click.IntRange(2000, 2_000_000), envvar="CWORLD_JUDGE_EVIDENCE_CHARS",
              help="Characters of evidence each judge is shown [default: sized to each judge model's context].")
@click.option("--force", is_flag=True, help="Judge every episode again (cached judge answers are reused).")
@click.option("--offline", is_flag=True, help="Verifiable metrics only, even when judges are configured.")
@click.option("--all", "all_runs", is_flag=True, help="Judge every run folder of the workspace.")
@click.pass_context
def command(ctx: click.Context, runs: tuple[Path, ...], judges_opt: str | None, concurrency: int, max_repairs: int,
            evidence_chars: int | None, force: bool, offline: bool, all_runs: bool) -> None:
    """Score every episode of each RUN (default: the workspace's latest run): verifiable metrics always, LLM
    judges when configured. Resumes: episodes already scored with the same judges are skipped. Several runs
    in one call share one start-up (the tools, the judges), which is most of the time of an offline run."""
    from cworld.judges import JudgeContent, JudgeSetup, resolve_run
    from cworld.judges.runs import all_runs as workspace_runs

    ws = workspace(ctx)
    if all_runs and runs:
        raise click.UsageError("give RUN or --all, not both")
    run_dirs = workspace_runs(ws) if all_runs else [resolve_run(run, ws) for run in runs or (None,)]
    setup = JudgeSetup(JudgeContent.from_environment(environment(ctx)), tools=run_tools(environment(ctx), ws, run_dirs),
                       max_repairs=max_repairs, evidence_chars=evidence_chars)
    gateway = None if offline else _gateway(ws, _split(judges_opt), setup)
    if offline:
        setup.offline_reason = "judges turned off with --offline"
    console = Console(stderr=True)
    try:
        reports = asyncio.run(_judge_all(run_dirs, setup, resume=not force, concurrency=concurrency))
    finally:
        if gateway is not None:
            gateway.close()
    for report in reports:
        _print(report, setup, console)


async def _judge_all(runs: list[Path], setup: JudgeSetup, *, resume: bool, concurrency: int) -> list[JudgeRunReport]:
    from cworld.judges import judge_run

    return [await judge_run(run, setup, resume=resume, concurrency=concurrency) for run in runs]


def _gateway(ws: Workspace, names: list[str], setup: JudgeSetup) -> Gateway | None:
    """A gateway with the judge models set on `setup`; None (offline) when no judge is configured."""
    from cworld.config import load_models
    from cworld.llm import Gateway

    models = load_models(ws.root)
    if names:  # each with the judge role's settings (its endpoint and key only for the same provider)
        models.judge = [models.for_model("judge", n) for n in names]
    if not models.judge:
        return None
    from cworld.llm.preflight import preflight, role_models

    preflight(role_models(models, ["judge"]))
    gateway = Gateway.from_workspace(ws, models)
    setup.gateway, setup.judges = gateway, list(models.judge)
    return gateway


def _print(r: JudgeRunReport, setup: JudgeSetup, console: Console) -> None:
    """The run's judging; its last line says so when more than 10% of the judge votes are unscored."""
    from cworld.judges.unscored import unscored_warning

    console.print(f"judged {r.judged} of {r.episodes} episode(s) in {r.run} ({r.skipped} already scored) "
                  f"-> {r.scores_path}")
    if not setup.online:
        console.print(f"[yellow]judge dimensions unscored: {setup.offline_reason}; "
                      "overall scores use the verifiable metrics only[/yellow]")
        return
    console.print("judges: " + ", ".join(r.judges))
    if len(r.judges) < 3 or len(r.judges) % 2 == 0:
        console.print(f"[yellow]note: {len(r.judges)} judge(s); the majority vote is meant for an odd number, three by "
                      "default (C-World uses three models from different families)[/yellow]")
    for model, usage in r.usage.items():
        console.print(f"  {model}: {usage.calls} call(s), {usage.prompt_tokens}+{usage.completion_tokens} tokens, "
                      f"${usage.cost_usd:.4f}, {usage.cache_hits} cache hit(s)")
    if r.unscored_dimensions:
        counts = ", ".join(f"{d}: {n}" for d, n in sorted(r.unscored_dimensions.items()))
        console.print(f"[yellow]unscored dimensions (no usable judge answer): {counts}[/yellow]")
    console.print(f"judge votes: {r.votes}, unscored: {r.unscored_votes}")
    warning = unscored_warning(r.unscored_votes, r.votes)
    if warning:
        console.print(f"[yellow]{warning}[/yellow]", soft_wrap=True)
