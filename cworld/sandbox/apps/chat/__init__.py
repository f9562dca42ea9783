"""Chat: a team workspace with channels, threads, direct messages and reactions.

Reading needs nothing; every change needs a session token from `login` (your own handle, see
`get_my_profile`), which expires after 10 minutes of virtual time. Channels and people are addressed
by id (`list_channels`, `search_users`), never by name. You can post only in channels you are a
member of; private channels cannot be joined, archived ones are read-only.
"""

from __future__ import annotations

from cworld.sandbox.apps._shared.records import edges
from cworld.sandbox.apps.chat.state import seed_state
from cworld.sandbox.apps.chat.tools import ChatTools
from cworld.sandbox.framework import Prerequisite


class ChatApp(ChatTools):
    name = "chat"
    volatile_paths = ("auth**", "messages.*.ts", "last_read**")
    title = "Chat"
    description = "Team chat: channels, threads, direct messages, reactions and status. Changes need a login token."
    category = "messaging"
    prerequisites = (
        *edges([
            ("get_my_profile", "login", "produces", "handle"),
        ]),
        *(Prerequisite("login", after, "produces", via="token", note="tokens expire after 10 minutes")
          for after in ("post_message", "send_direct_message", "join_channel", "leave_channel", "create_channel",
                        "edit_message", "delete_message", "add_reaction", "mark_read", "set_status")),
        *edges([
            ("list_channels", "post_message", "produces", "channel_id"),
            ("join_channel", "post_message", "requires", "channel_id", "only members can post"),
            ("search_users", "send_direct_message", "produces", "user_id"),
            ("search_users", "create_channel", "produces", "user_id"),
            ("read_channel", "add_reaction", "produces", "message_id"),
            ("list_unread", "mark_read", "produces", "conversation_id"),
        ]),
    )

    initial_state = seed_state
