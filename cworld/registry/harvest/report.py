"""The harvest as people read it: a live progress bar and line per server, and `registry show --harvest`."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from cworld.registry.harvest.entries import HarvestEntry
from cworld.registry.harvest.run import HarvestProgress, Outcome


class RichHarvestProgress:
    """A bar over the servers to do, and one printed line as each finishes."""

    def __init__(self, total: int, console: Console) -> None:
        self.console = console
        self.bar = Progress(
            TextColumn("harvest"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("{task.fields[current]}"), console=console, transient=False,
        )
        self.task = self.bar.add_task("servers", total=total, current="")
        self.tools = 0

    def hooks(self) -> HarvestProgress:
        return HarvestProgress(started=self._started, done=self._done)

    def _started(self, entry: HarvestEntry) -> None:
        self.bar.update(self.task, current=entry.id)

    def _done(self, outcome: Outcome) -> None:
        self.tools += outcome.tools
        if outcome.status == "ok":
            what = f"[green]ok[/green] {outcome.tools} tools"
        else:
            what = f"[red]{outcome.failure}[/red] {outcome.detail[:90]}"
        self.console.print(f"{outcome.id} ({outcome.seconds:.0f}s): {what}", highlight=False, markup=True)
        self.bar.update(self.task, advance=1, current=f"{self.tools} tools so far")


def one_line(text: str, limit: int = 90) -> str:
    """A failure's detail (often a multi-line stderr tail) as one line a table cell can hold."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def harvest_tables(summary: dict[str, Any], width: int = 120) -> list[Table]:
    """Servers (with tools and failure), then tools per category, then failure classes.

    The fixed columns take 78 characters; the failure note gets what a wider terminal has left, and
    is left out below that, so the counts never collapse to nothing on a narrow one.
    """
    servers = Table(title=f"harvest: {summary['servers_ok']} of {summary['servers_tried']} servers listed "
                    f"{summary['tools']} tools")
    widths = {"server": 26, "from": 4, "category": 9, "status": 17, "tools": 5}
    for col, size in widths.items():
        servers.add_column(col, no_wrap=True, justify="right" if col == "tools" else "left", min_width=size,
                           max_width=size, overflow="ellipsis")
    note = width - sum(widths.values()) - 3 * (len(widths) + 1) - 1
    if note >= 12:
        servers.add_column("note", overflow="ellipsis", no_wrap=True, max_width=note)
    for s in summary["servers"]:
        status = "[green]ok[/green]" if s["status"] == "ok" else f"[red]{s['failure']}[/red]"
        row = [s["id"], s["registry"], s["category"], status, str(s["tools"])]
        if note >= 12:
            row.append("" if s["status"] == "ok" else one_line(s["detail"]))
        servers.add_row(*row)
    categories = Table(title="by category")
    for col in ("category", "servers ok", "tools"):
        categories.add_column(col, justify="left" if col == "category" else "right")
    tools_by: Counter[str] = Counter()
    for s in summary["servers"]:
        tools_by[s["category"]] += int(s["tools"])
    for name, count in sorted(summary["categories"].items()):
        categories.add_row(name, str(count), str(tools_by[name]))
    failures = Table(title="failure classes")
    failures.add_column("class")
    failures.add_column("servers", justify="right")
    for name, count in summary["failures"].items():
        failures.add_row(name, str(count))
    return [servers, categories, failures]
