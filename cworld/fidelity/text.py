"""The fidelity report in the terminal: the correlations first, then who ranks where, then what diverges."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from cworld.fidelity.fmt import share


def render_fidelity(data: dict[str, Any], console: Console, *, top: int = 8) -> None:
    ranking = data.get("ranking")
    if ranking:
        console.print(headline(ranking, data["metric"]))
        _agents(ranking, console)
        _notes(ranking, console)
        _tasks(ranking, console, top)
        _divergence(data.get("tools"), console, top)
    for ref in data.get("references", []):
        console.print(headline(ref, data["metric"]))
        _agents(ref, console)
        _notes(ref, console)


def headline(c: dict[str, Any], metric: str) -> str:
    return (
        f"[bold]{c['a']} vs {c['b']}[/bold] "
        f"({len(c['agents'])} agents, {c['tasks']} tasks, metric {metric}): "
        f"Spearman rho = {interval(c['spearman'])}, Kendall tau = {interval(c['kendall'])} "
        f"({int(round(100 * c['level']))}% bootstrap over tasks)"
    )


def interval(i: dict[str, Any]) -> str:
    if i.get("value") is None:
        return "undefined"
    ci = f" [{i['low']:.3f}, {i['high']:.3f}]" if i.get("low") is not None else ""
    return f"{i['value']:.3f}{ci}"


def _agents(c: dict[str, Any], console: Console) -> None:
    table = Table("agent", c["a"], "rank", c["b"], "rank")
    for r in c["agents"]:
        table.add_row(
            r["agent"], f"{r['score_a']:.3f}", f"{r['rank_a']:g}", f"{r['score_b']:.3f}", f"{r['rank_b']:g}"
        )
    console.print(table)


def _notes(c: dict[str, Any], console: Console) -> None:
    for note in c.get("notes", []):
        console.print(f"[dim]note: {note}[/dim]")


def _tasks(c: dict[str, Any], console: Console, top: int) -> None:
    tasks = c.get("per_task") or []
    if not tasks:
        return
    table = Table(
        "task",
        "pairs ordered alike",
        f"{c['a']} mean",
        f"{c['b']} mean",
        title=f"per-task agreement: mean {share(c.get('mean_task_agreement'))} (least first)",
    )
    for t in tasks[:top]:
        table.add_row(t["task_id"], share(t["agreement"]), f"{t['mean_a']:.2f}", f"{t['mean_b']:.2f}")
    console.print(table)


def _divergence(calls: dict[str, Any] | None, console: Console, top: int) -> None:
    if not calls:
        return
    console.print(
        f"{calls['calls_paired']} of {calls['calls_a']} live tool calls paired with a synthesized call "
        f"of the same tool ({calls['episodes_paired']} episode pairs); a = live, b = synthesized; "
        "keys = key-path overlap"
    )
    for key, title in (("categories", "divergence by category"), ("tools", "most divergent tools")):
        table = Table(
            key[:-1] if key == "tools" else "category",
            "calls",
            "diverg.",
            "err agree",
            "keys",
            "schema b",
            "schema a",
            "same args",
            title=title,
        )
        for r in calls[key][:top]:
            table.add_row(
                r["name"],
                str(r["calls"]),
                share(r["divergence"]),
                share(r["error_agreement"]),
                share(r["key_overlap"]),
                share(r["schema_valid_b"]),
                share(r["schema_valid_a"]),
                share(r["same_args"]),
            )
        console.print(table)
