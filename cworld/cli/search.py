"""`cworld search "QUERY"`: find the tools for an intent in the workspace's index."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from cworld.cli.common import echo_json, json_option, workspace


def _first_line(text: str, limit: int = 90) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _print_table(query: str, hits: list, method: str, with_prereqs: bool) -> None:
    """One row per hit; with prerequisites, the tools to run first are listed under the hit's id."""
    cells = []
    for hit in hits:
        lines = [hit.tool_id] + [f"  <- {p.tool_id} ({p.via or p.kind})" for p in hit.prerequisites if with_prereqs]
        cells.append(lines)
    widest = max((len(line) for lines in cells for line in lines), default=4)
    console = Console()
    room = max(console.width - widest - len(str(len(hits))) - 5 - 13, 10)  # what the other columns leave
    table = Table(title=f"{query!r} ({method})", title_justify="left")
    table.add_column("#", justify="right", min_width=len(str(len(hits))))
    table.add_column("tool" + (" / run first" if with_prereqs else ""), no_wrap=True, min_width=widest)
    table.add_column("score", justify="right", min_width=5)
    table.add_column("description", no_wrap=True, overflow="ellipsis", max_width=room)
    for hit, lines in zip(hits, cells, strict=True):
        cell = f"[bold]{lines[0]}[/bold]" + "".join(f"\n[cyan]{line}[/cyan]" for line in lines[1:])
        table.add_row(str(hit.rank), cell, f"{hit.score:.3f}", _first_line(hit.tool.description))
    console.print(table)


@click.command("search")
@click.argument("query")
@click.option("-k", "k", default=10, show_default=True, type=click.IntRange(1, 200), help="How many tools to return.")
@click.option("--with-prereqs", is_flag=True, help="Attach to each hit the tools that must or usually run first.")
@click.option("--method", type=click.Choice(["dense", "bm25", "hybrid"]), default=None,
              help="Ranking method (default: the one the index measured best at build time).")
@click.option("--index", "index_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Index folder (default: <workspace>/registry/index).")
@json_option
@click.pass_context
def command(ctx: click.Context, query: str, k: int, with_prereqs: bool, method: str | None,
            index_dir: Path | None, as_json: bool) -> None:
    """Rank the registry's tools for QUERY, an intent in plain words ("reply to the last email from Ana")."""
    from cworld.registry.search import SearchService

    folder = index_dir or workspace(ctx).path("registry", "index", create=False)
    service = SearchService.load(folder)
    used = method or service.default_method
    hits = service.search(query, k=k, method=used, with_prereqs=with_prereqs)  # type: ignore[arg-type]
    if as_json:
        echo_json({"query": query, "method": used, "k": k,
                   "hits": [h.model_dump(mode="json")
                            for h in hits]})
        return
    _print_table(query, hits, used, with_prereqs)
