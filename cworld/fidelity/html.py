"""The fidelity section of the HTML report: rho/tau with intervals, a live-vs-synthesized scatter plot
(inline SVG, no script), per-task agreement and per-category/per-tool divergence.

It renders from the JSON form (`fidelity.json`), so the main report can include the workspace's latest
fidelity result without recomputing it:

    data = latest_fidelity(workspace)                # the JSON of the latest `cworld fidelity`, or None
    section = fidelity_section(data)                 # <section id="fidelity">...</section>
"""

from __future__ import annotations

import json
from collections import Counter
from html import escape
from pathlib import Path
from typing import Any

from cworld.engine.origin import ORIGIN_MEANING, origin_shares
from cworld.environment import Workspace
from cworld.fidelity.fmt import DASH, color, share

W, H, M = 440, 380, 48
LEGEND_W = 220


def latest_fidelity(workspace: Workspace) -> dict[str, Any] | None:
    """The workspace's latest fidelity result (`LATEST_FIDELITY`), or None when there is none (or it is gone)."""
    pointer = workspace.root / "LATEST_FIDELITY"
    if not pointer.is_file():
        return None
    try:
        data = json.loads(Path(pointer.read_text().strip()).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def latest_fidelity_section(workspace: Workspace) -> str | None:
    data = latest_fidelity(workspace)
    return None if data is None else fidelity_section(data)


def fidelity_page(data: dict[str, Any]) -> str:
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>cworld fidelity</title><style>"
        "body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}"
        "table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ddd;padding:3px 8px;"
        "text-align:left}th{background:#f4f4f4}.num{text-align:right}.note{color:#666}</style></head><body>"
        f"{fidelity_section(data)}</body></html>\n"
    )


def fidelity_section(data: dict[str, Any]) -> str:
    parts = ["<section class='fidelity' id='fidelity'><h2>Fidelity: synthesized vs live</h2>", _runs(data),
             _measured(data), _origins(data.get("origins")), _episodes(data.get("episodes"))]
    parts += [f"<p class='note'>{escape(n)}</p>" for n in data.get("notes", [])]
    ranking = data.get("ranking")
    if ranking:
        secondary = data.get("secondary")
        parts += [
            "<h3>All agents</h3>",
            _headline(ranking, data["metric"]),
            _secondary_line(secondary, data.get("secondary_metric")),
            scatter_svg(ranking["agents"], ranking["a"], ranking["b"]),
            _agents_table(ranking, data.get("secondary_metric")),
            _tasks_table(ranking),
            _divergence(data.get("tools")),
        ]
    for ref in data.get("references", []):
        parts += [
            f"<h3>{escape(ref['a'])} vs reference</h3>",
            _headline(ref, data["metric"]),
            _agents_table(ref),
        ]
    parts.append("</section>")
    return "".join(parts)


def _origins(origins: dict[str, dict[str, int]] | None) -> str:
    """What decided the synthesized answers: a rule (override, family, inferred), nothing (simulated), ..."""
    if not origins:
        return ""
    rows = "".join(f"<li><b>{escape(name)}</b>: {escape(origin_shares(Counter(counts)) or 'no engine answer')}</li>"
                   for name, counts in origins.items())
    meaning = "; ".join(f"<i>{escape(k)}</i>: {escape(v)}" for k, v in ORIGIN_MEANING.items())
    return f"<p>Synthesized answers by origin:</p><ul>{rows}</ul><p class='note'>{meaning}</p>"


def _measured(data: dict[str, Any]) -> str:
    """The headline: rho and tau over the non-privileged agents; the designed ranking labelled as such."""
    out = []
    measured, designed = data.get("measured"), data.get("designed")
    if measured:
        out.append("<h3>Measured: the non-privileged agents (an order nobody designed)</h3>"
                   + _headline(measured, data["metric"]))
    if designed:
        out.append(f"<p class='note'>Designed, not a result: the privileged agents (they read the answer key; "
                   f"their order was chosen by construction) rank with Spearman ρ = {_corr(designed['spearman'])}, "
                   f"Kendall τ = {_corr(designed['kendall'])} over {len(designed['agents'])} agents.</p>")
    goals = data.get("goals")
    if goals and (measured or data.get("episodes")):
        out.append(_goals(goals))
    return "".join(out)


