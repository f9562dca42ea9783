"""The per-task drill-down of the HTML report: every episode of the task, step by step, with injected
faults and mid-episode constraints highlighted, and the scores that came out of it.

All text goes through `Text.esc`: secrets masked first, then HTML-escaped.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from html import escape
from typing import Any

from cworld.data_model import Constraint, DimensionScore, Step
from cworld.engine.origin import ORIGIN_MEANING, answer_origin
from cworld.judges.runs import Episode
from cworld.redact import Redactor
from cworld.report import fmt

OBS_CHARS, ARGS_CHARS = 1500, 800


@dataclass(frozen=True)
class Text:
    redactor: Redactor

    def esc(self, text: Any, limit: int | None = None) -> str:
        s = self.redactor.text(text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, default=str))
        if limit is not None and len(s) > limit:
            s = f"{s[:limit]}… [+{len(s) - limit} chars]"
        return escape(s)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:80] or "x"


def task_sections(episodes: list[Episode], text: Text) -> str:
    by_task: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        by_task[e.trajectory.task_id].append(e)
    return "".join(_task(task_id, sorted(group, key=_order), text) for task_id, group in sorted(by_task.items()))


def _order(e: Episode) -> tuple[str, str, str, int, str]:
    t = e.trajectory
    return (t.agent, t.mode, t.policy, t.seed, e.run)


def _task(task_id: str, group: list[Episode], text: Text) -> str:
    task = next((e.trajectory.task for e in group if e.trajectory.task is not None), None)
    verdicts = [e.score.success for e in group if e.counted and e.score.success is not None]
    rate = f"{sum(verdicts)}/{len(verdicts)} succeeded" if verdicts else "no verdict"
    query = text.esc(task.query, 160) if task else ""
    body = [f'<details class="task" id="task-{slug(task_id)}"><summary>{text.esc(task_id)} '
            f'<span class="muted">— {query} ({len(group)} episode(s), {rate})</span></summary>']
    if task is not None:
        body.append(f"<p><b>Task.</b> {text.esc(task.query)}</p>{_constraints(task.constraints, text)}")
    body += [_episode(e, text) for e in group]
    body.append("</details>")
    return "".join(body)


def _constraints(constraints: list[Constraint], text: Text, verdicts: dict[str, bool | None] | None = None) -> str:
    if not constraints:
        return '<p class="muted">No constraints.</p>'
    items = []
    for c in constraints:
        mark = _verdict_badge(verdicts[c.id]) if verdicts is not None and c.id in verdicts else ""
        late = (f' <span class="badge constraint">added at turn {c.added_at_turn}'
                f'{" (replaces " + text.esc(c.replaces) + ")" if c.replaces else ""}</span>'
                if c.added_at_turn is not None else "")
        items.append(f"<li><code>{text.esc(c.id)}</code> ({text.esc(c.type)}) {text.esc(c.description)}{late}{mark}</li>")
    return "<ul class=\"constraints\">" + "".join(items) + "</ul>"


def _verdict_badge(verdict: bool | None) -> str:
    if verdict is None:
        return ' <span class="badge">judge decides</span>'
    return ' <span class="badge good">kept</span>' if verdict else ' <span class="badge bad">broken</span>'


def episode_anchor(e: Episode) -> str:
    return f"ep-{slug(e.run)}-{slug(e.trajectory.episode_id)}"


def _episode(e: Episode, text: Text) -> str:
    t, s = e.trajectory, e.score
    verdict = "" if s.success is None else ('<span class="good">success</span>' if s.success
                                            else '<span class="bad">failure</span>')
    head = (f"{text.esc(t.agent)} · {text.esc(t.mode)} · {text.esc(t.policy)} · seed {t.seed} · run "
            f"{text.esc(e.run)} — status {text.esc(t.status)}, overall {fmt.number(s.overall)} {verdict}")
    faults = sum(1 for st in t.steps for i in st.interventions if i.level in ("tool", "state"))
    late = sum(1 for st in t.steps if st.kind == "user")
    marks = (f' <span class="badge fault">{faults} fault(s)</span>' if faults else "") + (
        f' <span class="badge constraint">{late} mid-episode change(s)</span>' if late else "")
    parts = [f'<details class="episode" id="{episode_anchor(e)}"><summary>{head}{marks}</summary>',
             _scores(e, text), _constraints(t.constraints_final, text, s.constraints), _steps(e, text),
             f"<p><b>Final answer.</b></p><pre>{text.esc(t.final_answer or '(none)')}</pre>", "</details>"]
    return "".join(parts)


def _scores(e: Episode, text: Text) -> str:
    s = e.score
    metrics = ", ".join(f"{k} {fmt.number(v)}" for k, v in s.metrics.items() if v is not None)
    parts = [f'<p class="muted">basis: {text.esc(s.overall_basis or "–")}; {text.esc(metrics)}</p>']
    if "state_diff" in s.details:
        parts.append(f"<p><b>State diff.</b> {text.esc(s.details['state_diff'])}</p>")
    if s.details.get("note"):
        parts.append(f'<p class="note">{text.esc(s.details["note"])}</p>')
    if s.dimensions:
        parts.append(_dimensions(s.dimensions, text))
    return "".join(parts)


def _dimensions(dims: dict[str, DimensionScore], text: Text) -> str:
    rows = []
    for name, d in dims.items():
        verdict = "unscored" if d.unscored else ("pass" if d.passed else "fail")
        votes = "<br>".join(f"{text.esc(v.judge)}: {fmt.number(v.score, 1)} "
                            f"{'pass' if v.passed else 'fail' if v.passed is False else 'unscored'} — "
                            f"{text.esc(v.rationale, 300)}" for v in d.votes)
        rows.append(f'<tr><td class="name">{text.esc(name)}</td><td>{fmt.number(d.score, 1)}</td><td>{verdict}'
                    f'{" (split)" if d.split else ""}</td><td class="name">{votes or text.esc(d.note)}</td></tr>')
    return ('<table class="dims"><thead><tr><th class="name">dimension</th><th>median</th><th>majority</th>'
            '<th class="name">votes</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table>")


def _steps(e: Episode, text: Text) -> str:
    outcomes = {c["step"]: c for c in e.score.details.get("calls", []) if isinstance(c, dict)}
    late = {c.id: c for c in e.trajectory.constraints_final if c.added_at_turn is not None}
    items = [_step(st, outcomes.get(st.index), late, text, episode_anchor(e)) for st in e.trajectory.steps]
    return '<ol class="steps">' + "".join(items) + "</ol>"


def _step(st: Step, call: dict[str, Any] | None, late: dict[str, Constraint], text: Text, anchor: str) -> str:
    faults = [i for i in st.interventions if i.level in ("tool", "state")]
    classes = ["step", f"kind-{st.kind}"] + (["fault"] if faults else []) + (["constraint"] if st.kind == "user" else [])
    classes += ["final"] if st.kind == "final" else []
    head = f'<b>T{st.turn}</b> <span class="badge">{text.esc(st.kind)}</span>'
    if call is not None:
        head += f' <span class="badge {escape(str(call.get("outcome")))}">{text.esc(call.get("outcome"))}</span>'
    head += "".join(f' <span class="badge fault">injected: {text.esc(i.kind)} ({i.level})</span>' for i in faults)
    origin = answer_origin(st.raw_result)
    if origin is not None:
        head += f' <span class="badge origin-{origin}" title="{ORIGIN_MEANING[origin]}">engine: {origin}</span>'
    return f'<li class="{" ".join(classes)}" id="{anchor}-s{st.index}">{head}{_step_body(st, call, late, text)}</li>'


def _step_body(st: Step, call: dict[str, Any] | None, late: dict[str, Constraint], text: Text) -> str:
    if st.kind == "user":
        ids = [str(i.params.get("constraint_id")) for i in st.interventions if i.params.get("constraint_id")]
        added = "".join(f"<div>new constraint <code>{text.esc(c.id)}</code>: {text.esc(c.description)}</div>"
                        for cid in ids if (c := late.get(cid)) is not None)
        return f"<div>User, mid-episode: {text.esc(st.message)}</div>{added}"
    if st.kind == "final":
        return f"<div>final answer ({len(st.message.split())} words)</div>"
    parts = [f"<div><i>{text.esc(st.message, 600)}</i></div>"] if st.message else []
    if st.tool_call is not None:
        parts.append(f"<div><code>{text.esc(st.tool_call.tool)}</code></div>"
                     f"<pre>{text.esc(st.tool_call.arguments, ARGS_CHARS)}</pre>")
    if call and call.get("schema_errors"):
        parts.append(f'<div class="bad">schema: {text.esc("; ".join(call["schema_errors"]))}</div>')
    if st.observation is not None:
        cls = ' class="error"' if st.observation.is_error else ""
        label = f"error ({st.observation.error_class}): " if st.observation.is_error else ""
        parts.append(f"<pre{cls}>{text.esc(label + st.observation.text, OBS_CHARS)}</pre>")
    return "".join(parts)
