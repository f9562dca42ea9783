"""Mail: your mailbox (inbox, sent, drafts, archive, trash) and address book.

Recipients are contact ids, never free-typed names: an agent finds them with `search_contacts` (and
must pick between look-alike contacts). Deleting for good works only from the trash. Replies keep the
thread. The seeded mailbox is messy: see `_mail_state`.
"""

from __future__ import annotations

from cworld.sandbox.apps._shared.records import edges
from cworld.sandbox.apps.mail.state import seed_state
from cworld.sandbox.apps.mail.tools import MailTools


class MailApp(MailTools):
    name = "mail"
    volatile_paths = ("messages.*.date",)
    title = "Mail"
    description = "Your email: read, search, draft, send, reply, forward and file messages; manage contacts."
    category = "email"
    prerequisites = edges([
        ("search_contacts", "send_email", "produces", "contact_id", "recipients are contact ids"),
        ("search_contacts", "create_draft", "produces", "contact_id"),
        ("search_contacts", "forward_message", "produces", "contact_id"),
        ("add_contact", "send_email", "produces", "contact_id", "a new address needs a contact"),
        ("list_messages", "get_message", "produces", "message_id"),
        ("search_messages", "reply_to_message", "produces", "message_id"),
        ("create_draft", "send_draft", "produces", "draft_id"),
        ("move_message", "delete_forever", "requires", "message_id",
         "only messages in the trash can be deleted for good"),
        ("get_message", "get_thread", "produces", "thread_id"),
    ])

    initial_state = seed_state
