"""The chat app's answer models (kept apart so `chat.py` reads as its tools)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from cworld.sandbox.apps._shared.records import Paged


class User(BaseModel):
    user_id: str
    name: str
    handle: str = Field(description="login name, without the @")
    title: str
    timezone: str
    status: str


class UserPage(Paged):
    users: list[User]


class Session(BaseModel):
    token: str = Field(description="pass this to tools that change anything")
    expires_at: str = Field(description="UTC time the token stops working; log in again after it")
    user_id: str


class Channel(BaseModel):
    channel_id: str
    name: str
    topic: str
    private: bool
    archived: bool = Field(description="archived channels are read-only")
    member_count: int
    is_member: bool


class ChannelPage(Paged):
    channels: list[Channel]


class ChannelDetail(Channel):
    members: list[str] = Field(description="user ids of the members")


class ChatMessage(BaseModel):
    message_id: str
    conversation_id: str = Field(description="channel id (C_...) or direct-message id (D_...)")
    author_id: str
    author_name: str
    text: str
    ts: str = Field(description="UTC time posted")
    edited: bool
    thread_parent: str | None = Field(description="message id this replies to in a thread, if any")
    reply_count: int
    reactions: dict[str, int] = Field(description="emoji name -> how many reacted")


class MessagePage(Paged):
    messages: list[ChatMessage] = Field(description="newest first")


class Thread(Paged):
    """A thread's first message and a page of its replies (the page fields count replies)."""

    root: ChatMessage
    replies: list[ChatMessage] = Field(description="oldest first")


class Unread(BaseModel):
    conversation_id: str
    name: str = Field(description="#channel or the other person's name")
    unread: int
    oldest_unread_ts: str


class UnreadList(Paged):
    conversations: list[Unread]


class Status(BaseModel):
    user_id: str
    status: str


class Posted(BaseModel):
    message: ChatMessage
