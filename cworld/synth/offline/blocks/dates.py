"""Date-calculator block (the `datetime` server): how many working days are left before what an anchor
scheduled. The count goes to the final answer, not into the texts the other blocks dictate: a dictated text
holds only what the request states."""

from __future__ import annotations

from datetime import date

from cworld.synth.offline.composer import BlockFailed, Composer, follow_up
from cworld.synth.offline.phrases import day

APP = "dates"
COUNT = "datetime/business_days_between"


def workdays(c: Composer) -> None:
    when = date.fromisoformat(c.facts["when"])
    if when <= c.today:
        raise BlockFailed("the date is not ahead")
    c.subgoal("count_days")
    count = c.step("workdays", COUNT, {"start": c.today.isoformat(), "end": when.isoformat()}, day=day(when))
    days = count.ref("days")
    c.say(*c.variants("workdays.say", day=day(when)))
    c.hint(c.text("workdays.hint", date=when.isoformat(), days=days))
    c.report(c.text("workdays.report"), days)


BLOCKS = [follow_up("workdays", APP, frozenset({COUNT}), workdays, needs="when summary future")]
