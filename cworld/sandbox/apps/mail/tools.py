"""The mail app's tools: contacts, reading, flags and folders, writing."""

from __future__ import annotations

import heapq
import re
from typing import Annotated, Any, Literal

from pydantic import Field

from cworld.sandbox.apps._shared.records import (
    OpenPage,
    OpenPageSize,
    lookup,
    name_search,
    paginate,
    paginate_counted,
)
from cworld.sandbox.apps._shared.values import iso
from cworld.sandbox.apps.mail.models import (
    Address,
    Changed,
    Contact,
    ContactPage,
    Folder,
    Message,
    MessagePage,
    MessageSummary,
    Thread,
)
from cworld.sandbox.apps.mail.state import no_reply
from cworld.sandbox.framework import AppError, SandboxApp, tool
from cworld.sandbox.framework.journal import for_reading

MAX_RECIPIENTS = 20
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

MessageId = Annotated[str, Field(description="message id, e.g. mail_0007 (from list_messages or search_messages)")]
ContactIds = Annotated[list[str], Field(description="contact ids (from search_contacts), not names or addresses")]
Body = Annotated[str, Field(max_length=20000, description="message text")]
Subject = Annotated[str, Field(min_length=1, max_length=200, description="subject line")]
CopyIds = Annotated[list[str], Field(description="contact ids to copy")]


def _lower_email(contact: dict[str, Any]) -> list[str]:
    """A contact's email as emails are unique (case aside): the index a new contact's email is checked in."""
    return [contact["email"].lower()]


def _contact(rec: dict[str, Any]) -> Contact:
    return Contact(contact_id=rec["id"], **{k: rec[k] for k in Contact.model_fields if k != "contact_id"})


def _summary(rec: dict[str, Any]) -> MessageSummary:
    snippet = " ".join(rec["body"].split())[:80]
    return MessageSummary(message_id=rec["id"], thread_id=rec["thread_id"], folder=rec["folder"],
                          sender=Address(**rec["from"]), subject=rec["subject"], date=rec["date"], read=rec["read"],
                          starred=rec["starred"], replied=rec["replied"], snippet=snippet)


def _full(rec: dict[str, Any]) -> Message:
    return Message(**_summary(rec).model_dump(), to=[Address(**a) for a in rec["to"]],
                   cc=[Address(**a) for a in rec["cc"]], body=rec["body"])


#: The fields a contact search reads.
_CONTACT_TEXT = ("name", "email", "company")


