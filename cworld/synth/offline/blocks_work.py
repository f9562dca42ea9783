"""Work blocks: a follow-up card on a project board, rescheduling an overdue card, counting working days,
reading a locked document whose password sits in the inbox, and logging the outcome in a schema-only CRM."""

from __future__ import annotations

import re
from datetime import date, timedelta

from cworld.sandbox.framework import world
from cworld.synth.offline.composer import Block, BlockFailed, Composer
from cworld.synth.offline.people import colleague, first_name
from cworld.synth.offline.phrases import day

TB, CRM = "taskboard/", "helio-crm/"


def _editable_boards(c: Composer) -> dict[str, dict]:
    me = c.state["taskboard"]["me"]
    return {
        bid: b
        for bid, b in c.state["taskboard"]["boards"].items()
        if b["roles"].get(me) in ("admin", "normal")
    }


def card(c: Composer) -> None:
    boards = _editable_boards(c)
    if not boards:
        raise BlockFailed("no board I can edit")
    board_id = c.pick(sorted(boards))
    board = boards[board_id]
    lists = {
        v["name"]: k
        for k, v in c.state["taskboard"]["lists"].items()
        if v["board_id"] == board_id and not v["archived"]
    }
    column = "To do" if "To do" in lists else c.pick(sorted(lists))
    members = {
        c.state["taskboard"]["members"][m]["name"]: m
        for m in board["roles"]
        if m != c.state["taskboard"]["me"]
    }
    who = colleague(c, list(members))
    due_day = max(date.fromisoformat(c.facts["when"]), c.today) + timedelta(days=c.rng.randint(1, 4))
    due = f"{due_day.isoformat()}T17:00"
    title = f"Follow up: {c.facts['topic']}"
    c.subgoal("card", f"Track the follow-up on the {board['name']} board")
    listed = c.step("boards", TB + "list_boards", {}, f"find the {board['name']} board")
    detail = c.step(
        "board",
        TB + "get_board",
        {"board_id": listed.ref(f"boards[name={board['name']}].board_id")},
        f"get the {column} list and {who}'s member id on the {board['name']} board",
    )
    made = c.step(
        "new_card",
        TB + "create_card",
        {
            "list_id": detail.ref(f"lists[name={column}].list_id"),
            "title": title,
            "description": c.facts["summary"],
            "due": due,
        },
        f"add the follow-up card about {c.facts['topic']}",
    )
    c.step(
        "assign",
        TB + "assign_member",
        {"card_id": made.ref("card_id"), "member_id": detail.ref(f"members[name={who}].member_id")},
        f"make {who} the owner of the follow-up card",
    )
    if c.wants(TB + "add_checklist"):
        c.step(
            "checklist",
            TB + "add_checklist",
            {
                "card_id": made.ref("card_id"),
                "name": "Steps",
                "items": ["Confirm details", "Share with the team", "Close out"],
            },
            "break the follow-up card into a short checklist",
        )
    c.decide(
        "card_due",
        "deadline",
        f"The follow-up card must be due no later than 17:00 UTC on {day(due_day)}.",
        {"kind": "deadline", "tool": TB + "create_card", "argument": "due", "value": f"{due}:00Z"},
    )
    c.say(
        f"Add a card to the '{column}' list of the {board['name']} board to follow up, assigned to {who} "
        "and due "
        f"{day(due_day)} at 17:00 UTC.",
        f"Track the follow-up on the {board['name']} board ('{column}' list) with {who} as owner, due "
        f"{day(due_day)}.",
    )


