"""The calendar app's answer models (kept apart so `calendar.py` reads as its tools)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from cworld.sandbox.apps._shared.people import PersonBase
from cworld.sandbox.apps._shared.records import Paged


class Person(PersonBase):
    title: str
    company: str
    timezone: str = Field(description="the person's IANA time zone (their working hours are 09:00-17:00 there)")


class PersonPage(Paged):
    people: list[Person]


class Attendee(BaseModel):
    person_id: str
    name: str
    response: Literal["accepted", "declined", "tentative", "needs_action"]


class Event(BaseModel):
    event_id: str
    calendar_id: str
    title: str
    start: str = Field(description="UTC start")
    end: str = Field(description="UTC end")
    organizer: str = Field(description="person id of the organizer ('company' for company-wide entries)")
    attendees: list[Attendee]
    room_id: str | None
    description: str
    status: Literal["confirmed", "cancelled"]
    warnings: list[str] = Field(default_factory=list, description="e.g. attendees who are busy then")


class EventPage(Paged):
    events: list[Event]


class Invitations(Paged):
    events: list[Event] = Field(description="invitations waiting for your answer, soonest first")


class CalendarInfo(BaseModel):
    calendar_id: str
    name: str
    writable: bool


class CalendarList(Paged):
    calendars: list[CalendarInfo]


class Room(BaseModel):
    room_id: str
    name: str
    capacity: int
    floor: int
    video: bool
    available: bool | None = Field(description="free for the asked time (null when no time was given)")


class RoomList(Paged):
    rooms: list[Room]


class Busy(BaseModel):
    person_id: str
    working_hours_utc: list[str] = Field(description="[start, end] of their working day in UTC; empty on weekends")
    busy: list[list[str]] = Field(description="[start, end] UTC intervals when they are busy that day")


class FreeBusy(BaseModel):
    date: str
    people: list[Busy]


class Slots(BaseModel):
    slots: list[list[str]] = Field(description="[start, end] UTC slots when everyone (you included) is free")
