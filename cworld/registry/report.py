"""The validation report as people read it: rich tables of servers and of the tools that fell short."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from cworld.registry.build import BuildReport
from cworld.registry.build import Progress as BuildProgress
from cworld.registry.validate import STAGE_NAMES, ServerValidation, ToolValidation
from cworld.registry.validate_server import Hooks

_STAGE_STYLE = {0: "red", 1: "red", 2: "yellow", 3: "green"}
_NUMBERS = ("tools", "usable", "invocable", "available", "seconds")


def server_table(report: BuildReport) -> Table:
    table = Table(
        title=f"registry: {len(report.servers)} servers, built {report.built_at} in {report.seconds:.1f}s"
    )
    for col in ("server", "kind", "started", "tools", "usable", "invocable", "available", "seconds"):
        width = {"server": 12, "kind": 7}.get(col, len(col))
        table.add_column(col, no_wrap=True, min_width=width, justify="right" if col in _NUMBERS else "left")
    table.add_column("note", overflow="ellipsis", max_width=60)
    for s in report.servers:
        c = s.stage_counts()
        note = "reused (unchanged)" if s.reused else ("" if s.started else s.reason)
        started = (
            "[dim]catalog[/dim]"
            if s.kind == "catalog"
            else ("[green]yes[/green]" if s.started else "[red]no[/red]")
        )
        table.add_row(
            s.server,
            s.kind,
            started,
            str(len(s.tools)),
            *(str(c[k]) if s.kind != "catalog" else "-" for k in ("usable", "invocable", "available")),
            f"{(s.total_ms or 0) / 1000:.1f}",
            _short(note, 90),
        )
    return table


def failures_table(report: BuildReport, limit: int = 60) -> Table | None:
    """Live tools that did not reach stage (iii), with why; None when every live tool is usable."""
    rows = [t for s in report.servers if s.kind != "catalog" for t in s.tools if t.stage < 3]
    if not rows:
        return None
    table = Table(title=f"tools short of usable ({len(rows)})")
    table.add_column("tool", no_wrap=True, min_width=24)
    table.add_column("stage", no_wrap=True, min_width=11)
    table.add_column("class", no_wrap=True, min_width=12)
    table.add_column("reason", overflow="ellipsis", max_width=80)
    for t in rows[:limit]:
        table.add_row(
            t.id,
            f"[{_STAGE_STYLE[t.stage]}]{t.stage} {STAGE_NAMES[t.stage]}[/]",
            t.error_class or "",
            _short(t.reason, 160),
        )
    return table


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


class RichBuildProgress:
    """Bars on stderr: servers done of all, tools validated of those listed so far, and (once the index is
    built) documents embedded of those new. `enabled=False` draws nothing (`--no-progress`)."""

    def __init__(self, total_servers: int, console: Console, enabled: bool = True) -> None:
        self.bar = Progress(
            TextColumn("{task.description:<8}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[current]}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
            disable=not enabled,
        )
        self.embed: TaskID | None = None
        self.servers = self.bar.add_task("servers", total=total_servers, current="")
        self.tools = self.bar.add_task("tools", total=0, current="")

    def hooks(self) -> BuildProgress:
        return BuildProgress(
            server_started=self._started,
            server_done=self._done,
            hooks=Hooks(on_listed=self._listed, on_tool=self._tool),
            embedded=self._embedded,
        )

    def _embedded(self, done: int, total: int) -> None:
        if self.embed is None:
            self.embed = self.bar.add_task("index", total=total, current="embedding new tool documents")
        self.bar.update(self.embed, completed=done, total=total)

    def _started(self, server: str) -> None:
        self.bar.update(self.servers, current=server)

    def _done(self, v: ServerValidation) -> None:
        self.bar.advance(self.servers)
        self.bar.update(
            self.servers, current=f"{v.server}: {'ok' if v.started or v.kind == 'catalog' else 'failed'}"
        )

    def _listed(self, server: str, n: int) -> None:
        total = self.bar.tasks[self.tools].total or 0
        self.bar.update(self.tools, total=total + n)

    def _tool(self, v: ToolValidation) -> None:
        self.bar.advance(self.tools)
        self.bar.update(self.tools, current=f"{v.id}: {STAGE_NAMES[v.stage]}")
