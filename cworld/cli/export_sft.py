"""`cworld export-sft [RUN...] --format openai|sharegpt|hf --out PATH`: training data from trajectories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cworld.cli.common import environment, run_tools, workspace


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (value or "").split(",") if v.strip())


@click.command("export-sft")
@click.argument("runs", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["openai", "sharegpt", "hf"]), default="openai", show_default=True
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="Output file (openai, sharegpt: JSONL) or folder (hf: datasets.save_to_disk).",
)
@click.option("--min-score", type=float, help="Keep episodes whose overall score (0-10) is at least this.")
@click.option("--only-success", is_flag=True, help="Keep episodes judged successful.")
@click.option(
    "--fault-types", metavar="T1,T2", help="Keep episodes that faced one of these faults ('none': no fault)."
)
@click.option(
    "--judge-agreement",
    type=float,
    metavar="SHARE",
    help="Keep episodes whose judges agree at least this much on every dimension (1.0: unanimous).",
)
@click.option(
    "--first-round",
    is_flag=True,
    help="The paper's selection: each episode up to its first valid tool invocation (searches included).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def command(
    ctx: click.Context,
    runs: tuple[Path, ...],
    fmt: str,
    out: Path,
    min_score: float | None,
    only_success: bool,
    fault_types: str | None,
    judge_agreement: float | None,
    first_round: bool,
    as_json: bool,
) -> None:
    """Export RUNS (default: the workspace's latest run) as fine-tuning data. Observations are what the
    agent saw (faults included), exact duplicates are dropped, secrets are masked; a summary goes to
    OUT.summary.json."""
    from cworld.export import ExportFilters, export_sft
    from cworld.judges import resolve_run
    from cworld.judges.runs import load_trajectories, tools_seen

    filters = ExportFilters(
        min_score=min_score,
        only_success=only_success,
        fault_types=_split(fault_types),
        judge_agreement=judge_agreement,
        first_round=first_round,
    )
    ws = workspace(ctx)
    folders = [resolve_run(r, ws) for r in runs] if runs else [resolve_run(None, ws)]
    catalog = {
        **{k: v for f in folders for k, v in tools_seen(load_trajectories(f)).items()},
        **run_tools(environment(ctx), ws, folders),
    }
    summary = export_sft(folders, fmt, out.expanduser().resolve(), filters, catalog)
    if as_json:
        click.echo(json.dumps(summary, indent=2, ensure_ascii=False))
        return
    _print(summary)


def _print(s: dict[str, Any]) -> None:
    tokens, tools = s["tokens"], s["tools"]
    click.echo(
        f"{s['examples']} example(s) from {s['episodes']} episode(s) ({s['duplicates_removed']} duplicate(s) "
        f"removed); {tokens['total']} tokens ({tokens['tokenizer']}), "
        f"mean {tokens['mean']}, max {tokens['max']}"
    )
    click.echo(
        f"tools: {tools['declared']} declared, {tools['called']} called ({tools['calls']} calls); "
        f"{s['not_trained_turns']} assistant turn(s) kept as context only; {s['redactions']} redaction(s)"
    )
    left = {**s["rejected_by_filter"], **s["skipped"]}
    if left:
        click.echo("left out: " + ", ".join(f"{k} {v}" for k, v in sorted(left.items())))
    click.echo(f"{s['format']} export: {s['out']}")
    click.echo(f"summary:      {s['out']}.summary.json")
