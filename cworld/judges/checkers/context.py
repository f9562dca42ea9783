"""What a constraint checker reads: the trajectory, its classified calls, the tool specs and the
constraint itself, plus the two helpers most checkers use."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cworld.data_model import Constraint, ToolSpec, Trajectory
from cworld.judges.calls import CallRecord

Verdict = bool | None


@dataclass(frozen=True)
class CheckContext:
    trajectory: Trajectory
    calls: list[CallRecord]
    tools: Mapping[str, ToolSpec]
    constraint: Constraint
    proving: bool = False
    """Synthesis proving that a gold run *shows* the constraint, not a judge asking whether it was broken:
    a constraint the run never exercised (no budgeted purchase, `after` never called) is not shown."""

    @property
    def agent_calls(self) -> list[CallRecord]:
        """Calls the agent is accountable for: infrastructure failures left out."""
        return [c for c in self.calls if not c.infra]

    @property
    def calls_in_scope(self) -> list[CallRecord]:
        """Calls made once the constraint applied (all of them for a constraint given at the start)."""
        since = self.constraint.added_at_turn
        return [c for c in self.agent_calls if since is None or c.turn >= since]

    @property
    def succeeded(self) -> list[CallRecord]:
        return [c for c in self.calls_in_scope if not c.failed]

    @property
    def answer(self) -> str:
        return self.trajectory.final_answer or ""

    @property
    def task_tools(self) -> set[str]:
        task = self.trajectory.task
        return set(task.tools) if task is not None else set()


def as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def tool_matches(tool: str, pattern: str) -> bool:
    """A tool id matches `server/name`, a bare `name`, or a glob of either."""
    name = tool.split("/", 1)[-1]
    return fnmatch.fnmatchcase(tool, pattern) or fnmatch.fnmatchcase(name, pattern)
