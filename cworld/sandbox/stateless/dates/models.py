"""Argument types and result models of the datetime server (pydantic: they are the tools' schemas)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

WEEKDAYS: tuple[str, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

#: Unix seconds of 0001-01-01 and 9999-12-31T23:59:59 UTC: the range Python datetimes cover.
EPOCH_MIN, EPOCH_MAX = -62_135_596_800, 253_402_300_799


Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

DateText = Annotated[str, Field(description="An ISO date, e.g. '2026-03-05'.", min_length=8, max_length=40)]

Holidays = Annotated[
    list[str],
    Field(description="ISO dates that are not working days (public holidays), at most 500.", max_length=500),
]

Weekend = Annotated[list[Weekday], Field(description="Days that are never working days.", max_length=7)]

DateTimeText = Annotated[
    str,
    Field(
        description="An ISO 8601 date or datetime, e.g. '2026-03-05T14:30:00' or "
        "'2026-03-05T14:30:00+01:00'.",
        min_length=8,
        max_length=40,
    ),
]

ZoneName = Annotated[
    str,
    Field(
        description="IANA time zone like 'Europe/Paris' or 'America/New_York', 'UTC', "
        "or a fixed offset like '+05:30'.",
        min_length=1,
        max_length=64,
    ),
]

Year = Annotated[int, Field(description="Year, 1..9999.", ge=1, le=9999)]

Month = Annotated[int, Field(description="Month, 1..12.", ge=1, le=12)]


ZonePrefix = Annotated[
    str,
    Field(
        description="Keep zones starting with this, e.g. 'Europe/' or 'America/'; "
        "empty lists all (about 600).",
        max_length=64,
    ),
]
IsoDuration = Annotated[
    str,
    Field(
        description="ISO 8601 duration, e.g. 'PT1H30M', 'P3D', 'P1Y2M'. Years and "
        "months count as 365.25 and 30.4375 days.",
        min_length=2,
        max_length=60,
    ),
]


class ParsedDateTime(BaseModel):
    iso: str = Field(description="The moment in ISO 8601.")
    date: str
    time: str
    weekday: str
    has_timezone: bool = Field(description="Whether the input carried an offset or zone.")
    utc_offset: str | None = Field(description="'+HH:MM' when known.")


class DateInfo(BaseModel):
    date: str
    weekday: str
    iso_weekday: int = Field(description="1 = Monday ... 7 = Sunday.")
    iso_year: int = Field(
        description="ISO week-numbering year (differs from the calendar year near New Year)."
    )
    iso_week: int
    day_of_year: int
    quarter: int
    days_in_month: int
    is_leap_year: bool
    is_weekend: bool = Field(description="Saturday or Sunday.")


class Difference(BaseModel):
    total_seconds: float = Field(description="end - start in seconds (negative when end is earlier).")
    total_days: float
    years: int = Field(description="Calendar breakdown of |end - start|: whole years,")
    months: int = Field(description="then whole months,")
    days: int = Field(description="then days,")
    hours: int
    minutes: int
    seconds: float
    text: str = Field(description="Human summary, e.g. '1 year, 2 months, 3 days'.")


class ZonedDateTime(BaseModel):
    iso: str = Field(description="The moment in the target zone, ISO 8601 with offset.")
    utc_offset: str = Field(description="Offset from UTC, '+HH:MM'.")
    abbreviation: str | None = Field(
        description="Zone abbreviation such as CET or EDT, when the zone has one."
    )
    is_dst: bool = Field(description="Whether daylight saving time is in effect.")


class UnixTime(BaseModel):
    seconds: float = Field(description="Seconds since 1970-01-01T00:00:00Z.")
    milliseconds: int


class DurationInfo(BaseModel):
    total_seconds: float
    text: str = Field(description="Like '2d 3h 4m 5s'.")
    iso: str = Field(description="ISO 8601 duration, days and smaller, e.g. 'P2DT3H4M5S'.")


class TextValue(BaseModel):
    text: str


class ZoneList(BaseModel):
    zones: list[str]
    count: int


class DateResult(BaseModel):
    date: str = Field(description="ISO date, YYYY-MM-DD.")
    weekday: str = Field(description="English weekday name.")


class Count(BaseModel):
    days: int


class Age(BaseModel):
    years: int
    months: int = Field(description="Whole months after the last birthday.")
    days: int = Field(description="Days after those months.")
    total_days: int
    next_birthday: str = Field(description="ISO date of the next birthday after on_date (Feb 29 -> Feb 28).")
    days_until_next_birthday: int


class MonthGrid(BaseModel):
    weeks: list[list[int]] = Field(description="One row per week; 0 marks days outside the month.")
    text: str = Field(description="The month printed as a small text calendar.")


class DateList(BaseModel):
    dates: list[str]
    count: int


class CronRuns(BaseModel):
    runs: list[str] = Field(description="The next run times, ISO 8601, in the zone of `after`.")
