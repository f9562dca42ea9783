"""The fidelity report in the terminal: the correlations first, then who ranks where, then what diverges."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Console
from rich.table import Column, Table

from cworld.engine.origin import origin_shares
from cworld.fidelity.fmt import DASH, share


def render_fidelity(data: dict[str, Any], console: Console, *, top: int = 8) -> None:
    for line in first_lines(data):
        console.print(line)
    if data.get("episodes"):
        _episodes(data["episodes"], console)
    for note in data.get("notes", []):
        console.print(f"[dim]note: {note}[/dim]")
    ranking = data.get("ranking")
    if ranking:
        console.print(f"[dim]all agents: {headline(ranking, data['metric'])}[/dim]")
        secondary = data.get("secondary")
        if secondary:
            console.print(f"[dim]secondary: {headline(secondary, data['secondary_metric'])}[/dim]")
        _agents(ranking, console, data.get("secondary_metric"))
        _notes(ranking, console)
        _tasks(ranking, console, top)
        _divergence(data.get("tools"), console, top)
    for ref in data.get("references", []):
        console.print(headline(ref, data["metric"]))
        _agents(ref, console)
        _notes(ref, console)


def first_lines(data: dict[str, Any]) -> list[str]:
    """The headline (the non-privileged agents' rho and tau: an order nobody designed), the designed
    ranking as a labelled secondary line, and whether the goals are met."""
    lines = []
    measured, designed = data.get("measured"), data.get("designed")
    if measured:
        lines.append(f"[bold]measured (non-privileged agents):[/bold] {headline(measured, data['metric'])}")
    if designed:
        lines.append(f"[dim]designed (privileged agents, their order chosen by construction): "
                     f"{headline(designed, data['metric'])}[/dim]")
    goals = data.get("goals")
    if goals and (measured or data.get("episodes")):
        lines.append(goal_line(goals))
    for name, counts in (data.get("origins") or {}).items():
        lines.append(f"{name} answers by origin: {origin_shares(Counter(counts)) or 'no engine answer'}")
    return lines


def goal_line(goals: dict[str, Any]) -> str:
    """`goals: rho 0.95 >= 0.9 met; kappa ...`: each goal's point figure against its target."""
    parts = []
    for name, sign, label in (("rho_measured", ">=", "rho (measured)"),
                              ("kappa_state_success", ">=", "state-success kappa"),
                              ("verdict_flips", "<=", "verdict flips")):
        g = goals.get(name) or {}
        value = "undefined" if g.get("value") is None else f"{g['value']:.3f}"
        verdict = {True: "met", False: "NOT met", None: "not measured"}[g.get("met")]
        parts.append(f"{label} {value} (goal {sign} {g.get('goal')}) {verdict}")
    return "goals: " + "; ".join(parts)


def _episodes(ep: dict[str, Any], console: Console) -> None:
    """Episode-by-episode agreement per group and per category, each figure with its interval."""
    rows = [*ep["groups"].values(), *ep.get("categories", [])]
    table = Table(_first("episodes of"), "pairs", "tasks", "success l/s", "accuracy", "kappa",
                  "r R_c", "r overall", "flips",
                  title=f"episode agreement ({int(round(100 * ep['level']))}% bootstrap over tasks): "
                        "groups, then categories")
    for r in rows:
        ss = r["state_success"]
        rates = f"{share(ss['live_rate'])}/{share(ss['synthesized_rate'])}" if ss["pairs"] else DASH
        figures = [ss["accuracy"], ss["kappa"], r["r_c"]["pearson"], r["overall"]["pearson"],
                   r["verdict_flips"]["share"]]
        table.add_row(r["name"], str(r["episodes"]), str(r["tasks"]), rates, *(_short(f) for f in figures))
    console.print(table)


def _short(i: dict[str, Any]) -> str:
    """A figure and its interval in two decimals, on two lines: `0.97` / `[0.94, 0.99]` (the space lets a
    narrow column wrap the interval rather than cut it)."""
    if i.get("value") is None:
        return "undef."
    return f"{i['value']:.2f}" + (f"\n[{i['low']:.2f}, {i['high']:.2f}]" if i.get("low") is not None else "")


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


def _agents(c: dict[str, Any], console: Console, secondary: str | None = None) -> None:
    """Agents by rank, their privileged flag, and (when the report has one) the secondary metric's scores."""
    extra = ([Column(f"{side} {secondary}", overflow="fold") for side in (c["a"], c["b"])]
             if secondary and _has_secondary(c) else [])
    table = Table(_first("agent"), "privileged", c["a"], "rank", c["b"], "rank", *extra)
    for r in c["agents"]:
        cells = [f"{r['score_a']:.3f}", f"{r['rank_a']:g}", f"{r['score_b']:.3f}", f"{r['rank_b']:g}"]
        if extra:
            cells += [_score(r.get("secondary_a")), _score(r.get("secondary_b"))]
        table.add_row(r["agent"], "yes" if r.get("privileged") else "no", *cells)
    console.print(table)


def _first(name: str) -> Column:
    """The naming column folds rather than cuts: a tool or agent name is what the row is about. No minimum
    width: rich widens such a column back after shrinking the table, which pushes the last column off the edge."""
    return Column(name, overflow="fold")


def _has_secondary(c: dict[str, Any]) -> bool:
    return any("secondary_a" in r for r in c["agents"])


def _score(value: float | None) -> str:
    return DASH if value is None else f"{value:.3f}"


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
        "keys = key-path overlap, types = type agreement on shared key paths"
    )
    for key, title in (("categories", "divergence by category"), ("tools", "most divergent tools")):
        table = Table(
            _first(key[:-1] if key == "tools" else "category"),
            "calls",
            "diverg.",
            "err agree",
            "keys",
            "types",
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
                share(r.get("type_agreement")),
                share(r["schema_valid_b"]),
                share(r["schema_valid_a"]),
                share(r["same_args"]),
            )
        console.print(table)
    if calls.get("categories"):
        console.print(overall_agreement(calls["categories"]))


