"""Clock block: a reminder, in my local time, ahead of what an anchor scheduled."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from cworld.synth.offline.blocks.dictated import dictated
from cworld.synth.offline.composer import BlockFailed, Composer, follow_up, tools
from cworld.synth.offline.phrases import day

APP = "clock"
CLOCK = "clock/"


def reminder(c: Composer) -> None:
    when = date.fromisoformat(c.facts["when"])
    local_now = c.now.astimezone(_zone(c)).replace(tzinfo=None)
    at = datetime.combine(when - timedelta(days=1), datetime.min.time()).replace(hour=18)
    if at <= local_now + timedelta(hours=1):
        at = datetime.combine(when, datetime.min.time()).replace(hour=7)
        if at <= local_now + timedelta(hours=1):
            raise BlockFailed("too late for a reminder")
    topic = c.facts["topic"]
    c.subgoal("reminder")
    c.step("timezone", CLOCK + "get_timezone", {})
    remind = {"text": dictated(c.text("reminder.text", topic=topic)), "at": at.isoformat()}
    c.step("remind", CLOCK + "schedule_reminder", remind, topic=topic)
    c.say(*c.variants("reminder.say", time=f"{at:%H:%M}", day=day(at.date()), text=remind["text"]))


def _zone(c: Composer) -> Any:
    from zoneinfo import ZoneInfo

    return ZoneInfo(c.state["clock"]["timezone"])


BLOCKS = [
    follow_up("reminder", APP, tools(CLOCK, "get_timezone", "schedule_reminder"), reminder, "when future")
]
