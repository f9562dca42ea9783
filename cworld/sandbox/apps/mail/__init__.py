"""Mail: your mailbox (inbox, sent, drafts, archive, trash) and address book.

Recipients are contact ids, never free-typed names: an agent finds them with `search_contacts` (and
must pick between look-alike contacts). Deleting for good works only from the trash. Replies keep the
thread. The seeded mailbox is messy: see `state.py`.
"""

from __future__ import annotations

from cworld.sandbox.apps.mail.state import seed_state
from cworld.sandbox.apps.mail.tools import MailTools
from cworld.sandbox.framework import Prerequisite


class MailApp(MailTools):
    name = "mail"
    volatile_paths = ("messages.*.date",)
    title = "Mail"
    description = "Your email: read, search, draft, send, reply, forward and file messages; manage contacts."
    category = "email"
    entity_kinds = {"contacts": "contact", "messages": "message"}
    prerequisites = (
        Prerequisite("search_contacts", "send_email", "produces", via="contact_id", note="recipients are contact ids"),
        Prerequisite("search_contacts", "create_draft", "produces", via="contact_id"),
        Prerequisite("search_contacts", "forward_message", "produces", via="contact_id"),
        Prerequisite("add_contact", "send_email", "produces", via="contact_id", note="a new address needs a contact"),
        Prerequisite("list_messages", "get_message", "produces", via="message_id"),
        Prerequisite("search_messages", "reply_to_message", "produces", via="message_id"),
        Prerequisite("create_draft", "send_draft", "produces", via="draft_id"),
        Prerequisite("move_message", "delete_forever", "requires", via="message_id",
                     note="only messages in the trash can be deleted for good"),
        Prerequisite("get_message", "get_thread", "produces", via="thread_id"),
    )

    initial_state = seed_state
