"""The chat app's tools: identity, channels and messages."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import Field

from cworld.sandbox.apps._shared.auth import issue_token, require_token
from cworld.sandbox.apps._shared.records import OpenPage, OpenPageSize, lookup, name_search, paginate
from cworld.sandbox.apps._shared.values import iso, norm
from cworld.sandbox.apps.chat.models import (
    Channel,
    ChannelDetail,
    ChannelPage,
    ChatMessage,
    MessagePage,
    Posted,
    Session,
    Status,
    Thread,
    Unread,
    UnreadList,
    User,
    UserPage,
)
from cworld.sandbox.framework import AppError, SandboxApp, tool
from cworld.sandbox.framework.journal import for_reading

TOKEN_MINUTES = 10
CHANNEL_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
EMOJI = re.compile(r"^[a-z0-9_+-]{1,32}$")

Token = Annotated[str, Field(description="session token from login")]
ChannelId = Annotated[str, Field(description="channel id, e.g. C_0003 (from list_channels), not the #name")]
MessageId = Annotated[str, Field(description="message id, e.g. chat_0012")]
Text = Annotated[str, Field(min_length=1, max_length=4000, description="message text")]


def _members(dm: dict[str, Any]) -> list[tuple[str, ...]]:
    """A direct-message conversation's pair of people, as a tuple (the index `_dm` reads)."""
    return [tuple(dm["members"])] if type(dm["members"]) is list else []


def _seen_by(channel: dict[str, Any]) -> list[tuple[str, bool | None]]:
    """Who sees a channel ("*" for a public one, else each member) with its archived flag, or None for
    either: the index the channel list reads."""
    viewers = channel["members"] if channel["private"] else ["*"]
    return [(viewer, archived) for viewer in viewers for archived in (channel["archived"], None)]


#: The fields a user search reads.
_USER_TEXT = ("name", "handle", "title")


