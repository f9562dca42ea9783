"""The mail app's answer models (pydantic: every tool has an output schema)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from cworld.sandbox.apps._shared.records import Paged

Folder = Literal["inbox", "sent", "drafts", "archive", "trash"]


class Contact(BaseModel):
    contact_id: str
    name: str
    email: str
    company: str
    title: str
    phone: str
    favorite: bool
    notes: str


class ContactPage(Paged):
    contacts: list[Contact]


class Address(BaseModel):
    name: str
    email: str


class MessageSummary(BaseModel):
    message_id: str
    thread_id: str
    folder: Folder
    sender: Address
    subject: str
    date: str = Field(description="UTC time the message was sent or saved")
    read: bool
    starred: bool
    replied: bool
    snippet: str = Field(description="the first words of the body")


class Message(MessageSummary):
    to: list[Address]
    cc: list[Address]
    body: str


class MessagePage(Paged):
    messages: list[MessageSummary]
    unread_in_folder: int = Field(description="unread messages in the folder(s) searched, across all pages")


class Thread(Paged):
    """A conversation's messages, a page of them (the page fields count messages)."""

    thread_id: str
    messages: list[Message] = Field(description="oldest first")


class Changed(BaseModel):
    changed: list[str] = Field(description="ids of the messages that changed")
