"""`cworld report RUN... [--out DIR]`: the leaderboard (terminal + leaderboard.md) and report.html."""

from __future__ import annotations

import time
from pathlib import Path

import click

from cworld.cli.common import environment, run_tools, workspace
from cworld.environment import Workspace


def default_out(runs: list[Path], ws: Workspace) -> Path:
    """One run: `<run>/report`; several: a new folder under `<workspace>/reports/`."""
    if len(runs) == 1:
        return runs[0] / "report"
    return ws.path("reports") / time.strftime("report-%Y%m%d-%H%M%S")


@click.command("report")
@click.argument("runs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder (default: RUN/report, or WORKSPACE/reports/... for several runs).")
@click.option("--quiet", is_flag=True, help="Print only the file paths, not the leaderboard.")
@click.option("--all", "all_runs", is_flag=True, help="Report on every run folder of the workspace.")
@click.pass_context
def command(ctx: click.Context, runs: tuple[Path, ...], out: Path | None, quiet: bool, all_runs: bool) -> None:
    """Leaderboard and self-contained HTML report over RUNS (default: the workspace's latest run).
    Runs never judged are scored here with the verifiable metrics only, and the report says so."""
    from cworld.fidelity.html import latest_fidelity_section
    from cworld.judges import JudgeContent, resolve_run
    from cworld.judges.runs import all_runs as workspace_runs
    from cworld.judges.unscored import unscored_warning
    from cworld.report import build_report

    ws = workspace(ctx)
    if all_runs and runs:
        raise click.UsageError("give RUN... or --all, not both")
    if all_runs:
        folders = workspace_runs(ws)
    else:
        folders = [resolve_run(r, ws) for r in runs] if runs else [resolve_run(None, ws)]
    target = out or default_out(folders, ws)
    fidelity = latest_fidelity_section(ws)
    result = build_report(folders, target, content=JudgeContent.from_environment(environment(ctx)),
                          tools=run_tools(environment(ctx), ws, folders),
                          extra_sections=[fidelity] if fidelity else [])
    ws.mark_latest("report", result.out)
    if not quiet:
        click.echo(result.compact + "\n")
    acc = result.accountability
    click.echo(f"engine fallbacks: {acc.engine_fallbacks}; judge votes: {acc.all_votes}, unscored: {acc.all_unscored}")
    click.echo(f"leaderboard: {result.markdown_path}")
    click.echo(f"report:      {result.html_path}")
    warning = unscored_warning(acc.all_unscored, acc.all_votes)
    if warning:
        click.echo(warning)
