"""The task an episode serves, as the World Engine sees it (C-World §3.2): a `PublicTask`, nothing more.

The engine gets what the agent is told (the query, the constraints as stated, the candidate tools) and the
task's scenario (the entities the world holds before the episode). It never gets a `Task`: the gold plan,
sub-goals, rationales, final-answer hints, ground truth, provenance and metadata are what agents are graded
against, so an environment that read them would grade itself. `TaskText` is the public part's words, for
the mention rules of grounding (`grounding.py`); `task_summary` is the public part as the LLM engine reads it.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from typing import Any

from cworld.data_model import PublicTask

_DATE = re.compile(r"(?<!\d)(20\d\d)-(\d\d)-(\d\d)(?!\d)")


class TaskText:
    """The words of a public task: the query, the constraints, the scenario's notes and the values it holds."""

    def __init__(self, task: PublicTask) -> None:
        self.task = task

    @cached_property
    def stated(self) -> str:
        """What the agent is told (query, constraints) and the scenario's notes: where dates are read."""
        return "\n".join([self.task.query, *self.task.constraints, *self.task.scenario.notes])

    @cached_property
    def text(self) -> str:
        """`stated` plus the scenario's ids and attribute values (a value the scenario holds is named)."""
        parts = [self.stated]
        for entity in self.task.scenario.entities:
            if entity.id is not None:
                parts.append(entity.id)
            _texts(entity.attributes, parts)
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
        """`value` occurs in the task as a whole word or phrase (case-insensitive)."""
        return mentioned(self.corpus, value)

    def clock(self) -> datetime | None:
        """The session's 'today': the scenario's `today` when it has one; else the earliest of the dates
        the task states that fall within a year of most others (so a passport's expiry or a birth date
        does not count), at 09:00 UTC; None when the task names no date."""
        today = _parse_today(self.task.scenario.today)
        if today is not None:
            return today
        days = sorted(date(int(y), int(m), int(d)) for y, m, d in _DATE.findall(self.stated) if _valid(y, m, d))
        if not days:
            return None
        year = timedelta(days=365)
        first = max(days, key=lambda d: (sum(d <= other <= d + year for other in days), -d.toordinal()))
        return datetime(first.year, first.month, first.day, 9, 0, tzinfo=UTC)


def task_digest(task: PublicTask) -> str:
    return hashlib.sha256(task.model_dump_json().encode()).hexdigest()[:16]


def task_summary(task: PublicTask, app: str | None = None, limit: int = 4000) -> str:
    """The public task as the LLM engine reads it: the request, the constraints, then the scenario's facts
    (entities as `app/kind/id {attributes}`, those of `app` first; relations as `subject relation object`),
    compact and cut at `limit` characters."""
    scenario = task.scenario
    entities = sorted(scenario.entities, key=lambda e: e.app != app)
    lines = [f"Request: {' '.join(task.query.split())}"]
    lines += [f"Constraint: {c}" for c in task.constraints]
    if scenario.today:
        lines.append(f"Today: {scenario.today}")
    lines += [f"Entity {e.handle}: {_compact(e.attributes)}" for e in entities]
    lines += [f"Relation: {r.subject} {r.relation} {r.object}" for r in scenario.relations]
    lines += [f"Note: {' '.join(n.split())}" for n in scenario.notes]
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
    elif isinstance(value, dict):
        for item in value.values():
            _texts(item, out)
    elif isinstance(value, list | tuple):
        for item in value:
            _texts(item, out)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        out.append(str(value))


def _parse_today(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if len(value.strip()) == 10:
        when = when.replace(hour=9)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _valid(year: str, month: str, day: str) -> bool:
    try:
        date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


def _compact(attributes: dict[str, Any]) -> str:
    text = json.dumps(attributes, ensure_ascii=False, sort_keys=True, default=str, separators=(",", ":"))
    return text if len(text) <= 400 else text[:400] + "...}"
