"""`cworld synth --n N`: synthesize tasks (offline without a synth model, with the LLM when one is set)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import click

from cworld.cli.common import echo_json, environment, json_option, workspace


@click.command("synth")
@click.option("--n", "n", type=click.IntRange(min=1), default=50, show_default=True, help="Tasks to accept.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append tasks to this JSONL file (default: a new file under <workspace>/tasks/).",
)
@click.option(
    "--model",
    default=None,
    help="Synth model (litellm string); default: the configured synth role, else the offline synthesizer.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice.")
@click.option(
    "--concurrency", type=click.IntRange(min=1), default=4, show_default=True, help="Attempts in flight."
)
@click.option(
    "--min-tools",
    type=click.IntRange(min=1),
    default=6,
    show_default=True,
    help="Candidate bundle size, low end; also the least tools a task needs.",
)
@click.option(
    "--max-tools",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Candidate bundle size, high end.",
)
@click.option(
    "--min-servers",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Distinct servers a bundle and a task must span.",
)
@click.option(
    "--max-rounds",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Draft plus revisions per task before it is dropped.",
)
@json_option
@click.pass_context
def command(
    ctx: click.Context,
    n: int,
    out: Path | None,
    model: str | None,
    seed: int,
    concurrency: int,
    min_tools: int,
    max_tools: int,
    min_servers: int,
    max_rounds: int,
    as_json: bool,
) -> None:
    """Synthesize N tasks: sample tools, draft, check, revise, rewrite, verify by execution."""
    from rich.console import Console

    from cworld.synth import SynthOptions, prepare, render_lines, run_prepared

    os.environ.setdefault("TQDM_DISABLE", "1")  # the embedder's own progress bars would garble ours
    options = SynthOptions(
        n=n,
        seed=seed,
        concurrency=concurrency,
        min_tools=min_tools,
        max_tools=max_tools,
        min_servers=min_servers,
        max_rounds=max_rounds,
    )
    console = Console(stderr=True)
    with console.status("checking the model, loading the tools and the index..."):
        prepared = prepare(environment(ctx), workspace(ctx), options, model=model, out=out)
    console.print(f"writing to {prepared.out} ({prepared.synthesis.source} synthesizer)")
    progress = _Progress(n, console)
    with progress.bar:
        _, summary = asyncio.run(run_prepared(prepared, progress.hooks()))
    if as_json:
        echo_json(summary.model_dump(mode="json"))
        return
    for line in render_lines(summary):
        click.echo(line)


class _Progress:
    """A rich bar over accepted tasks, its description counting accepted and rejected."""

    def __init__(self, total: int, console: Any) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.task = self.bar.add_task(self._text(0, 0), total=total)
        self.accepted = 0
        self.rejected = 0

    @staticmethod
    def _text(accepted: int, rejected: int) -> str:
        return f"synth: accepted {accepted}, rejected {rejected}"

    def hooks(self) -> Any:
        from cworld.synth import Hooks

        return Hooks(accepted=self._accepted, rejected=self._rejected)

    def _accepted(self, task: Any) -> None:
        self.accepted += 1
        self.bar.update(self.task, advance=1, description=self._text(self.accepted, self.rejected))

    def _rejected(self, outcome: Any) -> None:
        self.rejected += 1
        self.bar.update(self.task, description=self._text(self.accepted, self.rejected))
