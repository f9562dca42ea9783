"""What the user states, read from the public task's words: numeric limits and deadlines.

The environment knows a task only as its public part (`PublicTask`), whose constraints are the sentences
the user wrote. Their machine forms (`Constraint.verification`) belong to the grader and may hold the
answer (`argument_equals`, `final_answer_mentions`), so the faults that change a requirement and the turn
limit take the user's numbers from the words. The patterns are deliberately narrow: a limit is a number
right after "at most", "no more than", "under"…; a deadline is a date shortly after "by", "before",
"no later than"…. A sentence they miss only means no fault changes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cworld.data_model import PublicTask

_NUMBER = r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
_LIMIT = re.compile(
    r"(?:\bat most|\bno more than|\bnot more than|\bnever more than|n't\s+\w+\s+more than|\bup to|\bunder"
    r"|\bless than|\bfewer than|\bbelow|\bmaximum(?: of)?|\bwithin|\blimit(?:ed)? (?:of|to|is)|\bcap(?:ped)? (?:of|at))"
    r"\s+(?:[$€£]\s?)?" + _NUMBER,
    re.IGNORECASE,
)
_CALLS = re.compile(r"^\s*(?:[\w-]+\s+){0,2}calls?\b", re.IGNORECASE)

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_ORDINAL = r"(?:st|nd|rd|th)?"
_ISO = r"\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:\d{2})?)?"
_ISO_DATE = re.compile(_ISO)
_DATE = (rf"(?:{_ISO}|\d{{1,2}}{_ORDINAL}\s+{_MONTH}|{_MONTH}\s+\d{{1,2}}{_ORDINAL}\b"
         rf"|the\s+\d{{1,2}}(?:st|nd|rd|th)\b|(?:mon|tues|wednes|thurs|fri|satur|sun)day\b)")
_DEADLINE = re.compile(
    rf"\b(?:deadline|due|no later than|not later than|by|before|until)\s+(?:\S+\s+){{0,4}}?{_DATE}", re.IGNORECASE
)


@dataclass(frozen=True)
class StatedLimit:
    """A number the user set as an upper limit, as written in one of the task's constraints."""

    text: str
    """The constraint as the user stated it."""
    value: int | float
    written: str
    """The number as written (`1,000.00`): a changed limit is written the same way."""
    counts_calls: bool
    """Whether it limits tool calls ("no more than 14 tool calls")."""

    def write(self, value: int | float) -> str:
        """`value` written like the stated number (same decimals, same thousands separator)."""
        decimals = len(self.written.partition(".")[2])
        separator = "," if "," in self.written else ""
        return f"{value:{separator}.{decimals}f}"


@dataclass(frozen=True)
class StatedDeadline:
    """A date the user set as a deadline; `iso` when the user wrote it as an ISO date (or date-time)."""

    text: str
    iso: str | None


def stated_limits(task: PublicTask) -> list[StatedLimit]:
    """Every upper limit the user states, in the order of the task's constraints."""
    limits = []
    for text in task.constraints:
        match = _LIMIT.search(text)
        if match is not None:
            written = match["num"]
            plain = written.replace(",", "")
            value: int | float = float(plain) if "." in plain else int(plain)
            limits.append(StatedLimit(text, value, written, bool(_CALLS.match(text[match.end():]))))
    return limits


def stated_call_limit(task: PublicTask) -> int | None:
    """The tightest limit on tool calls the user states, if any."""
    calls = [int(limit.value) for limit in stated_limits(task) if limit.counts_calls]
    return min(calls) if calls else None


def stated_deadlines(task: PublicTask) -> list[StatedDeadline]:
    """Every deadline the user states, in the order of the task's constraints."""
    found = []
    for text in task.constraints:
        match = _DEADLINE.search(text)
        if match is not None:
            iso = _ISO_DATE.search(text, match.start())
            found.append(StatedDeadline(text, iso[0] if iso else None))
    return found


def candidate_tools(task: PublicTask) -> int:
    """How many distinct tools the task offers: the size of the job as the environment may know it."""
    return len(set(task.tools))