def overdue(c: Composer) -> None:
    boards = _editable_boards(c)
    cards = [
        (cid, v)
        for cid, v in sorted(c.state["taskboard"]["cards"].items())
        if v["board_id"] in boards
        and not v["archived"]
        and not v["due_complete"]
        and v["due"]
        and v["due"] < c.now.strftime("%Y-%m-%dT%H:%M:%SZ")
    ]
    if not cards:
        raise BlockFailed("no overdue card on a board I can edit")
    card_id, chosen = c.pick(cards)
    new_day = c.today + timedelta(days=c.rng.randint(3, 10))
    due = f"{new_day.isoformat()}T12:00"
    board = boards[chosen["board_id"]]["name"]
    c.subgoal("reschedule", f"Reschedule the overdue card '{chosen['title']}'")
    found = c.step(
        "overdue", TB + "search_cards", {"overdue_only": True}, "find the overdue cards on my boards"
    )
    ref = found.ref(f"cards[title={chosen['title']}].card_id")
    c.step("card", TB + "get_card", {"card_id": ref}, f"read '{chosen['title']}' before changing it")
    c.step(
        "new_due",
        TB + "set_due_date",
        {"card_id": ref, "due": due},
        f"move '{chosen['title']}' to its new due date",
    )
    c.step(
        "comment",
        TB + "add_comment",
        {"card_id": ref, "text": f"Moved the due date to {new_day.isoformat()}."},
        f"leave a note on '{chosen['title']}' saying why the date changed",
    )
    c.decide(
        "new_due",
        "deadline",
        f"The new due date for '{chosen['title']}' must be no later than {day(new_day)} 12:00 UTC.",
        {"kind": "deadline", "tool": TB + "set_due_date", "argument": "due", "value": f"{due}:00Z"},
    )
    c.say(
        f"The card '{chosen['title']}' on the {board} board is overdue: move its due date to {day(new_day)} "
        "at 12:00 "
        "UTC and leave a comment about the change.",
        f"'{chosen['title']}' ({board} board) slipped. Give it a new due date of {day(new_day)}, 12:00 UTC, "
        "and "
        "comment on the card that the date moved.",
    )
    c.hint(f"'{chosen['title']}' is now due {new_day.isoformat()} 12:00 UTC.")
    c.report("the new due date", new_day.isoformat())
    c.facts.update(
        topic=f"the '{chosen['title']}' card",
        when=new_day.isoformat(),
        summary=f"'{chosen['title']}' on the {board} board is now due {new_day.isoformat()} at 12:00 UTC.",
    )


def workdays(c: Composer) -> None:
    when = date.fromisoformat(c.facts["when"])
    if when <= c.today:
        raise BlockFailed("the date is not ahead")
    c.subgoal("count_days", "Count the working days left")
    count = c.step(
        "workdays",
        "datetime/business_days_between",
        {"start": c.today.isoformat(), "end": when.isoformat()},
        f"count the working days from today until {day(when)}",
    )
    c.say(
        f"Also tell me how many working days I have left before {day(when)}.",
        f"Work out how many working days remain between today and {day(when)}, and pass that on too.",
    )
    c.hint(f"Working days until {when.isoformat()}: {count.ref('days')}.")
    c.report("the number of working days", count.ref("days"))
    c.quote_in_summary(f"That leaves {count.ref('days')} working days.")