class ChatTools(SandboxApp):
    """Tools of the chat app (a mixin of `ChatApp`)."""

    # --- helpers -------------------------------------------------------------------------
    def _auth(self, token: str) -> str:
        require_token(self, self.state["auth"], token, "login")
        return self.state["me"]

    def _channel_rec(self, channel_id: str) -> dict[str, Any]:
        rec = self.state["channels"].get(channel_id)
        if rec is None:
            hint = " (that is a name; channel ids look like C_0003)" if not channel_id.startswith("C_") else ""
            raise AppError("not_found", f"no channel '{channel_id}'{hint}; list_channels gives channel ids")
        return rec

    def _user_rec(self, user_id: str) -> dict[str, Any]:
        return lookup(self.state["users"], user_id,
                      f"no user '{user_id}'; search_users gives user ids from names")

    def _message_rec(self, message_id: str) -> dict[str, Any]:
        rec = self.state["messages"].get(message_id)
        if rec is None or rec["deleted"]:
            raise AppError("not_found", f"no message '{message_id}'; read_channel gives message ids")
        return rec

    def _can_read(self, conv: str) -> bool:
        me = self.state["me"]
        if conv in self.state["dms"]:
            return me in self.state["dms"][conv]["members"]
        ch = self.state["channels"][conv]
        return not ch["private"] or me in ch["members"]

    def _readable(self, channel_id: str) -> dict[str, Any]:
        rec = self._channel_rec(channel_id)
        if not self._can_read(channel_id):
            raise AppError("permission_denied", f"#{rec['name']} is private and you are not a member")
        return rec

    def _message(self, rec: dict[str, Any]) -> ChatMessage:
        replies = self.count("messages", thread_parent=rec["id"], deleted=False)
        return ChatMessage(message_id=rec["id"], conversation_id=rec["conversation_id"], author_id=rec["author"],
                           author_name=self.state["users"][rec["author"]]["name"], text=rec["text"], ts=rec["ts"],
                           edited=rec["edited"], thread_parent=rec["thread_parent"], reply_count=replies,
                           reactions={e: len(u) for e, u in sorted(rec["reactions"].items()) if u})

    def _channel(self, rec: dict[str, Any]) -> Channel:
        return Channel(channel_id=rec["id"], name=rec["name"], topic=rec["topic"], private=rec["private"],
                       archived=rec["archived"], member_count=len(rec["members"]),
                       is_member=self.state["me"] in rec["members"])

    def _page(self, recs: list[dict[str, Any]], page: int, page_size: int) -> MessagePage:
        live = sorted((m for m in recs if not m["deleted"]), key=lambda m: (m["ts"], m["id"]), reverse=True)
        return self._page_of(live, page, page_size)

    def _page_of(self, newest_first: Sequence[dict[str, Any]], page: int, page_size: int) -> MessagePage:
        chunk, meta = paginate(newest_first, page, page_size)
        return MessagePage(messages=[self._message(m) for m in chunk], **meta)

    def _conversation(self, conversation_id: str) -> Sequence[dict[str, Any]]:
        """A conversation's messages that are not deleted, newest first (from the sorted index)."""
        return self.ordered("messages", ("ts", "id"), reverse=True, conversation_id=conversation_id, deleted=False)

    def _post(self, conv: str, text: str, parent: str | None = None) -> dict[str, Any]:
        rec = {"id": self.new_id("chat"), "conversation_id": conv, "author": self.state["me"], "text": text,
               "ts": iso(self.now), "edited": False, "thread_parent": parent, "reactions": {}, "deleted": False}
        self.state["messages"][rec["id"]] = rec
        self.state["last_read"][conv] = rec["ts"]
        return rec

    def _own(self, token: str, message_id: str) -> dict[str, Any]:
        me = self._auth(token)
        rec = self._message_rec(message_id)
        if rec["author"] != me:
            raise AppError("permission_denied", "you can only change your own messages")
        return rec

    # --- identity ------------------------------------------------------------------------
    @tool(read_only=True)
    def get_my_profile(self) -> User:
        """Who you are in this workspace: your user id and the handle to log in with."""
        return User(user_id=self.state["me"], **self._user_fields(self.state["users"][self.state["me"]]))

    @staticmethod
    def _user_fields(rec: dict[str, Any]) -> dict[str, Any]:
        return {k: rec[k] for k in ("name", "handle", "title", "timezone", "status")}

    @tool(read_only=False)
    def login(self, handle: Annotated[str, Field(description="your own handle from get_my_profile, without @")]) -> Session:
        """Start a session; gives the token every changing tool needs (valid 10 minutes, then log in again)."""
        me = self.state["users"][self.state["me"]]
        if handle.lstrip("@") != me["handle"]:
            raise AppError("auth", "you can only log in as yourself; get_my_profile shows your handle")
        tok = issue_token(self, self.state["auth"], "xoxs", TOKEN_MINUTES)
        return Session(token=tok["value"], expires_at=tok["expires_at"], user_id=me["id"])

    @tool(read_only=True)
    def search_users(
        self,
        query: Annotated[str, Field(description="words from a name, handle or title; empty lists everyone")] = "",
        page: OpenPage = 1,
        page_size: OpenPageSize = 10,
    ) -> UserPage:
        """Find people to get their user ids (several people may share a first name: check titles)."""
        chunk, meta = name_search(self, "users", query, _USER_TEXT, page, page_size)
        return UserPage(users=[User(user_id=u["id"], **self._user_fields(u)) for u in chunk], **meta)

    @tool(read_only=False, idempotent=True)
    def set_status(self, token: Token, status: Annotated[str, Field(max_length=100, description="e.g. 'in a meeting'")]) -> Status:
        """Set your status line ('' clears it)."""
        me = self._auth(token)
        self.state["users"][me]["status"] = status
        return Status(user_id=me, status=status)

    # --- channels ------------------------------------------------------------------------
    @tool(read_only=True)
    def list_channels(
        self,
        query: Annotated[str, Field(description="filter by words in the name or topic")] = "",
        include_archived: Annotated[bool, Field(description="also list archived channels")] = False,
        page: OpenPage = 1,
        page_size: OpenPageSize = 20,
    ) -> ChannelPage:
        """Channels you can see (public ones and private ones you belong to), by name."""
        if not norm(query).split():  # every channel you can see, by name (a public one has no viewers listed)
            archived = None if include_archived else False
            seen = [("*", archived), (self.state["me"], archived)]
            by_name = self.ordered("channels", ("name",), having=(_seen_by, seen))
            chunk, meta = paginate(by_name, page, page_size)
            return ChannelPage(channels=[self._channel(c) for c in chunk], **meta)
        found = [c for c in self.matched("channels", query, ("name", "topic")) if self._can_read(c["id"])
                 and (include_archived or not c["archived"])]
        chunk, meta = paginate(sorted(found, key=lambda c: c["name"]), page, page_size)
        return ChannelPage(channels=[self._channel(c) for c in chunk], **meta)

    @tool(read_only=True)
    def get_channel(self, channel_id: ChannelId) -> ChannelDetail:
        """A channel's topic, flags and member ids."""
        rec = self._readable(channel_id)
        return ChannelDetail(**self._channel(rec).model_dump(), members=list(rec["members"]))

    @tool(read_only=False, idempotent=True)
    def join_channel(self, token: Token, channel_id: ChannelId) -> Channel:
        """Become a member of a public channel (needed before posting there)."""
        me = self._auth(token)
        rec = self._channel_rec(channel_id)
        if rec["private"] and me not in rec["members"]:
            raise AppError("permission_denied", f"#{rec['name']} is private; a member has to add you")
        if rec["archived"]:
            raise AppError("conflict", f"#{rec['name']} is archived; look for the live channel with list_channels")
        if me not in rec["members"]:
            rec["members"] = sorted([*rec["members"], me])
        return self._channel(rec)

    @tool(read_only=False, idempotent=True)
    def leave_channel(self, token: Token, channel_id: ChannelId) -> Channel:
        """Stop being a member of a channel."""
        me = self._auth(token)
        rec = self._channel_rec(channel_id)
        if me not in rec["members"]:
            raise AppError("conflict", f"you are not a member of #{rec['name']}")
        if rec["name"] == "general":
            raise AppError("permission_denied", "everyone stays in #general")
        rec["members"] = [m for m in rec["members"] if m != me]
        return self._channel(rec)

    @tool(read_only=False)
    def create_channel(
        self,
        token: Token,
        name: Annotated[str, Field(description="lowercase letters, digits and hyphens, up to 40 characters")],
        topic: Annotated[str, Field(max_length=250, description="what the channel is for")] = "",
        private: Annotated[bool, Field(description="invite-only channel")] = False,
        member_ids: Annotated[list[str], Field(max_length=50, description="user ids to add besides you")] = [],  # noqa: B006
    ) -> ChannelDetail:
        """Create a channel, with you and the given users as members. Names are unique (archived ones too)."""
        me = self._auth(token)
        name = name.lstrip("#")
        if not CHANNEL_NAME.match(name):
            raise AppError("invalid", f"'{name}' is not a channel name: use lowercase letters, digits and hyphens")
        clash = next((c for c in for_reading(self.state["channels"]).values() if c["name"] == name), None)
        if clash is not None:
            state = "archived" if clash["archived"] else "live"
            raise AppError("conflict", f"#{name} already exists ({clash['id']}, {state}); pick another name")
        members = sorted({me, *(self._user_rec(u)["id"] for u in member_ids)})
        rec = {"id": self.new_id("C"), "name": name, "topic": topic, "private": private, "archived": False,
               "members": members, "created_by": me}
        self.state["channels"][rec["id"]] = rec
        return ChannelDetail(**self._channel(rec).model_dump(), members=members)

    # --- messages ------------------------------------------------------------------------
    @tool(read_only=True)
    def read_channel(self, channel_id: ChannelId, page: OpenPage = 1, page_size: OpenPageSize = 20) -> MessagePage:
        """Messages of a channel, newest first (thread replies included; see thread_parent)."""
        self._readable(channel_id)
        return self._page_of(self._conversation(channel_id), page, page_size)

    @tool(read_only=True)
    def get_thread(self, message_id: MessageId, page: OpenPage = 1, page_size: OpenPageSize = 20) -> Thread:
        """A message's thread: its first message and the replies, oldest first, 20 replies a page by default."""
        rec = self._message_rec(message_id)
        root = self._message_rec(rec["thread_parent"]) if rec["thread_parent"] else rec
        if not self._can_read(root["conversation_id"]):
            raise AppError("permission_denied", "that message is in a conversation you cannot read")
        replies = self.ordered("messages", ("ts", "id"), thread_parent=root["id"], deleted=False)
        chunk, meta = paginate(replies, page, page_size)
        return Thread(root=self._message(root), replies=[self._message(m) for m in chunk], **meta)

    @tool(read_only=True)
    def search_messages(
        self,
        query: Annotated[str, Field(min_length=1, description="words to find in message text")],
        channel_id: Annotated[str | None, Field(description="limit to one channel")] = None,
        page: OpenPage = 1,
        page_size: OpenPageSize = 10,
    ) -> MessagePage:
        """Search messages you can read (all words must match), newest first."""
        if channel_id is not None:
            self._readable(channel_id)
        recs = [m for m in self.matched("messages", query, ("text",)) if self._can_read(m["conversation_id"])
                and (channel_id is None or m["conversation_id"] == channel_id)]
        return self._page(recs, page, page_size)

    @tool(read_only=True)
    def list_unread(self, page: OpenPage = 1, page_size: OpenPageSize = 20) -> UnreadList:
        """Conversations (channels you are in and direct messages) with messages you have not read, by
        conversation id (20 a page by default)."""
        last_read = self.state["last_read"]
        unread = {conv: self._unread(conv, seen) for conv in sorted(last_read) if (seen := last_read[conv]) is not None}
        convs = [conv for conv, (count, _) in unread.items() if count]
        chunk, meta = paginate(convs, page, page_size)
        out = [Unread(conversation_id=conv, name=self._conv_name(conv), unread=unread[conv][0],
                      oldest_unread_ts=unread[conv][1]) for conv in chunk]
        return UnreadList(conversations=out, **meta)

    def _unread(self, conv: str, seen: str) -> tuple[int, str]:
        """How many of a conversation's messages after `seen` you have not read (others', not deleted), and the
        oldest one's time: the conversation's window after `seen` counted less your own in it, off sorted
        indexes (a walk of every message cost 7 ms a call at 10,000)."""
        me, after = self.state["me"], (seen + "\x00", None)  # seen + NUL: the first text above seen
        newest_first = self.ordered("messages", ("ts", "id"), reverse=True, within=after, conversation_id=conv,
                                    deleted=False)
        mine = self.ordered("messages", ("ts", "id"), reverse=True, within=after, author=me, conversation_id=conv,
                            deleted=False)
        count = len(newest_first) - len(mine)
        if not count:
            return 0, ""
        return count, next(m["ts"] for m in reversed(newest_first) if m["author"] != me)

    def _dm(self, pair: list[str]) -> dict[str, Any] | None:
        """The direct messages of two people (their ids sorted), the first in the map's order as a walk finds
        it, from the index of the pairs (a walk of every conversation cost 3 ms at 10,000)."""
        found = self.keys_having("dms", _members, tuple(pair))
        return self.state["dms"][found[0]] if found else None

    def _conv_name(self, conv: str) -> str:
        if conv in self.state["channels"]:
            return "#" + self.state["channels"][conv]["name"]
        other = [u for u in self.state["dms"][conv]["members"] if u != self.state["me"]]
        return self.state["users"][other[0]]["name"] if other else "yourself"

    @tool(read_only=False, idempotent=True)
    def mark_read(self, token: Token, conversation_id: Annotated[str, Field(description="channel or DM id")]) -> Unread:
        """Mark everything in a channel or direct message as read."""
        self._auth(token)
        if conversation_id not in self.state["last_read"]:
            raise AppError("not_found", f"'{conversation_id}' is none of your conversations; list_unread shows them")
        self.state["last_read"][conversation_id] = iso(self.now)
        return Unread(conversation_id=conversation_id, name=self._conv_name(conversation_id), unread=0,
                      oldest_unread_ts="")

    @tool(read_only=False)
    def post_message(
        self,
        token: Token,
        channel_id: ChannelId,
        text: Text,
        thread_id: Annotated[str | None, Field(description="message id to reply to in its thread")] = None,
    ) -> Posted:
        """Post in a channel you are a member of (or reply in a thread there)."""
        me = self._auth(token)
        rec = self._channel_rec(channel_id)
        if rec["archived"]:
            raise AppError("conflict", f"#{rec['name']} is archived and read-only; find the live channel with list_channels")
        if me not in rec["members"]:
            raise AppError("permission_denied", f"you are not a member of #{rec['name']}; join_channel first")
        parent = None
        if thread_id is not None:
            root = self._message_rec(thread_id)
            if root["conversation_id"] != channel_id:
                raise AppError("invalid", f"message {thread_id} is not in #{rec['name']}")
            parent = root["thread_parent"] or root["id"]
        return Posted(message=self._message(self._post(channel_id, text, parent)))

    @tool(read_only=False)
    def send_direct_message(
        self, token: Token, user_id: Annotated[str, Field(description="user id from search_users")], text: Text
    ) -> Posted:
        """Send a private message to one person (opens the conversation if needed)."""
        me = self._auth(token)
        self._user_rec(user_id)
        pair = sorted({me, user_id})
        dm = self._dm(pair)
        if dm is None:
            dm = {"id": self.new_id("D"), "members": pair}
            self.state["dms"][dm["id"]] = dm
        return Posted(message=self._message(self._post(dm["id"], text)))

    @tool(read_only=True)
    def read_direct_messages(
        self, user_id: Annotated[str, Field(description="the other person's user id")], page: OpenPage = 1,
        page_size: OpenPageSize = 20,
    ) -> MessagePage:
        """Your direct-message history with one person, newest first (empty if you never wrote)."""
        self._user_rec(user_id)
        pair = sorted({self.state["me"], user_id})
        dm = self._dm(pair)
        return self._page_of(self._conversation(dm["id"]) if dm else [], page, page_size)

    @tool(read_only=False, idempotent=True)
    def edit_message(self, token: Token, message_id: MessageId, text: Text) -> Posted:
        """Change the text of one of your messages."""
        rec = self._own(token, message_id)
        rec.update(text=text, edited=True)
        return Posted(message=self._message(rec))

    @tool(read_only=False, destructive=True, idempotent=True)
    def delete_message(self, token: Token, message_id: MessageId) -> Posted:
        """Delete one of your messages."""
        rec = self._own(token, message_id)
        rec["deleted"] = True
        return Posted(message=self._message(rec))

    @tool(read_only=False, idempotent=True)
    def add_reaction(
        self, token: Token, message_id: MessageId,
        emoji: Annotated[str, Field(description="emoji name without colons, e.g. 'thumbsup'")],
    ) -> Posted:
        """React to a message with an emoji (once per emoji)."""
        me = self._auth(token)
        rec = self._message_rec(message_id)
        if not self._can_read(rec["conversation_id"]):
            raise AppError("permission_denied", "that message is in a conversation you cannot read")
        name = emoji.strip(":")
        if not EMOJI.match(name):
            raise AppError("invalid", f"'{emoji}' is not an emoji name; use e.g. thumbsup, tada, eyes")
        users = rec["reactions"].setdefault(name, [])
        if me not in users:
            users.append(me)
        return Posted(message=self._message(rec))
