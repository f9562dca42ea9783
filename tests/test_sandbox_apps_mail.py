"""Mail app: messy seeded mailbox, contact-id resolution, trash-before-delete, honest pages, no-op errors."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sandbox_results import err, ok

from cworld.sandbox.apps._shared.values import parse_iso
from cworld.sandbox.apps.mail import MailApp
from cworld.sandbox.framework import SandboxSession
from cworld.sandbox.framework.server import SandboxServer, build_server
from cworld.sandbox.framework.world import cast


@pytest.fixture
def mail() -> SandboxServer:
    return build_server(SandboxSession(seed=11, apps=[MailApp]), "mail")


def test_seeded_mailbox_is_messy(mail: SandboxServer) -> None:
    inbox = ok(mail.call_tool_sync("list_messages", {"page_size": 50}))
    assert inbox["unread_in_folder"] >= 2 and inbox["total"] > 10
    now = mail.session.clock.now()
    stale_unread = [m for m in inbox["messages"] if not m["read"] and now - parse_iso(m["date"]) > timedelta(days=14)]
    assert stale_unread, "an old unread message waits in the inbox"
    drafts = ok(mail.call_tool_sync("list_messages", {"folder": "drafts"}))["messages"]
    assert len(drafts) == 1
    draft = ok(mail.call_tool_sync("get_message", {"message_id": drafts[0]["message_id"]}))
    wrong = [c for c in mail.session.state["mail"]["contacts"].values() if c["email"] == draft["to"][0]["email"]]
    assert wrong[0]["notes"] == "personal address", "the draft is addressed to the look-alike contact"
    last = wrong[0]["name"].split()[-1]
    assert ok(mail.call_tool_sync("search_contacts", {"query": last}))["total"] >= 2
    assert ok(mail.call_tool_sync("list_messages", {"folder": "trash"}))["total"] >= 1


def test_recipients_must_be_resolved_to_contact_ids(mail: SandboxServer) -> None:
    person = cast(11)["colleagues"][3]
    text = err(mail.call_tool_sync("send_email", {"to": [person["email"]], "subject": "Hi", "body": "Hello"}), "not_found")
    assert "search_contacts" in text and "address" in text
    found = ok(mail.call_tool_sync("search_contacts", {"query": person["name"]}))["contacts"]
    sent = ok(mail.call_tool_sync("send_email", {"to": [found[0]["contact_id"]], "subject": "Hi", "body": "Hello"}))
    assert sent["folder"] == "sent" and sent["to"] == [{"name": person["name"], "email": person["email"]}]


def test_new_address_needs_add_contact_first(mail: SandboxServer) -> None:
    added = ok(mail.call_tool_sync("add_contact", {"name": "Ada Lovelace", "email": "ada@engines.example"}))
    err(mail.call_tool_sync("add_contact", {"name": "A. L.", "email": "ADA@engines.example"}), "conflict")
    sent = ok(mail.call_tool_sync("send_email", {"to": [added["contact_id"]], "subject": "Notes", "body": "Attached."}))
    assert sent["to"][0]["email"] == "ada@engines.example"


def test_permanent_delete_needs_the_trash_first(mail: SandboxServer) -> None:
    first = ok(mail.call_tool_sync("list_messages", {}))["messages"][0]["message_id"]
    assert "move_message" in err(mail.call_tool_sync("delete_forever", {"message_id": first}), "precondition")
    ok(mail.call_tool_sync("move_message", {"message_id": first, "folder": "trash"}))
    ok(mail.call_tool_sync("delete_forever", {"message_id": first}))
    assert first not in mail.session.state["mail"]["messages"]


def test_draft_then_send_and_reply_keeps_the_thread(mail: SandboxServer) -> None:
    contact = ok(mail.call_tool_sync("search_contacts", {"page_size": 1}))["contacts"][0]
    draft = ok(mail.call_tool_sync("create_draft", {"to": [contact["contact_id"]], "subject": "Plan", "body": ""}))
    err(mail.call_tool_sync("send_draft", {"draft_id": draft["message_id"]}), "invalid")
    ok(mail.call_tool_sync("update_draft", {"draft_id": draft["message_id"], "body": "Here is the plan."}))
    assert ok(mail.call_tool_sync("send_draft", {"draft_id": draft["message_id"]}))["folder"] == "sent"
    inbox = ok(mail.call_tool_sync("search_messages", {"query": "Hi", "folder": "inbox"}))["messages"]
    human = next(m for m in inbox if "noreply" not in m["sender"]["email"])
    reply = ok(mail.call_tool_sync("reply_to_message", {"message_id": human["message_id"], "body": "Thanks!"}))
    assert reply["thread_id"] == human["thread_id"] and reply["subject"].startswith("Re:")
    thread = ok(mail.call_tool_sync("get_thread", {"thread_id": human["thread_id"]}))["messages"]
    assert thread[-1]["message_id"] == reply["message_id"]


def test_a_thread_pages_oldest_first(mail: SandboxServer) -> None:
    """get_thread answers a page of the conversation, oldest first, and counts the whole of it."""
    inbox = ok(mail.call_tool_sync("search_messages", {"query": "Hi", "folder": "inbox"}))["messages"]
    human = next(m for m in inbox if "noreply" not in m["sender"]["email"])
    for n in range(4):
        ok(mail.call_tool_sync("reply_to_message", {"message_id": human["message_id"], "body": f"Reply {n}"}))
    records = [m for m in mail.session.state["mail"]["messages"].values() if m["thread_id"] == human["thread_id"]]
    oldest_first = [m["id"] for m in sorted(records, key=lambda m: (m["date"], m["id"]))]
    seen, page = [], 1
    while True:
        answer = ok(mail.call_tool_sync("get_thread", {"thread_id": human["thread_id"], "page": page, "page_size": 2}))
        assert answer["total"] == len(records)
        seen += [m["message_id"] for m in answer["messages"]]
        if not answer["has_more"]:
            break
        page += 1
    assert seen == oldest_first and len(seen) >= 5
    err(mail.call_tool_sync("get_thread", {"thread_id": "thr_none"}), "not_found")


def test_automated_senders_take_no_replies(mail: SandboxServer) -> None:
    msgs = mail.session.state["mail"]["messages"].values()
    robot = next(m for m in msgs if m["from"]["email"].split("@")[0].endswith("noreply"))
    err(mail.call_tool_sync("reply_to_message", {"message_id": robot["id"], "body": "ok"}), "precondition")


def test_pages_are_honest(mail: SandboxServer) -> None:
    seen, page = [], 1
    while True:
        chunk = ok(mail.call_tool_sync("list_messages", {"page": page, "page_size": 4}))
        seen += [m["message_id"] for m in chunk["messages"]]
        if not chunk["has_more"]:
            break
        page += 1
    assert len(seen) == len(set(seen)) == chunk["total"]
    assert ok(mail.call_tool_sync("list_messages", {"page": page + 1, "page_size": 4}))["messages"] == []


def test_business_errors_leave_state_untouched(mail: SandboxServer) -> None:
    before = mail.session.snapshot()
    ids = list(mail.session.state["mail"]["contacts"])[:2]
    too_many = {"to": ids * 11, "subject": "x", "body": "y"}
    err(mail.call_tool_sync("send_email", too_many), "limit")
    err(mail.call_tool_sync("mark_read", {"message_ids": [next(iter(mail.session.state["mail"]["messages"])), "nope"]}),
        "not_found")
    err(mail.call_tool_sync("move_message", {"message_id": "mail_9999", "folder": "archive"}), "not_found")
    assert mail.session.snapshot() == before


def test_same_seed_same_mailbox_other_seed_other_people() -> None:
    a, b = SandboxSession(seed=4, apps=[MailApp]), SandboxSession(seed=4, apps=[MailApp])
    c = SandboxSession(seed=5, apps=[MailApp])
    assert a.snapshot() == b.snapshot()
    names = lambda s: {x["name"] for x in s.state["mail"]["contacts"].values()}  # noqa: E731
    assert names(a) != names(c)


def test_a_search_in_a_grown_mailbox_pages_newest_first(mail: SandboxServer) -> None:
    """search_messages sorts only the pages up to the one asked: every page is what sorting every match gives."""
    messages = mail.session.state["mail"]["messages"]  # grown before any call, so the indexes are built over it
    for n, message in enumerate(list(messages.values()) * 4):
        key = f"msg_9{n:04d}"
        messages[key] = {**message, "id": key, "read": n % 3 == 0, "date": message["date"][:10] + "T08:00:00Z"}
    word = next(iter(messages.values()))["subject"].split()[0]
    for folder in (None, "inbox"):
        found = [m for m in messages.values() if (m["folder"] == folder if folder else m["folder"] != "trash")
                 and word.lower() in (m["subject"] + " " + m["body"] + " " + m["from"]["name"] + " "
                                      + m["from"]["email"]).lower()]
        wanted = [m["id"] for m in sorted(found, key=lambda m: (m["date"], m["id"]), reverse=True)]
        seen, page = [], 1
        while True:
            arguments = {"query": word, "page": page, "page_size": 6} | ({"folder": folder} if folder else {})
            answer = ok(mail.call_tool_sync("search_messages", arguments))
            assert answer["unread_in_folder"] == sum(not m["read"] for m in found)
            seen += [m["message_id"] for m in answer["messages"]]
            if not answer["has_more"]:
                break
            page += 1
        assert seen == wanted and len(wanted) > 6
