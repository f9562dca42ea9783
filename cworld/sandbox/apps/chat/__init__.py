"""Chat: a team workspace with channels, threads, direct messages and reactions.

Reading needs nothing; every change needs a session token from `login` (your own handle, see
`get_my_profile`), which expires after 10 minutes of virtual time. Channels and people are addressed
by id (`list_channels`, `search_users`), never by name. You can post only in channels you are a
member of; private channels cannot be joined, archived ones are read-only.
"""

from __future__ import annotations

from cworld.sandbox.apps.chat.state import seed_state
from cworld.sandbox.apps.chat.tools import ChatTools
from cworld.sandbox.framework import Prerequisite


class ChatApp(ChatTools):
    name = "chat"
    volatile_paths = ("auth**", "messages.*.ts", "last_read**")
    title = "Chat"
    description = "Team chat: channels, threads, direct messages, reactions and status. Changes need a login token."
    category = "messaging"
    entity_kinds = {"users": "user", "channels": "channel", "dms": "conversation", "messages": "message"}
    prerequisites = (
        Prerequisite("get_my_profile", "login", "produces", via="handle"),
        *(Prerequisite("login", after, "produces", via="token", note="tokens expire after 10 minutes")
          for after in ("post_message", "send_direct_message", "join_channel", "leave_channel", "create_channel",
                        "edit_message", "delete_message", "add_reaction", "mark_read", "set_status")),
        Prerequisite("list_channels", "post_message", "produces", via="channel_id"),
        Prerequisite("join_channel", "post_message", "requires", via="channel_id", note="only members can post"),
        Prerequisite("search_users", "send_direct_message", "produces", via="user_id"),
        Prerequisite("search_users", "create_channel", "produces", via="user_id"),
        Prerequisite("read_channel", "add_reaction", "produces", via="message_id"),
        Prerequisite("list_unread", "mark_read", "produces", via="conversation_id"),
    )

    initial_state = seed_state
