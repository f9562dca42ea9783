"""What a judge is shown: the task, its constraints (mid-episode ones marked), the agent's steps and its
final answer, its plan and the task's reference decomposition; secrets masked; every piece a tagged data
block (`tags.py`) the agent's text cannot close.

The trajectory is condensed *faithfully*: every step stays, in order, with its turn, its call and what
the agent saw (errors with their class, injected faults marked). The observations that hold the final
answer's facts (`facts.py`) are kept whole, within most of the judge's budget (`budget.py`); the other
observations share the rest, short ones whole, long ones cut, each cut saying how much was left out.
A judge never sees a summary written by a model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from cworld.data_model import Constraint, Step, Trajectory
from cworld.judges import tags
from cworld.judges.allot import StepRoom, allocate, arguments_text, clip, excerpt
from cworld.judges.budget import DEFAULT_CHARS
from cworld.judges.content import Rubric
from cworld.redact import Redactor

PIECE_SHARES = {"task": 0.1, "constraints": 0.1, "final_answer": 0.25, "plan": 0.15, "reference": 0.1}
"""The most of the budget each other piece may take; the steps get what the pieces leave."""


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
        line += f" (added at turn {c.added_at_turn} by the user during the episode"
        if c.replaces:
            line += f", replacing [{c.replaces}]"
        line += ")"
    if replaced_by is not None:
        line += f"  (NO LONGER BINDING: replaced by [{replaced_by.id}] at turn {replaced_by.added_at_turn})"
    return line


def step_block(step: Step, room: StepRoom, redactor: Redactor) -> str:
    """One step as data blocks: `<call>`, `<observation>`, `<agent_thought>`, `<user_message>`, ..."""
    where = {"step": step.index, "turn": step.turn}
    if step.kind == "user":
        return tags.block("user_message", redactor.text(" ".join(step.message.split())), **where)
    if step.kind == "final":
        return tags.empty("final_answer_given", **where)
    if step.kind == "message":
        return _detail("agent_message", step.message or "(empty)", room.detail * 2, redactor, where)
    call = step.tool_call
    name = call.tool if call is not None else "?"
    parts = [_detail("call", arguments_text(step), room.detail, redactor, {**where, "tool": name})]
    parts.append(_observation(step, room, redactor))
    if step.message:
        parts.append(_detail("agent_thought", step.message, room.detail, redactor, {"step": step.index}))
    return "\n".join(parts)


def _detail(name: str, text: str, limit: int, redactor: Redactor, attributes: dict[str, Any]) -> str:
    shown, cut = clip(redactor.text(text), limit)
    return tags.block(name, shown, **attributes, omitted_chars=cut or None)


def _observation(step: Step, room: StepRoom, redactor: Redactor) -> str:
    """What the agent saw after its call (the `<call>` of the same step just before it)."""
    obs = step.observation
    attributes: dict[str, Any] = {"step": step.index}
    if obs is None:
        return tags.empty("observation", **attributes, status="none")
    if obs.is_infra_error:
        attributes["status"] = "infrastructure_failure (not the agent's fault)"
    elif obs.is_error:
        attributes.update(status="error", error_class=obs.error_class)
    else:
        attributes["status"] = "ok"
    faults = sorted({i.kind for i in step.interventions if i.level in ("tool", "state")})
    attributes["injected"] = ",".join(faults) or None
    text = observation_text(step, redactor)
    if room.observation is None:
        return tags.block("observation", text, **attributes, shown="whole")
    if room.spans:
        shown, cut = excerpt(text, room.spans, room.observation)
    else:
        shown, cut = clip(text, room.observation)
    return tags.block("observation", shown, **attributes, shown="excerpt" if cut else None,
                      omitted_chars=cut or None)


def observation_text(step: Step, redactor: Redactor) -> str:
    return " ".join(redactor.text(step.observation.text).split()) if step.observation is not None else ""


@dataclass(frozen=True)
class StepsShown:
    """The condensed steps and what the condensing did (for `Score.details`)."""

    text: str
    kept_whole: list[int]
    cut: int


def trajectory_text(trajectory: Trajectory, budget: int = DEFAULT_CHARS, redactor: Redactor | None = None,
                    answer: str | None = None) -> StepsShown:
    """Every step within about `budget` characters; the observations that hold the facts of `answer`
    (default: the trajectory's final answer) kept whole first."""
    redactor = redactor or Redactor()
    steps = trajectory.steps
    texts = [observation_text(s, redactor) for s in steps]
    rooms, kept = allocate(steps, texts, budget, redactor.text(answer if answer is not None
                                                                else trajectory.final_answer))
    blocks = [step_block(s, rooms[i], redactor) for i, s in enumerate(steps)]
    status = tags.block("episode_status", trajectory.status)
    cut = sum(1 for i, r in rooms.items() if r.observation is not None and len(texts[i]) > r.observation)
    shown = tags.nest("agent_steps", [*blocks, status], count=len(steps))
    return StepsShown(shown, [steps[i].index for i in kept], cut)


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
            feedback = f"; feedback: {clip(str(event.get('feedback', '')), 200)[0]}" if event.get("feedback") else ""
            lines.append(f"turn {turn} STATUS: {status}{feedback}")
        else:
            lines.append(f"turn {turn} {kind}: {clip(_json(event), 300)[0]}")
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


BLOCKS = {"task": "task", "constraints": "constraints", "final_answer": "final_answer", "plan": "agent_plan",
          "reference": "reference_decomposition"}
"""Each evidence piece's tag (the steps are `agent_steps`)."""


@dataclass(frozen=True)
class Evidence:
    """Every piece of evidence a rubric may ask for, each a data block, redacted; and how it was made."""

    pieces: dict[str, str]
    budget: int
    kept_whole: list[int]
    cut: int
    forged_tags: int

    def stats(self) -> dict[str, Any]:
        return {"budget_chars": self.budget, "observations_whole_for_facts": self.kept_whole,
                "observations_cut": self.cut, "forged_tags": self.forged_tags}


def evidence(trajectory: Trajectory, redactor: Redactor, budget: int = DEFAULT_CHARS) -> Evidence:
    """The pieces within about `budget` characters: each other piece up to its share, the steps the rest."""
    task = trajectory.task
    raw = {
        "task": task.query if task is not None else f"(task {trajectory.task_id}: text not recorded)",
        "constraints": constraints_text(trajectory),
        "final_answer": trajectory.final_answer or "(no final answer)",
        "plan": plan_text(trajectory),
        "reference": reference_text(trajectory),
    }
    pieces = {name: _piece(name, redactor.text(text), int(budget * PIECE_SHARES[name])) for name, text in raw.items()}
    others = sum(len(p) for p in pieces.values())
    steps = trajectory_text(trajectory, max(0, budget - others), redactor, redactor.text(trajectory.final_answer))
    pieces["trajectory"] = steps.text
    forged = sum(tags.forged_tags(text) for text in raw.values()) + tags.forged_tags(_agent_texts(trajectory))
    return Evidence(pieces, budget, steps.kept_whole, steps.cut, forged)


def _piece(name: str, text: str, limit: int) -> str:
    """A piece as its block, its lines kept (a format judge needs them), cut at `limit` if longer."""
    text = text.strip()
    cut = max(0, len(text) - limit)
    shown = f"{text[:limit]}…" if cut else text
    return tags.block(BLOCKS[name], f"\n{shown}\n", omitted_chars=cut or None)


def _agent_texts(trajectory: Trajectory) -> str:
    """Everything the agent and the tools wrote into the steps, to count forged tags in."""
    parts = []
    for step in trajectory.steps:
        if step.kind != "final":  # the answer itself is counted once, as the final_answer piece
            parts.append(step.message)
        if step.tool_call is not None:
            parts.append(_json(step.tool_call.arguments))
        if step.observation is not None:
            parts.append(step.observation.text)
    return "\n".join(parts)


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
