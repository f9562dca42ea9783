"""The self-contained HTML report: leaderboard with intervals, per-metric bars, persona radars, judge
accountability and the per-task drill-down. One file, inline CSS/JS/SVG, opens offline."""

from __future__ import annotations

import time
from collections.abc import Sequence
from html import escape

from cworld.judges.personas import PERSONAS
from cworld.judges.runs import RunData
from cworld.report import fmt
from cworld.report.accountability import Accountability
from cworld.report.assets import CSS, JS
from cworld.report.drilldown import Text, task_sections
from cworld.report.leaderboard import Column, Row
from cworld.report.markdown import MAIN, MORE, basis_lines, run_lines
from cworld.report.stats import Estimate
from cworld.report.svg import bar_chart, radar_chart

CHART_KEYS = ("overall", "success", "R_c", "schema_compliance", "order", "diversity", "constraints", "recovery",
              "flexibility", "efficiency", "tool_calls")


def render(runs: list[RunData], rows: list[Row], columns: list[Column], acc: Accountability, text: Text,
           extra_sections: Sequence[str] = ()) -> str:
    sections = [_header(runs, rows, text, bool(extra_sections)), _leaderboard(rows, columns, text),
                _charts(rows, columns, text), _personas(rows, text), _judges(acc, text), _tasks(runs, text),
                *extra_sections]
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>cworld report</title>"
            f"<meta name=\"viewport\" content=\"width=device-width\"><style>{CSS}</style></head><body>"
            + "".join(sections) + f"<script>{JS}</script></body></html>")


def _md_inline(line: str, text: Text) -> str:
    """The few inline marks the shared summary lines use (**bold**, `code`, a list dash)."""
    out = text.esc(line.lstrip("- "))
    for mark, tag in (("**", "b"), ("`", "code")):
        while out.count(mark) >= 2:
            out = out.replace(mark, f"<{tag}>", 1).replace(mark, f"</{tag}>", 1)
    return out


def _header(runs: list[RunData], rows: list[Row], text: Text, with_fidelity: bool = False) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M")
    run_items = "".join(f"<li>{_md_inline(line, text)}</li>" for line in run_lines(runs))
    notes = "".join(f'<p class="note" id="basis-note">{_md_inline(line, text)}</p>' for line in basis_lines(rows))
    nav = " ".join(f'<a href="#{k}">{v}</a>' for k, v in (("leaderboard", "Leaderboard"), ("metrics", "Metrics"),
                                                          ("personas", "Personas"), ("judges", "Judges"),
                                                          ("tasks", "Tasks"))
                   + ((("fidelity", "Fidelity"),) if with_fidelity else ()))
    return (f"<header><h1>cworld report</h1><p class=\"muted\">generated {stamp}</p><ul>{run_items}</ul>{notes}"
            f"<nav>{nav}</nav></header>")


def _cell(est: Estimate, col: Column) -> str:
    sort = "" if est.mean is None else f"{est.mean:.6g}"
    ci = fmt.interval(est, col.kind)
    ci_html = f' <span class="ci">{ci}</span>' if ci else ""
    return f'<td data-sort="{sort}">{fmt.value(est.mean, col.kind)}{ci_html}</td>'


def _plain(value: float | None, shown: str) -> str:
    return f'<td data-sort="{"" if value is None else f"{value:.6g}"}">{shown}</td>'


def _leaderboard(rows: list[Row], columns: list[Column], text: Text) -> str:
    by_key = {c.key: c for c in columns}
    main = [by_key[k] for k in MAIN] + [c for c in columns if c.key.startswith("judge:")]
    head = ("<tr><th>#</th><th class=\"name\">agent</th><th class=\"name\">mode</th><th class=\"name\">policy</th>"
            "<th>episodes</th>" + "".join(f"<th>{escape(c.label)}</th>" for c in main[:2])
            + "<th>pass@1</th><th>pass@k</th><th>pass^k</th><th>flips</th>"
            + "".join(f"<th>{escape(c.label)}</th>" for c in main[2:]) + "</tr>")
    body = []
    for rank, r in enumerate(rows, 1):
        cells = [_cell(r.estimates[c.key], c) for c in main]
        body.append(f"<tr><td>{rank}</td><td class=\"name\">{text.esc(r.display_agent)}</td><td class=\"name\">"
                    f"{text.esc(r.mode)}</td><td class=\"name\">{text.esc(r.policy)}</td>"
                    + _plain(r.episodes - r.infra, str(r.episodes - r.infra)) + "".join(cells[:2])
                    + _plain(r.pass_at_1, fmt.share(r.pass_at_1))
                    + _plain(r.pass_at_k, f"{fmt.share(r.pass_at_k)} (k={r.k})" if r.k else fmt.DASH)
                    + _plain(r.pass_hat_k, fmt.share(r.pass_hat_k)) + _plain(r.flips, fmt.share(r.flips))
                    + "".join(cells[2:]) + "</tr>")
    more = [by_key[k] for k in MORE]
    more_rows = "".join(f"<tr><td class=\"name\">{text.esc(r.label)}</td>"
                        + "".join(_cell(r.estimates[c.key], c) for c in more) + "</tr>" for r in rows)
    return ("<section id=\"leaderboard\"><h2>Leaderboard</h2>"
            f"<div class=\"scroll\"><table id=\"leaderboard-table\" class=\"sortable\" data-check=\"leaderboard\">"
            f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table></div>"
            "<p class=\"muted\">Means with bootstrap 95% intervals (tasks resampled). pass@k / pass^k with k = the "
            "fewest verdicts a task has; flips = share of repeated tasks whose verdict changed. Click a header to "
            "sort.</p><h3>Process metrics and call statistics</h3><table class=\"sortable\"><thead><tr>"
            "<th class=\"name\">agent</th>" + "".join(f"<th>{escape(c.label)}</th>" for c in more)
            + f"</tr></thead><tbody>{more_rows}</tbody></table></section>")