def _goals(goals: dict[str, Any]) -> str:
    rows = []
    for name, label, sign in (("rho_measured", "ρ over the non-privileged agents", "≥"),
                              ("kappa_state_success", "state-success κ, all episode pairs", "≥"),
                              ("verdict_flips", "share of verdicts flipped", "≤")):
        g = goals.get(name) or {}
        verdict = {True: "met", False: "not met", None: "not measured"}[g.get("met")]
        rows.append(f"<tr><td>{label}</td><td class='num'>{_num(g.get('value'))}</td>"
                    f"<td class='num'>{sign} {g.get('goal')}</td><td>{verdict}</td></tr>")
    return ("<table><tr><th>goal</th><th>measured</th><th>target</th><th></th></tr>" + "".join(rows)
            + "</table>")


def _episodes(ep: dict[str, Any] | None) -> str:
    """Episode-by-episode agreement per group and per category, each figure with its interval."""
    if not ep or not ep.get("groups"):
        return ""
    head = ("<tr><th>episodes of</th><th>pairs</th><th>tasks</th><th>state success live / synth</th>"
            "<th>accuracy</th><th>Cohen's κ</th><th>r of R_c</th><th>r of overall</th><th>verdict flips</th></tr>")

    def row(r: dict[str, Any]) -> str:
        ss = r["state_success"]
        rates = f"{share(ss['live_rate'])} / {share(ss['synthesized_rate'])}" if ss["pairs"] else DASH
        cells = [ss["accuracy"], ss["kappa"], r["r_c"]["pearson"], r["overall"]["pearson"],
                 r["verdict_flips"]["share"]]
        return (f"<tr><td>{escape(r['name'])}</td><td class='num'>{r['episodes']}</td>"
                f"<td class='num'>{r['tasks']}</td><td class='num'>{rates}</td>"
                + "".join(f"<td class='num'>{_cell(c)}</td>" for c in cells) + "</tr>")

    level = int(round(100 * ep["level"]))
    groups = "".join(row(r) for r in ep["groups"].values())
    categories = "".join(row(r) for r in ep.get("categories", []))
    return (f"<h3>Episode by episode ({ep['pairs']} pairs; {level}% bootstrap intervals over tasks)</h3>"
            f"<table>{head}{groups}</table><h4>Per category</h4><table>{head}{categories}</table>")


def _cell(i: dict[str, Any]) -> str:
    if i.get("value") is None:
        return "undefined"
    ci = f" [{i['low']:.2f}, {i['high']:.2f}]" if i.get("low") is not None else ""
    return f"{i['value']:.3f}{ci}"


def _runs(data: dict[str, Any]) -> str:
    items = "".join(
        f"<li>{escape(r['name'])}: <code>{escape(r['path'])}</code> ({r['episodes']} episodes, "
        f"mode {escape(r['mode'])}{_fly(r)})</li>"
        for r in data.get("runs", [])
    )
    return f"<ul class='note'>{items}</ul>"


def _fly(run: dict[str, Any]) -> str:
    return (
        f"; {run['scored_on_the_fly']} scored here, verifiable only" if run.get("scored_on_the_fly") else ""
    )


def _headline(c: dict[str, Any], metric: str) -> str:
    level = int(round(100 * c["level"]))
    return (
        f"<p><b>Spearman ρ = {_corr(c['spearman'])}</b>, Kendall τ = {_corr(c['kendall'])} "
        f"({level}% bootstrap intervals over {c['tasks']} task(s), {c['bootstrap']} draws; "
        f"{len(c['agents'])} agents ranked by <code>{escape(metric)}</code>).</p>"
        + "".join(f"<p class='note'>{escape(n)}</p>" for n in c.get("notes", []))
    )


def _corr(i: dict[str, Any]) -> str:
    if i.get("value") is None:
        return "undefined (a side ranks every agent equal)"
    ci = f" [{i['low']:.3f}, {i['high']:.3f}]" if i.get("low") is not None else ""
    return f"{i['value']:.3f}{ci}"


