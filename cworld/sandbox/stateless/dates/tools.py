"""Moment tools of the datetime server (a mixin): parse, format, add, compare, time zones, Unix time and
durations. Every moment is an argument: these tools never read the sandbox clock."""

from __future__ import annotations

import calendar
from datetime import UTC, datetime, timedelta
from typing import Annotated

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.dates.arithmetic import (
    breakdown,
    describe,
    duration_info,
    in_zone,
    plural,
    plus_months,
)
from cworld.sandbox.stateless.dates.models import (
    EPOCH_MAX,
    EPOCH_MIN,
    DateInfo,
    DateText,
    DateTimeText,
    Difference,
    DurationInfo,
    IsoDuration,
    ParsedDateTime,
    TextValue,
    UnixTime,
    ZonedDateTime,
    ZoneList,
    ZoneName,
    ZonePrefix,
)
from cworld.sandbox.stateless.dates.parsing import (
    parse_date,
    parse_datetime,
    parse_duration,
    parse_loose,
    zone,
    zone_names,
)
from cworld.sandbox.stateless.shared import invalid, rejecting


class DateTimeTools:
    @tool(read_only=True)
    def parse_datetime(
        self,
        text: Annotated[
            str,
            Field(
                description="A date/time as written: ISO 8601, 'March 5, 2026 2:30 PM', "
                "'05/03/2026', '5 Mar 2026', 'Thu, 05 Mar 2026 14:30:00 +0000'.",
                min_length=1,
                max_length=100,
            ),
        ],
        day_first: Annotated[
            bool, Field(description="Read '05/03/2026' as 5 March (European) rather than May 3 (US).")
        ] = False,
    ) -> ParsedDateTime:
        """Read a date/time written in a common format and return it in ISO 8601 with its parts."""
        return describe(parse_loose(text, day_first))

    @tool(read_only=True)
    def format_datetime(
        self,
        moment: DateTimeText,
        pattern: Annotated[
            str,
            Field(
                description="strftime pattern, e.g. '%A %d %B %Y, %H:%M' -> 'Thursday 05 "
                "March 2026, 14:30'. English names.",
                min_length=1,
                max_length=200,
            ),
        ],
    ) -> TextValue:
        """Write a date/time in a custom format with strftime directives (%Y year, %m month, %d day, %H:%M
        time, %A weekday, %B month name, %j day of year, %V ISO week, %z offset)."""
        value = parse_datetime(moment, "moment")
        try:
            return TextValue(text=value.strftime(pattern))
        except (ValueError, UnicodeError) as err:
            raise invalid(
                f"cannot format with {pattern!r} ({err}); use strftime directives like %Y-%m-%d"
            ) from None

    @tool(read_only=True)
    def add_duration(
        self,
        moment: DateTimeText,
        years: Annotated[int, Field(description="Years to add (negative subtracts).", ge=-9999, le=9999)] = 0,
        months: Annotated[
            int,
            Field(
                description="Months to add; the day is clamped to the month's end "
                "(Jan 31 + 1 month = Feb 28/29).",
                ge=-120_000,
                le=120_000,
            ),
        ] = 0,
        weeks: Annotated[int, Field(description="Weeks to add.", ge=-530_000, le=530_000)] = 0,
        days: Annotated[int, Field(description="Days to add.", ge=-3_700_000, le=3_700_000)] = 0,
        hours: Annotated[int, Field(description="Hours to add.", ge=-(10**8), le=10**8)] = 0,
        minutes: Annotated[int, Field(description="Minutes to add.", ge=-(10**10), le=10**10)] = 0,
        seconds: Annotated[float, Field(description="Seconds to add.", ge=-1e12, le=1e12)] = 0,
    ) -> ParsedDateTime:
        """Add (or subtract) a calendar-aware duration: years and months first (clamping the day), then
        weeks, days and time (wall-clock, in the moment's own offset)."""
        value = plus_months(parse_datetime(moment, "moment"), years * 12 + months)
        with rejecting(OverflowError, "the result falls outside years 1-9999; use a smaller duration"):
            result = value + timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds)
        return describe(result)

    @tool(read_only=True)
    def datetime_difference(self, start: DateTimeText, end: DateTimeText) -> Difference:
        """The time from start to end: exact seconds and days, and a calendar breakdown in years, months,
        days, hours, minutes and seconds. Both must have an offset, or neither."""
        a, b = parse_datetime(start, "start"), parse_datetime(end, "end")
        if (a.tzinfo is None) != (b.tzinfo is None):
            raise invalid("one moment has a time zone offset and the other does not; give both or neither")
        delta = b - a
        lo, hi = (a, b) if a <= b else (b, a)
        if lo.tzinfo is not None:
            lo, hi = lo.astimezone(UTC), hi.astimezone(UTC)
        years, months, days, rest = breakdown(lo, hi)
        hours, rem = divmod(rest.seconds, 3600)
        secs = rem % 60 + rest.microseconds / 1e6
        words = [
            plural(v, w)
            for v, w in (
                (years, "year"),
                (months, "month"),
                (days, "day"),
                (hours, "hour"),
                (rem // 60, "minute"),
            )
            if v
        ]
        text = ", ".join(words) or "less than a minute"
        return Difference(
            total_seconds=delta.total_seconds(),
            total_days=round(delta.total_seconds() / 86400, 6),
            years=years,
            months=months,
            days=days,
            hours=hours,
            minutes=rem // 60,
            seconds=secs,
            text=("minus " if delta < timedelta(0) else "") + text,
        )

    @tool(read_only=True)
    def date_info(self, day: DateText) -> DateInfo:
        """Facts about a date: weekday, ISO week and year, day of year, quarter, month length, leap year."""
        d = parse_date(day, "day")
        iso = d.isocalendar()
        return DateInfo(
            date=d.isoformat(),
            weekday=calendar.day_name[d.weekday()],
            iso_weekday=iso.weekday,
            iso_year=iso.year,
            iso_week=iso.week,
            day_of_year=d.timetuple().tm_yday,
            quarter=(d.month - 1) // 3 + 1,
            days_in_month=calendar.monthrange(d.year, d.month)[1],
            is_leap_year=calendar.isleap(d.year),
            is_weekend=d.weekday() >= 5,
        )

    @tool(read_only=True)
    def convert_timezone(
        self,
        moment: DateTimeText,
        to_zone: ZoneName,
        from_zone: Annotated[
            str | None,
            Field(
                description="Zone of `moment` when it has no offset (e.g. "
                "'Asia/Tokyo'); ignored when it has one. Default UTC.",
                max_length=64,
            ),
        ] = None,
    ) -> ZonedDateTime:
        """The same instant in another time zone, with its offset, abbreviation and daylight-saving flag."""
        value = parse_datetime(moment, "moment")
        if value.tzinfo is None:
            value = value.replace(tzinfo=zone(from_zone) if from_zone else UTC)
        return in_zone(value, to_zone, "the converted moment falls outside years 1-9999")

    @tool(read_only=True)
    def timezone_info(
        self,
        zone_name: ZoneName,
        at: Annotated[
            str,
            Field(
                description="The moment to look at, ISO 8601 (offsets change with DST); a "
                "moment without offset is read as UTC.",
                min_length=8,
                max_length=40,
            ),
        ],
    ) -> ZonedDateTime:
        """A time zone's UTC offset, abbreviation and daylight-saving status at a given moment."""
        value = parse_datetime(at, "at")
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return in_zone(value, zone_name, "the moment falls outside years 1-9999 in that zone")

    @tool(read_only=True)
    def list_timezones(self, prefix: ZonePrefix = "") -> ZoneList:
        """IANA time zone names known to this server, alphabetically."""
        zones = [z for z in zone_names() if z.lower().startswith(prefix.lower())]
        return ZoneList(zones=zones, count=len(zones))

    @tool(read_only=True)
    def to_unix_timestamp(
        self,
        moment: DateTimeText,
        assume_zone: Annotated[
            str, Field(description="Zone for a moment without offset.", max_length=64)
        ] = "UTC",
    ) -> UnixTime:
        """Seconds (and milliseconds) since the Unix epoch 1970-01-01T00:00:00Z."""
        value = parse_datetime(moment, "moment")
        if value.tzinfo is None:
            value = value.replace(tzinfo=zone(assume_zone))
        seconds = (value - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds()
        return UnixTime(seconds=seconds, milliseconds=round(seconds * 1000))

    @tool(read_only=True)
    def from_unix_timestamp(
        self,
        seconds: Annotated[
            float,
            Field(
                description="Seconds since 1970-01-01T00:00:00Z (divide milliseconds by 1000).",
                ge=EPOCH_MIN,
                le=EPOCH_MAX,
            ),
        ],
        zone_name: Annotated[str, Field(description="Zone to express the moment in.", max_length=64)] = "UTC",
    ) -> ZonedDateTime:
        """The moment a Unix timestamp stands for, in the given time zone."""
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)
        return in_zone(moment, zone_name, "that moment falls outside years 1-9999 in that zone")

    @tool(read_only=True)
    def parse_duration(self, duration: IsoDuration) -> DurationInfo:
        """Total seconds of an ISO 8601 duration, and the same duration written out."""
        total = parse_duration(duration)
        if abs(total) > 1e12:
            raise invalid("that duration is longer than 1e12 seconds (~31,000 years); use a shorter one")
        return duration_info(total)

    @tool(read_only=True)
    def format_duration(
        self,
        seconds: Annotated[float, Field(description="A length of time in seconds.", ge=-1e12, le=1e12)],
    ) -> DurationInfo:
        """Write a number of seconds as days/hours/minutes/seconds ('1d 2h 3m 4s') and as ISO 8601."""
        return duration_info(seconds)
