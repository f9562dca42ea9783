"""What a judge is shown: the task, its constraints (mid-episode ones marked), the agent's steps and its
final answer, its plan and the task's reference decomposition; secrets masked.

The trajectory is condensed *faithfully*: every step stays, in order, with its turn, its call and
what the agent saw (errors with their class, injected faults marked); only long values are cut, and
each cut says how much was left out. A judge never sees a summary written by a model.
"""

from __future__ import annotations

import json
from typing import Any

from cworld.data_model import Constraint, Step, Trajectory
from cworld.judges.content import Rubric
from cworld.redact import Redactor

DEFAULT_BUDGET = 14000
"""Characters for the whole step list; each step gets an equal share (never below MIN_STEP)."""
MIN_STEP = 160


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[+{len(text) - limit} chars]"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def constraints_text(trajectory: Trajectory) -> str:
    """The task's constraints, then every change the user made during the episode, with its turn."""
    initial = trajectory.task.constraints if trajectory.task is not None else []
    final = trajectory.constraints_final or list(initial)
    replaced = {c.replaces: c for c in final if c.replaces}
    lines = [_constraint_line(c, replaced.get(c.id)) for c in initial]
    lines += [_constraint_line(c, replaced.get(c.id)) for c in final if c.added_at_turn is not None]
    return "\n".join(lines) or "(none)"


def _constraint_line(c: Constraint, replaced_by: Constraint | None) -> str:
    line = f"- [{c.id}] ({c.type}) {c.description}"
    if c.added_at_turn is not None:
        line += f"  <- added at turn {c.added_at_turn} by the user during the episode"
        if c.replaces:
            line += f", replacing [{c.replaces}]"
    if replaced_by is not None:
        line += f"  (NO LONGER BINDING: replaced by [{replaced_by.id}] at turn {replaced_by.added_at_turn})"
    return line


def step_line(step: Step, limit: int) -> str:
    head = f"Turn {step.turn} #{step.index}"
    thought = f" thought: {clip(step.message, limit // 3)}" if step.message and step.kind != "user" else ""
    if step.kind == "user":
        return f"{head} USER (mid-episode message): {clip(step.message, limit)}"
    if step.kind == "final":
        return f"{head} FINAL ANSWER given (status: see below)."
    if step.kind == "message":
        return f"{head} message:{thought or ' (empty)'}"
    call = step.tool_call
    name = call.tool if call is not None else "?"
    args = clip(_json(call.arguments), limit // 3) if call is not None else "{}"
    return f"{head} CALL {name} {args} -> {_observation(step, limit)}{_faults(step)}{thought}"


def _observation(step: Step, limit: int) -> str:
    obs = step.observation
    if obs is None:
        return "(no observation)"
    if obs.is_error:
        who = "INFRASTRUCTURE FAILURE (not the agent's fault)" if obs.is_infra_error else f"ERROR ({obs.error_class})"
        return f"{who}: {clip(obs.text, limit // 2)}"
    return f"OK: {clip(obs.text, limit // 2)}"


def _faults(step: Step) -> str:
    faults = [i for i in step.interventions if i.level in ("tool", "state")]
    if not faults:
        return ""
    return " [INJECTED by the environment: " + ", ".join(sorted({i.kind for i in faults})) + "]"


def trajectory_text(trajectory: Trajectory, budget: int = DEFAULT_BUDGET) -> str:
    steps = trajectory.steps
    limit = max(MIN_STEP, budget // max(1, len(steps)))
    lines = [step_line(s, limit) for s in steps]
    lines.append(f"Episode status: {trajectory.status}.")
    return "\n".join(lines)


def plan_text(trajectory: Trajectory) -> str:
    lines = []
    for event in trajectory.planner_events:
        kind, turn = event.get("event", "?"), event.get("turn", "?")
        if kind in ("plan", "replan") and event.get("subgoals"):
            goals = "; ".join(f"{g.get('id')}: {g.get('description')} (after {', '.join(g.get('depends_on') or []) or '-'})"
                              for g in event.get("subgoals", []))
            lines.append(f"turn {turn} {kind.upper()}: {goals}")
        elif kind == "update":
            status = ", ".join(f"{k}={v}" for k, v in (event.get("status") or {}).items())
            feedback = f"; feedback: {clip(str(event.get('feedback', '')), 200)}" if event.get("feedback") else ""
            lines.append(f"turn {turn} STATUS: {status}{feedback}")
        else:
            lines.append(f"turn {turn} {kind}: {clip(_json(event), 300)}")
    return "\n".join(lines) or "(the agent logged no plan)"


def reference_text(trajectory: Trajectory) -> str:
    task = trajectory.task
    if task is None:
        return "(no reference)"
    goals = [f"- {g.id}: {g.description} (after {', '.join(g.depends_on) or '-'}; tools {', '.join(g.tools) or '-'})"
             for g in task.subgoals]
    why = [f"- {tool}: {reason}" for tool, reason in task.rationales.items()]
    parts = ["Reference sub-goals:", *(goals or ["(none)"]), "Tool rationales:", *(why or ["(none)"])]
    return "\n".join(parts)


def evidence(trajectory: Trajectory, redactor: Redactor, budget: int = DEFAULT_BUDGET) -> dict[str, str]:
    """Every piece of evidence a rubric may ask for, redacted."""
    task = trajectory.task
    pieces = {
        "task": task.query if task is not None else f"(task {trajectory.task_id}: text not recorded)",
        "constraints": constraints_text(trajectory),
        "trajectory": trajectory_text(trajectory, budget),
        "final_answer": trajectory.final_answer or "(no final answer)",
        "plan": plan_text(trajectory),
        "reference": reference_text(trajectory),
    }
    return {k: redactor.text(v) for k, v in pieces.items()}


TITLES = {"task": "Task", "constraints": "Constraints", "trajectory": "Agent steps",
          "final_answer": "Final answer", "plan": "Agent's plan and status updates",
          "reference": "Reference decomposition"}


def evidence_for(rubric: Rubric, pieces: dict[str, str]) -> str:
    return "\n\n".join(f"### {TITLES[name]}\n{pieces[name]}" for name in rubric.shows)


def applies(rubric: Rubric, trajectory: Trajectory) -> bool:
    """Whether the dimension can be judged for this episode at all (not the same as unscored)."""
    if rubric.applies_when == "constraints":
        return bool(trajectory.constraints_final or (trajectory.task and trajectory.task.constraints))
    if rubric.applies_when == "plan":
        return any(e.get("event") in ("plan", "replan") and e.get("subgoals") for e in trajectory.planner_events)
    if rubric.applies_when == "progress":
        return any(e.get("event") == "update" for e in trajectory.planner_events)
    return True