def _secondary_line(c: dict[str, Any] | None, metric: str | None) -> str:
    if not c or not metric:
        return ""
    return (
        f"<p class='note'>Secondary, by <code>{escape(metric)}</code> (without the state-diff parts): "
        f"Spearman ρ = {_corr(c['spearman'])}, Kendall τ = {_corr(c['kendall'])}.</p>"
    )


def _agents_table(c: dict[str, Any], secondary: str | None = None) -> str:
    extra = secondary is not None and any("secondary_a" in r for r in c["agents"])
    more = (f"<th>{escape(c['a'])} {escape(secondary)}</th><th>{escape(c['b'])} {escape(secondary)}</th>"
            if extra and secondary else "")
    head = (
        f"<tr><th>agent</th><th>privileged</th><th>{escape(c['a'])}</th><th>rank</th><th>{escape(c['b'])}</th>"
        f"<th>rank</th>{more}</tr>"
    )
    rows = "".join(
        f"<tr><td>{escape(r['agent'])}</td><td>{'yes' if r.get('privileged') else 'no'}</td>"
        f"<td class='num'>{r['score_a']:.3f}</td>"
        f"<td class='num'>{r['rank_a']:g}</td><td class='num'>{r['score_b']:.3f}</td>"
        f"<td class='num'>{r['rank_b']:g}</td>"
        + (f"<td class='num'>{_num(r.get('secondary_a'))}</td><td class='num'>{_num(r.get('secondary_b'))}</td>"
           if extra else "")
        + "</tr>"
        for r in c["agents"]
    )
    return f"<table>{head}{rows}</table>"


def _num(value: float | None) -> str:
    return DASH if value is None else f"{value:.3f}"


def _tasks_table(c: dict[str, Any], limit: int = 10) -> str:
    tasks = c.get("per_task") or []
    if not tasks:
        return ""
    mean = c.get("mean_task_agreement")
    rows = "".join(
        f"<tr><td>{escape(t['task_id'])}</td><td class='num'>{100 * t['agreement']:.0f}%</td>"
        f"<td class='num'>{t['mean_a']:.2f}</td><td class='num'>{t['mean_b']:.2f}</td></tr>"
        for t in tasks[:limit]
    )
    return (
        f"<h3>Per-task agreement (mean {share(mean)}; least first)</h3><table><tr><th>task</th>"
        f"<th>pairs ordered alike</th><th>{escape(c['a'])} mean</th><th>{escape(c['b'])} mean</th></tr>"
        f"{rows}</table>"
    )


def _divergence(calls: dict[str, Any] | None, limit: int = 12) -> str:
    if not calls:
        return ""
    head = (
        "<tr><th>{}</th><th>paired calls</th><th>divergence</th><th>error agreement</th>"
        "<th>key-path overlap</th><th>type agreement</th><th>schema valid (synth)</th><th>schema valid (live)</th>"
        "<th>same args</th></tr>"
    )
    intro = (
        f"<p class='note'>{calls['episodes_paired']} episode pairs; {calls['calls_paired']} of "
        f"{calls['calls_a']} live tool calls paired with a synthesized call of the same tool.</p>"
    )
    return (
        f"<h3>Divergence by category</h3>{intro}<table>{head.format('category')}"
        f"{_div_rows(calls['categories'])}</table><h3>Most divergent tools</h3>"
        f"<table>{head.format('tool')}{_div_rows(calls['tools'][:limit])}</table>"
    )


def _div_rows(rows: list[dict[str, Any]]) -> str:
    return "".join(
        f"<tr><td>{escape(r['name'])}</td><td class='num'>{r['calls']}</td>"
        f"<td class='num'>{share(r['divergence'])}</td><td class='num'>{share(r['error_agreement'])}</td>"
        f"<td class='num'>{share(r['key_overlap'])}</td><td class='num'>{share(r.get('type_agreement'))}</td>"
        f"<td class='num'>{share(r['schema_valid_b'])}</td>"
        f"<td class='num'>{share(r['schema_valid_a'])}</td><td class='num'>{share(r['same_args'])}</td></tr>"
        for r in rows
    )