def locked_doc(c: Composer) -> None:
    locked = world.cast(c.seed)["locked_document"]
    docs = [(k, v) for k, v in c.state["docs"]["documents"].items() if v["title"] == locked["title"]]
    if not docs:
        raise BlockFailed("no locked document")
    note = f"Checked on {c.today.isoformat()}: still current."
    c.subgoal("unlock", f"Open the locked '{locked['title']}' document")
    mails = c.step(
        "find_password",
        "mail/search_messages",
        {"query": "password"},
        f"find the email with the password for '{locked['title']}'",
    )
    c.step(
        "read_password",
        "mail/get_message",
        {"message_id": mails.ref("messages.0.message_id")},
        "read the email to get the document's password",
    )
    found = c.step(
        "find_doc",
        "docs/search_documents",
        {"query": locked["title"]},
        f"find the locked '{locked['title']}' document among the shared documents",
    )
    ref = found.ref(f"documents[title={locked['title']}].document_id")
    c.step(
        "unlock",
        "docs/unlock_document",
        {"document_id": ref, "password": locked["password"]},
        f"unlock '{locked['title']}' with the password from the email",
    )
    body = c.step(
        "read_doc",
        "docs/get_document",
        {"document_id": ref},
        f"read the unlocked '{locked['title']}' document",
    )
    c.step(
        "append",
        "docs/append_to_document",
        {"document_id": ref, "text": note},
        f"add my check note to '{locked['title']}'",
    )
    first = re.split(r"(?<=[.!?\n])\s", body.value.get("content", "").replace("#", "").strip())[0][:120]
    c.say(
        f"{first_name(c.state['docs']['directory'][locked['owner']]['name'])} locked the '{locked['title']}' "
        "document and emailed me the password. Open it, read it, and add a line at the end saying it was "
        "checked "
        "today.",
        f"The '{locked['title']}' document is password-protected (the password is somewhere in my inbox). "
        "Unlock it, "
        f"read it, and append '{note}'.",
    )
    c.hint(f"'{locked['title']}' unlocked; it is at version {body.ref('version')}.")
    c.report("the document's version before your note", body.ref("version"))
    c.facts.update(
        topic=f"the '{locked['title']}' document",
        when=c.today.isoformat(),
        summary=f"I checked '{locked['title']}' today and added a note; it opens with: {first}",
    )


def crm(c: Composer) -> None:
    contact = c.pick(world.cast(c.seed)["externals"])
    c.subgoal("crm", f"Log it against {contact['name']} in the CRM")
    found = c.describe(
        "crm_contact",
        CRM + "search_contacts",
        {"query": contact["name"]},
        f"find {contact['name']}'s record in our CRM",
    )
    ref = found.ref("contacts.0.contact_id")
    c.describe(
        "crm_note",
        CRM + "log_activity",
        {"kind": "note", "summary": c.facts["summary"], "contact_id": ref},
        f"log {c.facts['topic']} on {contact['name']}'s CRM record",
    )
    due = (c.today + timedelta(days=7)).isoformat()
    c.describe(
        "crm_follow_up",
        CRM + "create_follow_up_task",
        {"title": f"Check in with {contact['name']}", "due_date": due, "contact_id": ref},
        f"schedule a follow-up with {contact['name']} a week from now",
    )
    c.say(
        f"Log this on {contact['name']}'s record in our CRM ({contact['company']}) and set a follow-up for "
        f"{day(due)}.",
        f"Note it in our CRM under {contact['name']} from {contact['company']}, with a follow-up "
        f"task due {day(due)}.",
    )


BLOCKS = [
    Block(
        "card",
        False,
        frozenset(
            TB + n for n in ("list_boards", "get_board", "create_card", "assign_member", "add_checklist")
        ),
        card,
        needs=frozenset({"topic", "when", "summary"}),
    ),
    Block(
        "overdue",
        True,
        frozenset(TB + n for n in ("search_cards", "get_card", "set_due_date", "add_comment")),
        overdue,
        gives=frozenset({"topic", "summary", "when", "future"}),
    ),
    Block(
        "workdays",
        False,
        frozenset({"datetime/business_days_between"}),
        workdays,
        needs=frozenset({"when", "summary", "future"}),
    ),
    Block(
        "locked_doc",
        True,
        frozenset(
            {
                "mail/search_messages",
                "mail/get_message",
                "docs/search_documents",
                "docs/unlock_document",
                "docs/get_document",
                "docs/append_to_document",
            }
        ),
        locked_doc,
        gives=frozenset({"topic", "summary", "when"}),
    ),
    Block(
        "crm",
        False,
        frozenset({CRM + "search_contacts", CRM + "log_activity", CRM + "create_follow_up_task"}),
        crm,
        needs=frozenset({"summary", "topic"}),
    ),
]
