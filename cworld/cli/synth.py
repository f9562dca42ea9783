"""`cworld synth --n N`: synthesize tasks (offline without a synth model, with the LLM when one is set)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from cworld.cli.common import echo_json, environment, json_option, workspace


def _count(flag: str, default: int, help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """An option for a positive count of something, its default shown."""
    return click.option(flag, type=click.IntRange(min=1), default=default, show_default=True, help=help)


@click.command("synth")
@_count("--n", 50, "Tasks to accept.")
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
@_count("--concurrency", 4, "Attempts in flight.")
@click.option("--min-tools", type=click.IntRange(min=1), default=None,
              help="Candidate bundle size, low end; also the least tools a task needs.  "
              "[default: 6; 4 with --pool harvested]")
@_count("--max-tools", 10, "Candidate bundle size, high end.")
@click.option("--min-servers", type=click.IntRange(min=1), default=None,
              help="Distinct servers a bundle and a task must span.  [default: 2; 3 with --pool harvested]")
@click.option("--pool", type=click.Choice(["default", "harvested"]), default="default", show_default=True,
              help="Candidate tools: the environment's, or only the harvested catalog's (schema-only, "
              "verified in synthesized mode; `cworld registry build --harvested` first to run them).")
@_count("--max-rounds", 3, "Draft plus revisions per task before it is dropped.")
@json_option
@click.pass_context
def command(ctx: click.Context, out: Path | None, model: str | None, as_json: bool, **settings: Any) -> None:
    """Synthesize N tasks: sample tools, draft, check, revise, rewrite, verify by execution."""
    from rich.console import Console

    from cworld.synth import SynthOptions, prepare, render_lines, run_prepared

    os.environ.setdefault("TQDM_DISABLE", "1")  # the embedder's own progress bars would garble ours
    options = SynthOptions(**settings)  # n, seed, concurrency and the bundle and round limits
    console = Console(stderr=True)
    with console.status("checking the model, loading the tools and the index..."):
        prepared = prepare(environment(ctx), workspace(ctx), options, model=model, out=out)
    console.print(f"writing to {prepared.out} ({prepared.synthesis.source} synthesizer)")
    progress = _Progress(options.n, console)
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

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        self.bar = Progress(*columns, console=console, transient=False)
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
