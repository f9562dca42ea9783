"""Calendar tools of the datetime server (a mixin): business days, ages, month grids, holidays rules, cron.

All of them take explicit dates: the stateless servers never read the sandbox clock, so the same call
gives the same answer in every session.
"""

from __future__ import annotations

import calendar
from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.dates.calendars import (
    MAX_SPAN_DAYS,
    add_months,
    as_result,
    birthday_in,
    days_off,
    orthodox_easter,
    shift_days,
    western_easter,
)
from cworld.sandbox.stateless.dates.cron import parse_cron
from cworld.sandbox.stateless.dates.models import (
    WEEKDAYS,
    Age,
    Count,
    CronRuns,
    DateList,
    DateResult,
    DateText,
    Holidays,
    Month,
    MonthGrid,
    Weekday,
    Weekend,
    Year,
)
from cworld.sandbox.stateless.dates.parsing import parse_date, parse_datetime
from cworld.sandbox.stateless.shared import invalid, rejecting


class CalendarTools:
    @tool(read_only=True)
    def business_days_between(
        self,
        start: DateText,
        end: DateText,
        holidays: Holidays = [],  # noqa: B006 - never mutated; a plain default keeps the schema simple
        weekend: Weekend = ["sat", "sun"],  # noqa: B006
    ) -> Count:
        """Working days from start (inclusive) to end (exclusive), skipping weekend days and the given
        holidays; negative when end is before start. Spans up to 100 years."""
        a, b = parse_date(start, "start"), parse_date(end, "end")
        off, weekend_days = days_off(holidays, weekend)
        lo, hi, sign = (a, b, 1) if a <= b else (b, a, -1)
        if (hi - lo).days > MAX_SPAN_DAYS:
            raise invalid("the dates are more than 100 years apart; use a shorter span")
        count = sum(
            1
            for i in range((hi - lo).days)
            if (d := lo + timedelta(days=i)).weekday() not in weekend_days and d not in off
        )
        return Count(days=sign * count)

    @tool(read_only=True)
    def add_business_days(
        self,
        start: DateText,
        days: Annotated[
            int,
            Field(
                description="Working days to add (negative goes back), -10000..10000.", ge=-10_000, le=10_000
            ),
        ],
        holidays: Holidays = [],  # noqa: B006
        weekend: Weekend = ["sat", "sun"],  # noqa: B006
    ) -> DateResult:
        """The date `days` working days after (or before) start, skipping weekends and holidays; 0 returns
        start itself. E.g. a deadline '10 business days from Friday'."""
        d = parse_date(start, "start")
        off, weekend_days = days_off(holidays, weekend)
        if len(weekend_days) == 7:
            raise invalid("every weekday is in `weekend`, so there are no working days; remove some")
        step, remaining = (1 if days > 0 else -1), abs(days)
        while remaining:
            d = shift_days(d, step)
            if d.weekday() not in weekend_days and d not in off:
                remaining -= 1
        return as_result(d)

    @tool(read_only=True)
    def age(
        self,
        birth_date: Annotated[
            str, Field(description="Date of birth, ISO, e.g. '1990-07-15'.", max_length=40)
        ],
        on_date: Annotated[
            str, Field(description="The date to compute the age on, ISO (not today: pass it).", max_length=40)
        ],
    ) -> Age:
        """Exact age on a given date in years, months and days, plus the next birthday."""
        born, on = parse_date(birth_date, "birth_date"), parse_date(on_date, "on_date")
        if on < born:
            raise invalid("on_date is before birth_date; pass a later on_date")
        months = (on.year - born.year) * 12 + on.month - born.month - (on.day < born.day)
        anchor = add_months(born, months)
        upcoming = birthday_in(born, on.year)
        if upcoming <= on:
            if on.year == 9999:
                raise invalid("the next birthday would fall after year 9999; pass an earlier on_date")
            upcoming = birthday_in(born, on.year + 1)
        return Age(
            years=months // 12,
            months=months % 12,
            days=(on - anchor).days,
            total_days=(on - born).days,
            next_birthday=upcoming.isoformat(),
            days_until_next_birthday=(upcoming - on).days,
        )

    @tool(read_only=True)
    def month_calendar(
        self,
        year: Year,
        month: Month,
        first_weekday: Annotated[
            Literal["mon", "sun"], Field(description="Which day starts the week.")
        ] = "mon",
    ) -> MonthGrid:
        """A month as a grid of weeks (like a wall calendar) and as text."""
        cal = calendar.TextCalendar(calendar.MONDAY if first_weekday == "mon" else calendar.SUNDAY)
        return MonthGrid(weeks=cal.monthdayscalendar(year, month), text=cal.formatmonth(year, month).rstrip())

    @tool(read_only=True)
    def nth_weekday_of_month(
        self,
        year: Year,
        month: Month,
        weekday: Annotated[Weekday, Field(description="Which weekday.")],
        n: Annotated[int, Field(description="1 = first ... 5 = fifth; -1 = last.", ge=-1, le=5)],
    ) -> DateResult:
        """The n-th given weekday of a month, e.g. the 4th Thursday of November, or the last Monday of May."""
        if n == 0:
            raise invalid("n must be 1..5 (first to fifth) or -1 (last), not 0")
        wd = WEEKDAYS.index(weekday)
        days = [
            d
            for d in range(1, calendar.monthrange(year, month)[1] + 1)
            if date(year, month, d).weekday() == wd
        ]
        if n > len(days):
            raise invalid(
                f"{calendar.month_name[month]} {year} has only {len(days)} {weekday} days; pick n <= "
                f"{len(days)} or -1 for the last"
            )
        return as_result(date(year, month, days[n - 1] if n > 0 else days[-1]))

    @tool(read_only=True)
    def easter_date(
        self,
        year: Annotated[int, Field(description="Year, 1583..9999 (Gregorian calendar).", ge=1583, le=9999)],
        church: Annotated[
            Literal["western", "orthodox"],
            Field(description="Western (Catholic/Protestant) or Orthodox Easter."),
        ] = "western",
    ) -> DateResult:
        """Easter Sunday of a year (Gregorian date), from which many holidays follow (Good Friday = -2 days,
        Easter Monday = +1, Ascension = +39, Pentecost = +49)."""
        return as_result(western_easter(year) if church == "western" else orthodox_easter(year))

    @tool(read_only=True)
    def list_dates(
        self,
        start: DateText,
        end: DateText,
        step_days: Annotated[int, Field(description="Days between listed dates, 1..366.", ge=1, le=366)] = 1,
        weekdays: Annotated[
            list[Weekday], Field(description="Keep only these weekdays (empty keeps all).", max_length=7)
        ] = [],  # noqa: B006
    ) -> DateList:
        """Dates from start to end inclusive every step_days, optionally only some weekdays, e.g. every
        Monday in March. At most 1,000 dates."""
        a, b = parse_date(start, "start"), parse_date(end, "end")
        if b < a:
            raise invalid("end is before start; pass start <= end")
        keep = {WEEKDAYS.index(w) for w in weekdays} or set(range(7))
        out: list[str] = []
        for i in range(0, (b - a).days + 1, step_days):
            d = a + timedelta(days=i)
            if d.weekday() in keep:
                out.append(d.isoformat())
                if len(out) > 1000:
                    raise invalid("that is more than 1000 dates; narrow the range or raise step_days")
        return DateList(dates=out, count=len(out))

    @tool(read_only=True)
    def iso_week_to_date(
        self,
        iso_year: Annotated[int, Field(description="ISO week-numbering year, 1..9999.", ge=1, le=9999)],
        week: Annotated[int, Field(description="ISO week number, 1..53.", ge=1, le=53)],
        weekday: Annotated[Weekday, Field(description="Day of that week.")] = "mon",
    ) -> DateResult:
        """The calendar date of an ISO week and weekday (weeks start Monday; week 1 contains January 4)."""
        with rejecting(ValueError, f"ISO year {iso_year} has no week {week} (only long years have week 53)"):
            return as_result(date.fromisocalendar(iso_year, week, WEEKDAYS.index(weekday) + 1))

    @tool(read_only=True)
    def cron_next_runs(
        self,
        expression: Annotated[
            str,
            Field(
                description="Five-field cron: minute hour day-of-month month "
                "day-of-week, e.g. '30 9 * * mon-fri', '*/15 * * * *', or @daily, "
                "@hourly, @weekly, @monthly, @yearly.",
                min_length=1,
                max_length=200,
            ),
        ],
        after: Annotated[
            str,
            Field(
                description="Start looking strictly after this ISO datetime; its offset or "
                "lack of one is kept, e.g. '2026-03-05T14:10:00'.",
                max_length=40,
            ),
        ],
        count: Annotated[int, Field(description="How many run times to list, 1..50.", ge=1, le=50)] = 5,
    ) -> CronRuns:
        """The next times a cron schedule fires after a given moment (looks up to 5 years ahead)."""
        schedule = parse_cron(expression)
        start = parse_datetime(after, "after")
        runs: list[str] = []
        for moment in schedule.runs_after(start):
            runs.append(moment.isoformat())
            if len(runs) == count:
                break
        if not runs:
            raise invalid(
                f"{expression!r} never fires in the 5 years after {after} (e.g. Feb 30); check the days"
            )
        return CronRuns(runs=runs)