# --- the scatter plot ---------------------------------------------------------------------------
def scatter_svg(agents: list[dict[str, Any]], x_label: str, y_label: str) -> str:
    """One point per agent (x: its score in `x_label`, y: in `y_label`) and the y = x diagonal."""
    xs, ys = [a["score_a"] for a in agents], [a["score_b"] for a in agents]
    lo, hi = _bounds(xs + ys)
    sx, sy = _Scale(lo, hi, M, W - M), _Scale(lo, hi, H - M, M)
    parts = [
        f'<svg class="chart scatter" role="img" xmlns="http://www.w3.org/2000/svg" width="{W + LEGEND_W}" '
        f'height="{H}" viewBox="0 0 {W + LEGEND_W} {H}" '
        f'aria-label="{escape(x_label)} vs {escape(y_label)} score per agent">',
        f'<rect x="{M}" y="{M}" width="{W - 2 * M}" height="{H - 2 * M}" fill="none" stroke="#bbb"/>',
        f'<line x1="{sx(lo):.1f}" y1="{sy(lo):.1f}" x2="{sx(hi):.1f}" y2="{sy(hi):.1f}" stroke="#999" '
        'stroke-dasharray="4 3"/>',
    ]
    parts += _ticks(lo, hi, sx, sy)
    parts.append(_label(W / 2, H - 10, f"{x_label} score", anchor="middle"))
    parts.append(
        f'<text x="14" y="{H / 2:.1f}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 14 {H / 2:.1f})">{escape(y_label)} score</text>'
    )
    placed: list[tuple[float, float, float]] = []
    for i, agent in enumerate(agents):
        x, y = sx(agent["score_a"]), sy(agent["score_b"])
        tip = f"{agent['agent']}: {agent['score_a']:.3f} vs {agent['score_b']:.3f}"
        parts.append(
            f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{color(i)}">'
            f"<title>{escape(tip)}</title></circle>"
        )
        name = _short(agent["agent"])
        parts.append(_label(x + 7, _free_y(x + 7, y - 6, 6.0 * len(name), placed), name, size=10))
        parts += _legend_row(i, agent["agent"])
    parts.append("</svg>")
    return "".join(parts)


def _legend_row(i: int, name: str) -> list[str]:
    y = M + 6 + 18 * i
    return [f'<circle cx="{W + 8}" cy="{y}" r="5" fill="{color(i)}"/>', _label(W + 18, y + 4, name, size=11)]


def _free_y(x: float, y: float, width: float, placed: list[tuple[float, float, float]]) -> float:
    """A baseline for a label at (x, y) that does not overlap the labels already placed (moved down)."""
    while any(abs(y - py) < 11 and x < px + pw and px < x + width for px, py, pw in placed):
        y += 11
    placed.append((x, y, width))
    return y


class _Scale:
    """Data value -> pixel, linear from [lo, hi] onto [start, end] (end < start flips the y axis)."""

    def __init__(self, lo: float, hi: float, start: float, end: float) -> None:
        self.lo, self.span, self.start, self.end = lo, hi - lo, start, end

    def __call__(self, value: float) -> float:
        return self.start + (value - self.lo) / self.span * (self.end - self.start)


def _bounds(values: list[float]) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 or max(abs(hi) * 0.1, 0.5)
    return lo - pad, hi + pad


def _ticks(lo: float, hi: float, sx: _Scale, sy: _Scale, n: int = 5) -> list[str]:
    out = []
    for k in range(n + 1):
        v = lo + (hi - lo) * k / n
        out.append(_label(sx(v), H - M + 14, f"{v:.2f}", anchor="middle", size=10))
        out.append(_label(M - 4, sy(v) + 3, f"{v:.2f}", anchor="end", size=10))
    return out


def _label(x: float, y: float, text: str, *, anchor: str = "start", size: int = 12) -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}">{escape(text)}</text>'


def _short(name: str) -> str:
    name = name.removeprefix("scripted:")
    return name if len(name) <= 22 else name[:21] + "…"
