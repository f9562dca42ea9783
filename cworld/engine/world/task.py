"""The task an episode serves, as the World Engine sees it (C-World §3.2: the engine conditions on the task
context and the session).

A `TaskContext` is what the user asked and what the task's author wrote down about the world: the query,
the constraints, the final-answer hints and the gold plan's calls (tool and arguments, `{{step.path}}`
references kept as written). It never holds the task's ground truth or anything read from a live sandbox:
synthesized mode must work for tools nobody runs, so the engine may only know what the task says.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from typing import Any

from pydantic import BaseModel, Field

from cworld.data_model import Task
from cworld.data_model.references import REFERENCE

_DATE = re.compile(r"(?<!\d)(20\d\d)-(\d\d)-(\d\d)(?!\d)")


class ContextStep(BaseModel):
    id: str
    tool: str = Field(description="tool id, `server/name`")
    arguments: dict[str, Any] = Field(default_factory=dict)


class TaskContext(BaseModel):
    task_id: str = ""
    query: str = ""
    constraints: list[str] = Field(default_factory=list)
    hints: list[str] = Field(default_factory=list, description="what the final answer should say")
    steps: list[ContextStep] = Field(default_factory=list, description="the gold plan's calls, as written")

    @classmethod
    def from_task(cls, task: Task) -> TaskContext:
        """Everything a task says about its world, and nothing of its ground truth."""
        return cls(
            task_id=task.id,
            query=task.query,
            constraints=[c.description for c in task.constraints],
            hints=list(task.final_answer_hints),
            steps=[ContextStep(id=s.id, tool=s.tool, arguments=s.arguments) for s in task.gold_plan],
        )

    @cached_property
    def text(self) -> str:
        """The context's words: the text, every literal argument and every value a reference selects by
        (`[name=Chidi Lewis]`)."""
        parts = [self.query, *self.constraints, *self.hints]
        for step in self.steps:
            _texts(step.arguments, parts)
        return "\n".join(parts)

    @cached_property
    def corpus(self) -> str:
        """`text`, lowercased: a value the engine is asked about is grounded when it occurs here."""
        return self.text.lower()

    def full_names(self, first: str) -> list[str]:
        """People the task names whose first name is `first` ('Emma' -> Emma Lopez, Emma Johansson)."""
        found = re.findall(rf"(?<![\w-]){re.escape(first)}\s+[A-Z][\w'-]+", self.text)
        return list(dict.fromkeys(" ".join(name.split()) for name in found))

    def mentions(self, value: str) -> bool:
        """`value` occurs in the context as a whole word or phrase (case-insensitive)."""
        return mentioned(self.corpus, value)

    def clock(self) -> datetime | None:
        """The session's 'today': the earliest of the dates the task mentions that fall within a year of
        most others (so a passport's expiry or a birth date does not count), at 09:00 UTC; None when the
        task names no date."""
        days = sorted(date(int(y), int(m), int(d)) for y, m, d in _DATE.findall(self.corpus) if _valid(y, m, d))
        if not days:
            return None
        year = timedelta(days=365)
        first = max(days, key=lambda d: (sum(d <= other <= d + year for other in days), -d.toordinal()))
        return datetime(first.year, first.month, first.day, 9, 0, tzinfo=UTC)

    def digest(self) -> str:
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]

    def summary(self, limit: int = 2400) -> str:
        """The context as the LLM engine reads it: the request, then the calls the task expects."""
        lines = [f"Request: {' '.join(self.query.split())}"]
        lines += [f"Constraint: {c}" for c in self.constraints]
        lines += [f"Expected in the answer: {h}" for h in self.hints]
        lines += [f"Planned call {s.id}: {s.tool} {_compact(s.arguments)}" for s in self.steps]
        text = "\n".join(lines)
        return text if len(text) <= limit else text[:limit] + " ...(cut)"


def mentioned(corpus: str, value: str) -> bool:
    needle = " ".join(str(value).lower().split())
    if len(needle) < 2:
        return False
    return re.search(rf"(?<![\w-]){re.escape(needle)}(?![\w-])", corpus) is not None


def _texts(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
        out.extend(cond for _, path in REFERENCE.findall(value) for cond in re.findall(r"[=~]([^\]&]+)", path))
    elif isinstance(value, dict):
        for item in value.values():
            _texts(item, out)
    elif isinstance(value, list | tuple):
        for item in value:
            _texts(item, out)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        out.append(str(value))


def _valid(year: str, month: str, day: str) -> bool:
    try:
        date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


def _compact(arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= 300 else text[:300] + "...}"