def _charts(rows: list[Row], columns: list[Column], text: Text) -> str:
    by_key = {c.key: c for c in columns}
    keys = [k for k in CHART_KEYS if k in by_key] + [c.key for c in columns if c.key.startswith("judge:")]
    charts = []
    for key in keys:
        col = by_key[key]
        items = [(text.redactor.text(r.label), r.estimates[key]) for r in rows]
        charts.append(_bar(col, items))
    return (f'<section id="metrics"><h2>Per-metric comparison</h2><div class="charts" data-check="charts">'
            f'{"".join(charts)}</div></section>')


def _bar(col: Column, items: list[tuple[str, Estimate]]) -> str:
    if col.kind == "rate":
        return bar_chart(col.label, items, scale_max=1.0, unit="%", value_fmt="{:.0f}")
    if col.kind == "score":
        return bar_chart(f"{col.label} (0-10)", items, scale_max=10.0)
    top = max((e.high if e.high is not None else e.mean or 0.0) for _, e in items) if items else 1.0
    return bar_chart(col.label, items, scale_max=top or 1.0, value_fmt="{:.1f}")


def _personas(rows: list[Row], text: Text) -> str:
    charts = "".join(radar_chart(text.redactor.text(r.label), {p: r.personas.get(p) for p in PERSONAS}, index=i)
                     for i, r in enumerate(rows))
    return ('<section id="personas"><h2>Personas</h2><p class="muted">Traits read off the logs, 0–100 '
            "(definitions in docs/reward.md): diligence gathers and looks before writing; prudence avoids malformed, "
            "unrequested destructive and collateral actions; grit keeps going after failures; introspection changes "
            "course after an error and does not loop; strategic follows the dependency order in few calls.</p>"
            f'<div class="charts" data-check="personas">{charts}</div></section>')


def _judges(acc: Accountability, text: Text) -> str:
    if not acc.votes:
        return ('<section id="judges"><h2>Judge accountability</h2><p>No judge votes in these runs.</p>'
                f"<p>{text.esc(acc.counts_line)}</p></section>")
    rows = []
    for judge in acc.judges:
        u = acc.usage.get(judge)
        rows.append(f"<tr><td class=\"name\">{text.esc(judge)}</td><td>{acc.votes[judge]}</td>"
                    f"<td>{acc.unscored_votes.get(judge, 0)}</td><td>{u.calls if u else 0}</td>"
                    f"<td>{(u.prompt_tokens if u else 0)}+{(u.completion_tokens if u else 0)}</td>"
                    f"<td>${(u.cost_usd if u else 0.0):.4f}</td><td>{u.cache_hits if u else 0}</td></tr>")
    pairs = "".join(f"<tr><td class=\"name\">{text.esc(p.a)} vs {text.esc(p.b)}</td><td>{p.pairs}</td>"
                    f"<td>{fmt.number(p.spearman)}</td><td>{fmt.share(p.exact)}</td></tr>" for p in acc.pairs)
    return ('<section id="judges"><h2>Judge accountability</h2><table><thead><tr><th class="name">judge</th>'
            "<th>votes</th><th>unscored</th><th>calls</th><th>tokens in+out</th><th>cost</th><th>cache hits</th>"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
            + (f"<table><thead><tr><th class=\"name\">pair</th><th>items</th><th>Spearman</th><th>exact vote "
               f"agreement</th></tr></thead><tbody>{pairs}</tbody></table>" if pairs else "")
            + f"<p>Split majority: {fmt.share(acc.split_rate)} of {acc.verdicts} verdict(s); "
            f"{acc.unscored_dimensions} dimension verdict(s) unscored.</p><p>{text.esc(acc.counts_line)}</p></section>")


def _tasks(runs: list[RunData], text: Text) -> str:
    episodes = [e for run in runs for e in run.episodes]
    return ('<section id="tasks"><h2>Tasks</h2><p><input id="task-filter" placeholder="filter tasks…"> '
            '<span class="muted">Orange steps: faults injected by the state controller. Blue steps: constraints '
            "the user added mid-episode.</span></p>"
            f'<div data-check="tasks">{task_sections(episodes, text)}</div></section>')