def overall_agreement(rows: list[dict[str, Any]]) -> str:
    """One line over every paired call: error agreement by calls, key and type agreement by calls both
    answered (the per-category figures weighted by how many calls each has)."""
    calls = sum(r["calls"] for r in rows)
    both = sum(r.get("both_ok", 0) for r in rows if r.get("key_overlap") is not None)
    errors = sum(r["error_agreement"] * r["calls"] for r in rows) / calls if calls else None
    keyed = [r for r in rows if r.get("key_overlap") is not None and r.get("both_ok")]
    keys = sum(r["key_overlap"] * r["both_ok"] for r in keyed) / both if both else None
    typed = [r for r in keyed if r.get("type_agreement") is not None]
    types = sum(r["type_agreement"] * r["both_ok"] for r in typed) / sum(r["both_ok"] for r in typed) if typed else None
    pct = lambda v: DASH if v is None else f"{100 * v:.1f}%"  # noqa: E731
    return f"all categories: {calls} paired calls, error agreement {pct(errors)}, keys {pct(keys)}, types {pct(types)}"


def agreement_lines(rows: list[dict[str, Any]], label: str = "category") -> list[str]:
    """Call-level agreement (`calls.call_agreement` rows) as plain text lines: error/non-error agreement,
    key-path agreement and type agreement where both succeeded (one decimal, as the benchmarks print)."""
    pct = lambda v: "     -" if v is None else f"{100 * v:5.1f}%"  # noqa: E731
    lines = [f"{label:<18}{'calls':>6}  {'errors':>6}  {'keys':>6}  {'types':>6}  {'both ok':>7}"]
    for r in rows:
        lines.append(f"{r['name']:<18}{r['calls']:>6}  {pct(r['error_agreement'])}  {pct(r['key_overlap'])}  "
                     f"{pct(r['type_agreement'])}  {r['both_ok']:>7}")
    return lines
