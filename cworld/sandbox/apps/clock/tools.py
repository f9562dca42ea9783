"""The clock app's tools: the time, time zones, conversions, sleep and reminders."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cache
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, available_timezones

from pydantic import Field

from cworld.sandbox.apps._shared.records import OpenPage, OpenPageSize, lookup, paginate
from cworld.sandbox.apps._shared.values import iso, parse_iso, suggest
from cworld.sandbox.apps.clock.models import Duration, Reading, Reminder, ReminderList, Zone, ZonePage
from cworld.sandbox.framework import AppError, SandboxApp, kb, tool
from cworld.sandbox.framework.journal import for_reading

MAX_SLEEP_SECONDS = 24 * 3600
MAX_PENDING_REMINDERS = 20
LOCAL_FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M")

TimezoneArg = Annotated[str, Field(description="IANA time zone name, e.g. 'Europe/Paris' (see list_timezones)")]
LocalTimeArg = Annotated[str, Field(description="wall-clock time as YYYY-MM-DDTHH:MM (seconds optional)")]


@cache
def _zone_names() -> frozenset[str]:
    return frozenset(available_timezones())


def zone_of(name: str) -> ZoneInfo:
    """The zone for an IANA name; a wrong name is an error that suggests the right one."""
    if name in _zone_names():
        return ZoneInfo(name)
    by_city = {z["city"].lower(): z["zone"] for z in kb.load("timezones")}
    hint = by_city.get(name.strip().lower())
    tip = f" Did you mean '{hint}'?" if hint else suggest(name, sorted(_zone_names()))
    raise AppError("not_found", f"unknown time zone '{name}'.{tip} Use list_timezones to find the IANA name.")


def offset_text(moment: datetime) -> str:
    minutes = int((moment.utcoffset() or timedelta()).total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def parse_local(text: str, zone: ZoneInfo, field: str) -> datetime:
    cleaned = text.strip()
    for fmt in LOCAL_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=zone)
        except ValueError:
            continue
    raise AppError("invalid", f"{field} '{text}' is not a time; give it as YYYY-MM-DDTHH:MM")


def reading(moment: datetime, zone_name: str) -> Reading:
    local = moment.astimezone(zone_of(zone_name))
    return Reading(utc=iso(moment), local=local.strftime("%Y-%m-%dT%H:%M:%S"), timezone=zone_name,
                   utc_offset=offset_text(local), weekday=local.strftime("%A"))


def human(seconds: int) -> str:
    span = abs(seconds)
    text = f"{span // 86400}d {span % 86400 // 3600}h {span % 3600 // 60}m" if span >= 86400 else (
        f"{span // 3600}h {span % 3600 // 60}m" if span >= 3600 else f"{span // 60}m {span % 60}s")
    return f"{text} from now" if seconds >= 0 else f"{text} ago"


class ClockTools(SandboxApp):
    """Tools of the clock app (a mixin of `ClockApp`)."""

    def _reminder(self, rec: dict[str, Any]) -> Reminder:
        status = rec["status"]
        if status == "pending" and parse_iso(rec["due_utc"]) <= self.now:
            status = "due"
        return Reminder(reminder_id=rec["id"], text=rec["text"], due_utc=rec["due_utc"], status=status)

    def _get(self, reminder_id: str) -> dict[str, Any]:
        return lookup(self.state["reminders"], reminder_id,
                      f"no reminder '{reminder_id}'; list_reminders shows the ids")

    @tool(read_only=True, name="now")
    def current_time(
        self,
        timezone: Annotated[str | None, Field(description="IANA zone to show local time in; default: your zone")] = None,
    ) -> Reading:
        """Current date and time, in UTC and as local time (your own time zone unless another is given)."""
        return reading(self.now, timezone or self.state["timezone"])

    @tool(read_only=True)
    def get_timezone(self) -> Zone:
        """Your own time zone (the one 'my time' refers to), with its current UTC offset."""
        return self._zone(self.state["timezone"])

    def _zone(self, name: str) -> Zone:
        known = {z["zone"]: z for z in kb.load("timezones")}.get(name, {"city": "", "country": ""})
        return Zone(zone=name, city=known["city"], country=known["country"],
                    utc_offset=offset_text(self.now.astimezone(zone_of(name))))

    @tool(read_only=False, idempotent=True)
    def set_timezone(self, timezone: TimezoneArg) -> Zone:
        """Change your own time zone (e.g. after travelling). Times stored by other apps stay in UTC."""
        zone_of(timezone)
        self.state["timezone"] = timezone
        return self._zone(timezone)

    @tool(read_only=True)
    def list_timezones(
        self,
        query: Annotated[str, Field(description="filter by zone, city or country, e.g. 'tokyo'; empty for all")] = "",
        page: OpenPage = 1,
        page_size: OpenPageSize = 20,
    ) -> ZonePage:
        """Well-known time zones with a city each and their current UTC offsets, to find a zone's IANA name."""
        q = query.strip().lower()
        zones = [z for z in kb.load("timezones") if q in f"{z['zone']} {z['city']} {z['country']}".lower()]
        chunk, meta = paginate(zones, page, page_size)
        return ZonePage(timezones=[self._zone(z["zone"]) for z in chunk], **meta)

    @tool(read_only=True)
    def convert_time(
        self,
        time: LocalTimeArg,
        from_timezone: Annotated[str, Field(description="IANA zone `time` is in; 'UTC' for UTC")],
        to_timezone: Annotated[str, Field(description="IANA zone to convert into")],
    ) -> Reading:
        """Convert a wall-clock time from one time zone to another (also gives the UTC moment)."""
        moment = parse_local(time, zone_of(from_timezone), "time")
        return reading(moment, to_timezone)

    @tool(read_only=True)
    def time_until(
        self,
        time: Annotated[str, Field(description="a UTC time, YYYY-MM-DDTHH:MM[:SS][Z]")],
    ) -> Duration:
        """How long from now until a UTC time (negative when it has passed); useful for deadlines and tokens."""
        moment = parse_local(time.strip().removesuffix("Z"), ZoneInfo("UTC"), "time")
        seconds = int((moment - self.now).total_seconds())
        return Duration(seconds=seconds, human=human(seconds))

    @tool(read_only=False, idempotent=False)
    def sleep(
        self,
        seconds: Annotated[int, Field(ge=1, le=MAX_SLEEP_SECONDS, description="how long to wait, 1-86400")],
    ) -> Reading:
        """Wait: move the shared clock forward. Tokens may expire and reminders may come due meanwhile."""
        self.session.clock.advance(seconds)
        return reading(self.now, self.state["timezone"])

    @tool(read_only=False)
    def schedule_reminder(
        self,
        text: Annotated[str, Field(min_length=1, max_length=500, description="what to be reminded of")],
        at: Annotated[str, Field(description="local wall-clock time, YYYY-MM-DDTHH:MM, in your time zone")],
    ) -> Reminder:
        """Set a reminder for a local time in your own time zone (see get_timezone); it must be in the future."""
        due = parse_local(at, zone_of(self.state["timezone"]), "at")
        if due <= self.now:
            raise AppError("invalid", f"'{at}' ({self.state['timezone']}) has already passed; pick a later time")
        pending = [r for r in for_reading(self.state["reminders"]).values() if r["status"] == "pending"]
        if len(pending) >= MAX_PENDING_REMINDERS:
            raise AppError("limit", f"you already have {MAX_PENDING_REMINDERS} pending reminders; cancel one first")
        rec = {"id": self.new_id("rem"), "text": text, "due_utc": iso(due), "status": "pending"}
        self.state["reminders"][rec["id"]] = rec
        return self._reminder(rec)

    @tool(read_only=True)
    def list_reminders(
        self,
        status: Annotated[Literal["pending", "due", "dismissed", "all"], Field(description="which reminders")] = "all",
        page: OpenPage = 1,
        page_size: OpenPageSize = 20,
    ) -> ReminderList:
        """Your reminders, soonest first (20 a page by default); 'due' ones have come and wait to be dismissed."""
        found = [self._reminder(r) for r in self.state["reminders"].values()]
        found = sorted((r for r in found if status in ("all", r.status)), key=lambda r: r.due_utc)
        chunk, meta = paginate(found, page, page_size)
        return ReminderList(reminders=chunk, now_utc=iso(self.now), **meta)

    @tool(read_only=False, destructive=True, idempotent=True)
    def cancel_reminder(self, reminder_id: Annotated[str, Field(description="id from schedule_reminder")]) -> Reminder:
        """Delete a reminder that has not fired yet."""
        rec = self._get(reminder_id)
        if self._reminder(rec).status != "pending":
            raise AppError("conflict", f"reminder '{reminder_id}' has already fired; use dismiss_reminder instead")
        del self.state["reminders"][reminder_id]
        return Reminder(reminder_id=rec["id"], text=rec["text"], due_utc=rec["due_utc"], status="dismissed")

    @tool(read_only=False, idempotent=True)
    def dismiss_reminder(self, reminder_id: Annotated[str, Field(description="id of a due reminder")]) -> Reminder:
        """Acknowledge a reminder whose time has come."""
        rec = self._get(reminder_id)
        if self._reminder(rec).status == "pending":
            raise AppError("precondition", f"reminder '{reminder_id}' is not due until {rec['due_utc']}; "
                           "cancel_reminder removes it early")
        rec["status"] = "dismissed"
        return self._reminder(rec)