class MailTools(SandboxApp):
    """Tools of the mail app (a mixin of `MailApp`)."""

    # --- lookups -------------------------------------------------------------------------
    def _message(self, message_id: str) -> dict[str, Any]:
        return lookup(self.state["messages"], message_id,
                      f"no message '{message_id}'; list_messages or search_messages give ids")

    def _contact_rec(self, contact_id: str) -> dict[str, Any]:
        rec = self.state["contacts"].get(contact_id)
        if rec is not None:
            return rec
        hint = " (that is an address, not a contact id)" if "@" in contact_id else ""
        raise AppError("not_found", f"no contact '{contact_id}'{hint}; use search_contacts to find the contact id, "
                       "or add_contact to create one")

    def _addresses(self, contact_ids: list[str]) -> list[dict[str, str]]:
        return [{"name": c["name"], "email": c["email"]} for c in map(self._contact_rec, contact_ids)]

    def _recipients(self, to: list[str], cc: list[str]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
        if not to:
            raise AppError("invalid", "a message needs at least one recipient in 'to'")
        if len(to) + len(cc) > MAX_RECIPIENTS:
            raise AppError("limit", f"at most {MAX_RECIPIENTS} recipients per message; split it into several")
        return self._addresses(to), self._addresses(cc)

    def _me(self) -> dict[str, str]:
        return dict(self.state["account"])

    def _store(self, folder: str, to: list[dict[str, str]], cc: list[dict[str, str]], subject: str, body: str,
               thread_id: str | None = None) -> dict[str, Any]:
        rec = {"id": self.new_id("mail"), "thread_id": thread_id or self.new_id("thread"), "folder": folder,
               "from": self._me(), "to": to, "cc": cc, "subject": subject, "body": body, "date": iso(self.now),
               "read": True, "starred": False, "replied": False}
        self.state["messages"][rec["id"]] = rec
        return rec

    # --- contacts ------------------------------------------------------------------------
    @tool(read_only=True)
    def search_contacts(
        self,
        query: Annotated[str, Field(description="words from the name, email or company; empty lists everyone")] = "",
        page: OpenPage = 1,
        page_size: OpenPageSize = 10,
    ) -> ContactPage:
        """Find contacts by name, email or company (all words must match), alphabetically. Gives contact ids."""
        chunk, meta = name_search(self, "contacts", query, _CONTACT_TEXT, page,
                                  page_size)
        return ContactPage(contacts=[_contact(c) for c in chunk], **meta)

    @tool(read_only=True)
    def get_contact(self, contact_id: Annotated[str, Field(description="contact id from search_contacts")]) -> Contact:
        """One contact's details, including notes such as 'personal address'."""
        return _contact(self._contact_rec(contact_id))

    @tool(read_only=False)
    def add_contact(
        self,
        name: Annotated[str, Field(min_length=1, max_length=120, description="full name")],
        email: Annotated[str, Field(description="email address")],
        company: Annotated[str, Field(max_length=120, description="company, optional")] = "",
    ) -> Contact:
        """Add someone to the address book (needed before mailing a new address). Emails must be unique."""
        if not EMAIL_RE.match(email):
            raise AppError("invalid", f"'{email}' is not an email address (expected name@domain.tld)")
        same = self.keys_having("contacts", _lower_email, email.lower())
        clash = for_reading(self.state["contacts"])[same[0]] if same else None
        if clash is not None:
            raise AppError("conflict", f"{email} already belongs to contact {clash['id']} ({clash['name']}); use it")
        rec = {"id": self.new_id("contact"), "name": name, "email": email, "company": company, "title": "",
               "phone": "", "favorite": False, "notes": ""}
        self.state["contacts"][rec["id"]] = rec
        return _contact(rec)

    @tool(read_only=False, destructive=True, idempotent=True)
    def delete_contact(self, contact_id: Annotated[str, Field(description="contact id to remove")]) -> Contact:
        """Remove a contact from the address book (messages already sent are kept)."""
        rec = self._contact_rec(contact_id)
        del self.state["contacts"][contact_id]
        return _contact(rec)

    # --- reading -------------------------------------------------------------------------
    @tool(read_only=True)
    def list_messages(
        self,
        folder: Annotated[Folder, Field(description="which folder")] = "inbox",
        unread_only: Annotated[bool, Field(description="only unread messages")] = False,
        page: OpenPage = 1,
        page_size: OpenPageSize = 10,
    ) -> MessagePage:
        """Messages in a folder, newest first, with snippets (get_message shows the full text)."""
        only_unread: dict[str, Any] = {"read": False} if unread_only else {}
        shown = self.ordered("messages", ("date", "id"), reverse=True, folder=folder, **only_unread)
        chunk, meta = paginate(shown, page, page_size)
        unread = self.count("messages", folder=folder, read=False)
        return MessagePage(messages=[_summary(m) for m in chunk], unread_in_folder=unread, **meta)

    def _page(self, recs: list[dict[str, Any]], page: int, page_size: int) -> MessagePage:
        unread = sum(not m["read"] for m in recs)
        newest = heapq.nlargest(page * page_size, recs, key=lambda m: (m["date"], m["id"]))  # the pages up to this one
        chunk, meta = paginate_counted(iter(newest), len(recs), page, page_size)
        return MessagePage(messages=[_summary(m) for m in chunk], unread_in_folder=unread, **meta)

    @tool(read_only=True)
    def search_messages(
        self,
        query: Annotated[str, Field(min_length=1, description="words to find in subject, body or sender")],
        folder: Annotated[Folder | None, Field(description="limit to one folder; default: all but trash")] = None,
        page: OpenPage = 1,
        page_size: OpenPageSize = 10,
    ) -> MessagePage:
        """Full-text search over messages (all words must match), newest first."""
        found = [m for m in self.matched("messages", query, ("subject", "body", "from.name", "from.email"))
                 if (m["folder"] == folder if folder else m["folder"] != "trash")]
        return self._page(found, page, page_size)

    @tool(read_only=True)
    def get_message(self, message_id: MessageId) -> Message:
        """The full message: sender, recipients, body. Reading does not mark it read (see mark_read)."""
        return _full(self._message(message_id))

    @tool(read_only=True)
    def get_thread(self, thread_id: Annotated[str, Field(description="thread id from a message")],
                   page: OpenPage = 1, page_size: OpenPageSize = 20) -> Thread:
        """The messages of a conversation, oldest first (including your replies and drafts), 20 a page by
        default."""
        chunk, meta = paginate(self.ordered("messages", ("date", "id"), thread_id=thread_id), page, page_size)
        if not meta["total"]:
            raise AppError("not_found", f"no thread '{thread_id}'; thread ids come with each message")
        return Thread(thread_id=thread_id, messages=[_full(m) for m in chunk], **meta)

    # --- flags and folders ---------------------------------------------------------------
    @tool(read_only=False, idempotent=True)
    def mark_read(
        self,
        message_ids: Annotated[list[str], Field(min_length=1, max_length=100, description="message ids")],
        read: Annotated[bool, Field(description="true: mark read; false: mark unread")] = True,
    ) -> Changed:
        """Mark messages read or unread."""
        recs = [self._message(i) for i in message_ids]
        changed = [r["id"] for r in recs if r["read"] != read]
        for rec in recs:
            rec["read"] = read
        return Changed(changed=changed)

    @tool(read_only=False, idempotent=True)
    def star_message(
        self, message_id: MessageId, starred: Annotated[bool, Field(description="true to star, false to unstar")] = True
    ) -> MessageSummary:
        """Star (flag for follow-up) or unstar a message."""
        rec = self._message(message_id)
        rec["starred"] = starred
        return _summary(rec)

    @tool(read_only=False, idempotent=True)
    def move_message(
        self,
        message_id: MessageId,
        folder: Annotated[Literal["inbox", "archive", "trash"], Field(description="where to move it")],
    ) -> MessageSummary:
        """Move a message to the inbox, the archive or the trash (drafts can only go to the trash)."""
        rec = self._message(message_id)
        if rec["folder"] in ("drafts", "sent") and folder == "inbox":
            raise AppError("invalid", f"a {rec['folder'][:-1] if rec['folder'] == 'drafts' else 'sent'} message cannot "
                           "go to the inbox; archive or trash it")
        if rec["folder"] == "drafts" and folder != "trash":
            raise AppError("invalid", "a draft can only be moved to the trash (or sent with send_draft)")
        rec["folder"] = folder
        return _summary(rec)

    @tool(read_only=False, destructive=True)
    def delete_forever(self, message_id: MessageId) -> Changed:
        """Delete a message permanently. Only for messages already in the trash (move_message first)."""
        rec = self._message(message_id)
        if rec["folder"] != "trash":
            raise AppError("precondition", f"message '{message_id}' is in {rec['folder']}, not the trash; "
                           "move_message it to the trash first")
        del self.state["messages"][message_id]
        return Changed(changed=[message_id])

    # --- writing -------------------------------------------------------------------------
    @tool(read_only=False)
    def create_draft(self, to: ContactIds, subject: Subject, body: Body, cc: CopyIds = []) -> Message:  # noqa: B006
        """Save a new draft (not sent). Use send_draft to send it."""
        return self._compose("drafts", to, subject, body, cc)

    @tool(read_only=False, idempotent=True)
    def update_draft(
        self,
        draft_id: Annotated[str, Field(description="message id of a draft")],
        to: Annotated[list[str] | None, Field(description="new recipients (contact ids); omit to keep")] = None,
        subject: Annotated[str | None, Field(max_length=200, description="new subject; omit to keep")] = None,
        body: Annotated[str | None, Field(max_length=20000, description="new body (replaces it); omit to keep")] = None,
    ) -> Message:
        """Change a draft's recipients, subject or body."""
        rec = self._draft(draft_id)
        if to is not None:
            rec["to"] = self._recipients(to, [])[0]
        if subject is not None:
            rec["subject"] = subject
        if body is not None:
            rec["body"] = body
        rec["date"] = iso(self.now)
        return _full(rec)

    def _compose(self, folder: str, to: list[str], subject: str, body: str, cc: list[str]) -> Message:
        """A new message from contact ids, kept as a draft or sent at once."""
        to_addr, cc_addr = self._recipients(to, cc)
        return _full(self._store(folder, to_addr, cc_addr, subject, body))

    def _draft(self, draft_id: str) -> dict[str, Any]:
        rec = self._message(draft_id)
        if rec["folder"] != "drafts":
            raise AppError("invalid", f"message '{draft_id}' is not a draft (it is in {rec['folder']})")
        return rec

    @tool(read_only=False)
    def send_draft(self, draft_id: Annotated[str, Field(description="message id of a draft")]) -> Message:
        """Send a saved draft as it is now (check its recipients first with get_message)."""
        rec = self._draft(draft_id)
        if not rec["body"].strip():
            raise AppError("invalid", f"draft '{draft_id}' has an empty body; update_draft it first")
        rec.update(folder="sent", date=iso(self.now))
        return _full(rec)

    @tool(read_only=False)
    def send_email(self, to: ContactIds, subject: Subject, body: Body, cc: CopyIds = []) -> Message:  # noqa: B006
        """Send a new email to contacts (ids from search_contacts)."""
        return self._compose("sent", to, subject, body, cc)

    @tool(read_only=False)
    def reply_to_message(
        self,
        message_id: MessageId,
        body: Body,
        reply_all: Annotated[bool, Field(description="also reply to everyone else on the message")] = False,
    ) -> Message:
        """Reply in the same thread to the sender (or, with reply_all, to every other recipient too)."""
        orig = self._message(message_id)
        if orig["folder"] == "drafts":
            raise AppError("invalid", "cannot reply to a draft; send_draft or update_draft it")
        mine = orig["from"]["email"] == self.state["account"]["email"]
        to = orig["to"] if mine else [orig["from"]]
        if any(no_reply(a["email"]) for a in to):
            raise AppError("precondition", f"{orig['from']['email']} is an automated address that takes no replies")
        cc = [a for a in orig["to"] + orig["cc"] if reply_all and not mine and a["email"] != self.state["account"]["email"]]
        subject = orig["subject"] if orig["subject"].lower().startswith("re:") else f"Re: {orig['subject']}"
        orig["replied"] = True
        return _full(self._store("sent", [dict(a) for a in to], [dict(a) for a in cc], subject, body, orig["thread_id"]))

    @tool(read_only=False)
    def forward_message(
        self,
        message_id: MessageId,
        to: ContactIds,
        note: Annotated[str, Field(max_length=5000, description="text above the forwarded message")] = "",
    ) -> Message:
        """Forward a message, with an optional note, to contacts."""
        orig = self._message(message_id)
        to_addr, _ = self._recipients(to, [])
        quoted = f"{note}\n\n---------- Forwarded message ----------\nFrom: {orig['from']['name']} " \
                 f"<{orig['from']['email']}>\nDate: {orig['date']}\nSubject: {orig['subject']}\n\n{orig['body']}"
        return _full(self._store("sent", to_addr, [], f"Fwd: {orig['subject']}", quoted.strip()))
