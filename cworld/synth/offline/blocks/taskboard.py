"""Project-board blocks: a follow-up card on a board, rescheduling an overdue card."""

from __future__ import annotations

from datetime import date, timedelta

from cworld.synth.offline.blocks.dictated import dictated
from cworld.synth.offline.composer import BlockFailed, Composer, anchor, follow_up, tools
from cworld.synth.offline.people import colleague
from cworld.synth.offline.phrases import day

APP = "taskboard"
TB = "taskboard/"


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
    topic, summary = c.facts["topic"], c.facts["summary"]
    name = board["name"]
    c.subgoal("card", board=name)
    listed = c.step("boards", TB + "list_boards", {}, board=name)
    board_ref = {"board_id": listed.ref(f"boards[name={name}].board_id")}
    detail = c.step("board", TB + "get_board", board_ref, column=column, who=who, board=name)
    new = {
        "list_id": detail.ref(f"lists[name={column}].list_id"),
        "title": dictated(c.text("card.title", topic=topic)),
        "description": dictated(summary),
        "due": due,
    }
    made = c.step("new_card", TB + "create_card", new, topic=topic)
    owner = {"card_id": made.ref("card_id"), "member_id": detail.ref(f"members[name={who}].member_id")}
    c.step("assign", TB + "assign_member", owner, who=who)
    listed_too = ""
    if c.wants(TB + "add_checklist"):
        items = c.variants("card.checklist_items")
        checklist = {"card_id": made.ref("card_id"), "name": c.text("card.checklist"), "items": items}
        c.step("checklist", TB + "add_checklist", checklist)
        listed_too = c.text("card.checklist_say", name=checklist["name"], items=", ".join(f"'{i}'" for i in items))
    deadline = {"kind": "deadline", "tool": TB + "create_card", "argument": "due", "value": f"{due}:00Z"}
    c.decide("card_due", "deadline", deadline, day=day(due_day))
    said = {"title": new["title"], "text": new["description"]}
    c.say(*c.variants("card.say", column=column, board=name, who=who, day=day(due_day), **said))
    if listed_too:
        c.say(listed_too)


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
    title, moved = chosen["title"], new_day.isoformat()
    c.subgoal("reschedule", title=title)
    found = c.step("overdue", TB + "search_cards", {"overdue_only": True})
    ref = found.ref(f"cards[title={title}].card_id")
    c.step("card", TB + "get_card", {"card_id": ref}, title=title)
    c.step("new_due", TB + "set_due_date", {"card_id": ref, "due": due}, title=title)
    noted = {"card_id": ref, "text": dictated(c.text("overdue.comment", date=moved))}
    c.step("comment", TB + "add_comment", noted, title=title)
    deadline = {"kind": "deadline", "tool": TB + "set_due_date", "argument": "due", "value": f"{due}:00Z"}
    c.decide("new_due", "deadline", deadline, title=title, day=day(new_day))
    c.say(*c.variants("overdue.say", title=title, board=board, day=day(new_day), comment=noted["text"]))
    c.hint(c.text("overdue.hint", title=title, date=moved))
    c.report(c.text("overdue.report"), moved)
    c.facts.update(
        topic=c.text("overdue.topic", title=title),
        when=moved,
        summary=c.text("overdue.summary", title=title, board=board, date=moved),
    )


FOLLOWING_UP = tools(TB, "list_boards", "get_board", "create_card", "assign_member", "add_checklist")
RESCHEDULING = tools(TB, "search_cards", "get_card", "set_due_date", "add_comment")
BLOCKS = [
    follow_up("card", APP, FOLLOWING_UP, card, needs="topic when summary"),
    anchor("overdue", APP, RESCHEDULING, overdue, gives="topic summary when future"),
]
