"""Hand-made trajectories for tests and examples: one call per turn, faults and user messages explicit.

    t = (TrajectoryBuilder(task)
         .call("mail/search_messages", {"query": "audit"}, result={"messages": []})
         .call("mail/send", {"to": "x"}, injected="timeout")
         .user("Keep it under 80 words.", Constraint(id="c2", type="format", description="...",
                                                      verification={"kind": "final_answer_max_words", "value": 80}))
         .final("Done.")
         .build())
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cworld.data_model import (
    Constraint,
    Intervention,
    PlanStep,
    Step,
    SubGoal,
    Task,
    ToolCall,
    ToolResult,
    Trajectory,
    append_jsonl,
)
from cworld.data_model.tools import ErrorClass
from cworld.data_model.trajectory import EpisodeStatus, FaultLevel

STATE_FAULTS = frozenset({"delayed", "corrupted", "truncated", "stale", "session_expired"})


class TrajectoryBuilder:
    def __init__(self, task: Task | None = None, *, agent: str = "agent-a", mode: str = "live",
                 policy: str = "none", seed: int = 0, episode_id: str | None = None) -> None:
        self.task = task
        self.agent, self.mode, self.policy, self.seed = agent, mode, policy, seed
        self.episode_id = episode_id or f"{task.id if task else 'task'}-{agent}-{seed}"
        self.steps: list[Step] = []
        self.planner_events: list[dict[str, Any]] = []
        self.constraints = [c.model_copy() for c in task.constraints] if task is not None else []
        self.final_answer = ""
        self.status: EpisodeStatus = "turn_limit"
        self.end_state: dict[str, Any] | None = None
        self.turn = 0

    def _step(self, kind: str, **fields: Any) -> Step:
        self.turn += 1
        step = Step(index=len(self.steps), turn=self.turn, kind=kind, **fields)  # type: ignore[arg-type]
        self.steps.append(step)
        return step

    def call(self, tool: str, arguments: dict[str, Any] | None = None, *, result: dict[str, Any] | None = None,
             error: ErrorClass | None = None, injected: str | None = None, infra: bool = False,
             not_callable: bool = False, thought: str = "") -> TrajectoryBuilder:
        """A tool call. `error`: the backend's error class; `injected`: a fault kind the controller applied
        (tool-level faults answer instead of the backend; state-level ones rewrite a good result);
        `not_callable`: answered by the rollout (unknown or locked tool)."""
        call = ToolCall(id=f"call_{len(self.steps)}", tool=tool, arguments=arguments or {})
        raw, obs, interventions = self._outcome(tool, result, error, injected, infra, not_callable)
        self._step("tool", message=thought, tool_call=call, raw_result=raw, observation=obs, interventions=interventions)
        return self

    def _outcome(self, tool: str, result: dict[str, Any] | None, error: ErrorClass | None, injected: str | None,
                 infra: bool, not_callable: bool) -> tuple[ToolResult | None, ToolResult, list[Intervention]]:
        if not_callable:
            return None, ToolResult.error("not_found", f"not_found: there is no tool '{tool}'"), []
        if infra:
            crash = ToolResult.error("server_crash", "server crashed")
            return crash, crash, []
        raw = ToolResult.error(error, f"{error}: backend said no") if error else ToolResult.ok(result or {"ok": True})
        if injected is None:
            return raw, raw, []
        level: FaultLevel = "state" if injected in STATE_FAULTS else "tool"
        record = Intervention(kind=injected, level=level, turn=self.turn + 1, tool=tool,
                              params={"phase": "fire", "fault": f"k:{injected}"}, message=f"{injected} injected")
        if level == "state":
            return raw, ToolResult.ok(raw.structured_content, text=raw.text[:10] + "…[truncated]"), [record]
        return None, ToolResult.error("timeout" if injected == "timeout" else "unavailable", f"{injected}"), [record]

    def search(self, query: str, tools: list[dict[str, Any]] | None = None) -> TrajectoryBuilder:
        call = ToolCall(id=f"search_{len(self.steps)}", tool="search_tools", arguments={"query": query, "k": 5})
        found = ToolResult.ok({"query": query, "tools": tools or []}, source="search")
        self._step("search", tool_call=call, raw_result=found, observation=found)
        return self

    def say(self, text: str) -> TrajectoryBuilder:
        self._step("message", message=text)
        return self

    def user(self, message: str, constraint: Constraint) -> TrajectoryBuilder:
        """A mid-episode change of the requirements, delivered as the controller does."""
        added = constraint.model_copy(update={"added_at_turn": self.turn + 1})
        if added.replaces:
            self.constraints = [c for c in self.constraints if c.id != added.replaces]
        self.constraints.append(added)
        record = Intervention(kind="new_constraint", level="constraint", turn=self.turn + 1, message=message,
                              params={"phase": "fire", "constraint_id": added.id})
        self.turn += 1
        self.steps.append(Step(index=len(self.steps), turn=self.turn, kind="user", message=message,
                               interventions=[record]))
        self.turn -= 1  # the message arrives before the agent's action of the same turn
        return self

    def plan(self, subgoals: list[dict[str, Any]], *, event: str = "plan") -> TrajectoryBuilder:
        self.planner_events.append({"turn": self.turn, "event": event, "subgoals": subgoals})
        return self

    def progress(self, status: dict[str, str], feedback: str = "") -> TrajectoryBuilder:
        self.planner_events.append({"turn": self.turn, "event": "update", "status": status, "feedback": feedback})
        return self

    def final(self, answer: str, status: EpisodeStatus = "completed") -> TrajectoryBuilder:
        self._step("final", message=answer)
        self.final_answer, self.status = answer, status
        return self

    def with_end_state(self, state: dict[str, Any]) -> TrajectoryBuilder:
        self.end_state = state
        return self

    def build(self) -> Trajectory:
        return Trajectory(
            episode_id=self.episode_id, task_id=self.task.id if self.task else "task", task=self.task,
            agent=self.agent, mode=self.mode, policy=self.policy, seed=self.seed,  # type: ignore[arg-type]
            status=self.status, steps=self.steps, planner_events=self.planner_events,
            constraints_final=self.constraints, final_answer=self.final_answer, end_state=self.end_state,
        )


def write_run(folder: Path, trajectories: list[Trajectory]) -> Path:
    """A run folder as `cworld run` leaves it: `trajectories.jsonl`, one episode per line."""
    append_jsonl(folder / "trajectories.jsonl", trajectories)
    return folder


def sample_task(n: int) -> Task:
    """A small sandbox-like task: find a message, find a contact, forward (sub-goal graph, gold plan)."""
    return Task(
        id=f"task-{n}", query=f"Forward message #{n} to Deborah and confirm.", tools=[
            "mail/search_messages", "mail/search_contacts", "mail/forward_message"],
        constraints=[Constraint(id="c-budget", type="tool_count", description="At most 6 tool calls.",
                                verification={"kind": "max_calls", "value": 6})],
        subgoals=[SubGoal(id="g1", description="find the message", tools=["mail/search_messages"]),
                  SubGoal(id="g2", description="find Deborah", tools=["mail/search_contacts"]),
                  SubGoal(id="g3", description="forward", depends_on=["g1", "g2"], tools=["mail/forward_message"])],
        gold_plan=[PlanStep(id="a", tool="mail/search_messages", arguments={"query": f"#{n}"}),
                   PlanStep(id="b", tool="mail/search_contacts", arguments={"query": "Deborah"}),
                   PlanStep(id="c", tool="mail/forward_message", arguments={"message_id": "{{a.id}}", "to": "{{b.id}}"})],
    )


def sample_episode(task: Task, agent: str, seed: int, *, skilled: bool, secret: str = "") -> Trajectory:
    """A careful agent (`skilled`) follows the plan and recovers from the injected fault; a careless one
    forwards first, repeats the faulted call and ignores a mid-episode format change."""
    late = Constraint(id="c-summary", type="response_content", description="End with a line starting 'SUMMARY:'.",
                      verification={"kind": "final_answer_contains", "value": "SUMMARY:"})
    b = TrajectoryBuilder(task, agent=agent, seed=seed, episode_id=f"{task.id}-{agent}-{seed}")
    if skilled:
        b.call("mail/search_messages", {"query": task.query[:20]}, result={"id": "m1", "note": secret})
        b.call("mail/search_contacts", {"query": "Deborah"}, result={"id": "p1"})
        b.user("Please end with a line starting 'SUMMARY:'.", late)
        b.call("mail/forward_message", {"message_id": "m1", "to": "p1"}, injected="timeout")
        b.call("mail/forward_message", {"message_id": "m1", "to": "p1", "note": "fyi"}, result={"ok": True})
        return b.final("Forwarded message m1 to Deborah (p1).\nSUMMARY: forwarded.").build()
    b.call("mail/forward_message", {"message_id": "m?", "to": "Deborah"}, error="not_found")
    b.call("mail/search_messages", {"query": task.query[:20], "tag": 3}, result={"id": "m1"})
    b.user("Please end with a line starting 'SUMMARY:'.", late)
    b.call("mail/forward_message", {"message_id": "m1", "to": "Deborah"}, injected="timeout")
    b.call("mail/forward_message", {"message_id": "m1", "to": "Deborah"}, injected="timeout")
    if seed % 2:
        b.call("mail/forward_message", {"message_id": "m1", "to": "Deborah"}, result={"ok": True})
    return b.final(f"Done, I think. {secret}").build()
