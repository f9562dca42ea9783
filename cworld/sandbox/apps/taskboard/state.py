"""The task board's seeded start state and the lookups and permission checks every tool shares.

Boards are the seeded world's projects (`framework.world` topics) and members are its people, so the
"Apollo migration" board and its members are the ones mail and chat talk about. Your role differs per
board: admin on the first, normal member on the second, observer on the third. Messy on purpose: each
board has overdue cards, and the first holds a duplicate of a card that is in progress.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from cworld.sandbox.apps._shared.records import lookup
from cworld.sandbox.apps._shared.values import iso, later, parse_iso
from cworld.sandbox.framework import AppError, SandboxApp, kb, world
from cworld.sandbox.framework.journal import for_reading

LISTS = ("Backlog", "To do", "In progress", "Review", "Done")
LABELS = (("urgent", "red"), ("blocked", "orange"), ("quick win", "green"), ("needs review", "purple"))
MY_ROLES = ("admin", "normal", "observer")
ELEVATION_MINUTES = 10
WORDS = ("amber", "cobalt", "harbor", "juniper", "maple", "orbit", "quartz", "saffron", "tundra", "willow")


def seed_state(app: SandboxApp, rng: random.Random) -> dict[str, Any]:
    cast = world.cast(app.session.seed)
    me, team = cast["me"], rng.sample(cast["colleagues"], 9)
    state: dict[str, Any] = {
        "me": me["id"],
        "auth": {"password": f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{rng.randrange(10, 99)}",
                 "confirmed_until": None},
        "members": {p["id"]: {"name": p["name"], "username": world.slug(p["first"]) + world.slug(p["last"])[:1],
                              "email": p["email"]} for p in [me, *team]},
        "boards": {}, "lists": {}, "cards": {}, "checklists": {}, "comments": {},
    }
    for topic, my_role in zip(cast["topics"][:3], MY_ROLES, strict=True):
        _board(app, rng, state, topic, my_role, rng.sample(team, 6))
    _duplicate(app, state)
    return state


def _board(app: SandboxApp, rng: random.Random, state: dict[str, Any], topic: dict[str, Any], my_role: str,
           people: list[dict[str, Any]]) -> None:
    board_id = app.new_id("brd")
    roles = {state["me"]: my_role, people[0]["id"]: "admin", **{p["id"]: "normal" for p in people[1:]}}
    labels = {app.new_id("lbl"): {"name": n, "color": c} for n, c in LABELS}
    state["boards"][board_id] = {"name": topic["project"], "description": f"Tasks, owners and deadlines for the {topic['project'].lower()}.",
                                 "roles": roles, "labels": labels, "created_at": later(app.now, days=-60)}
    list_ids = []
    for n, name in enumerate(LISTS):
        list_ids.append(app.new_id("lst"))
        state["lists"][list_ids[-1]] = {"board_id": board_id, "name": name, "position": n + 1, "archived": False}
    by_topic = {r["topic"]: r["cards"] for r in kb.load("board_cards")}
    templates = by_topic.get(topic["key"], by_topic["generic"])  # a topic without its own cards gets generic work
    open_cards = []
    for n, template in enumerate(templates):
        stage = rng.choice((0, 1, 1, 2, 2, 3, 4, 4))
        card_id = _card(app, rng, state, board_id, list_ids[stage], template, n, list(roles), list(labels))
        if stage < 4:
            open_cards.append(card_id)
        _checklist(app, rng, state, card_id, template["checklist"], stage)
        if rng.random() < 0.4:
            author = rng.choice(sorted(roles))
            state["comments"][app.new_id("cmt")] = {"card_id": card_id, "author": author, "at": later(
                app.now, days=-rng.randrange(1, 10)), "text": rng.choice(_COMMENTS)}
    for card_id in rng.sample(open_cards, min(2, len(open_cards))):  # work that slipped past its due date
        state["cards"][card_id]["due"] = later(app.now, days=-rng.randrange(1, 8), hours=-rng.randrange(1, 9))


_COMMENTS = ("Any update on this?", "I can pick this up next week.", "Blocked until we hear back from legal.",
             "Draft is ready for review.", "Moved the deadline, see the thread.", "Done on my side.")


def _card(app: SandboxApp, rng: random.Random, state: dict[str, Any], board_id: str, list_id: str,
          template: dict[str, Any], n: int, people: list[str], labels: list[str]) -> str:
    created = later(app.now, days=-rng.randrange(10, 50))
    due = None
    if rng.random() < 0.5:
        due = later(app.now, days=rng.randrange(2, 25), hours=rng.randrange(0, 8))
    card_id = app.new_id("crd")
    state["cards"][card_id] = {
        "board_id": board_id, "list_id": list_id, "title": template["title"],
        "description": f"{template['title']}.", "position": float(n + 1), "due": due,
        "due_complete": state["lists"][list_id]["name"] == "Done" and due is not None,
        "labels": sorted(rng.sample(labels, rng.choice((0, 0, 1, 1, 2)))),
        "members": sorted(rng.sample(people, rng.choice((0, 1, 1, 2)))),
        "archived": False, "created_at": created, "updated_at": created}
    return card_id


def _checklist(app: SandboxApp, rng: random.Random, state: dict[str, Any], card_id: str, items: list[str],
               stage: int) -> None:
    if not items:
        return
    checklist_id = app.new_id("chk")
    done = len(items) if stage == 4 else rng.randrange(0, len(items)) if stage >= 2 else 0
    state["checklists"][checklist_id] = {"card_id": card_id, "name": "Steps", "items": [
        {"item_id": f"{checklist_id}.{i + 1}", "text": text, "done": i < done} for i, text in enumerate(items)]}


def _duplicate(app: SandboxApp, state: dict[str, Any]) -> None:
    """Someone re-created a card instead of finding it: same title, newer, empty, in To do."""
    first_board = next(iter(state["boards"]))
    lists = {state["lists"][lid]["name"]: lid for lid in state["lists"] if state["lists"][lid]["board_id"] == first_board}
    cards = [c for c, v in state["cards"].items() if v["board_id"] == first_board]
    original = max(cards, key=lambda c: (any(k["card_id"] == c for k in state["checklists"].values()), c))
    copy = {**state["cards"][original], "list_id": lists["To do"], "members": [], "labels": [], "due": None,
            "due_complete": False, "position": 99.0, "created_at": later(app.now, days=-1),
            "updated_at": later(app.now, days=-1)}
    state["cards"][app.new_id("crd")] = copy


# --- lookups and permissions ------------------------------------------------------------------
def lower_name(task_list: dict[str, Any]) -> list[str]:
    """A list's name, case aside: the index a list named where its id was expected is found in."""
    return [task_list["name"].lower()]


def board(app: SandboxApp, board_id: str) -> dict[str, Any]:
    return lookup(app.state["boards"], board_id, f"no board '{board_id}': list_boards shows board ids")


def task_list(app: SandboxApp, list_id: str) -> dict[str, Any]:
    found = app.state["lists"].get(list_id)
    if found is not None:
        return found
    lists = for_reading(app.state["lists"])
    named = [f"{lid} on {app.state['boards'][lists[lid]['board_id']]['name']}"
             for lid in app.keys_having("lists", lower_name, list_id.strip().lower())]
    if named:
        raise AppError("not_found", f"'{list_id}' is a list name, not an id: lists with that name are "
                                    f"{'; '.join(named)} (get_board shows them)")
    raise AppError("not_found", f"no list '{list_id}': get_board shows the list ids of a board")


def card(app: SandboxApp, card_id: str) -> dict[str, Any]:
    return lookup(app.state["cards"], card_id,
                  f"no card '{card_id}': list_cards or search_cards give card ids")


def role(app: SandboxApp, board_id: str) -> str:
    return str(app.state["boards"][board_id]["roles"].get(app.state["me"], "none"))


def admins(app: SandboxApp, board_id: str) -> str:
    members = app.state["members"]
    return ", ".join(members[m]["name"] for m, r in app.state["boards"][board_id]["roles"].items()
                     if r == "admin" and m != app.state["me"]) or "nobody else"


def require_edit(app: SandboxApp, board_id: str) -> None:
    if role(app, board_id) not in ("admin", "normal"):
        name = app.state["boards"][board_id]["name"]
        raise AppError("permission_denied", f"you are an observer on '{name}' and cannot change it: ask an admin "
                                            f"({admins(app, board_id)}) to make you a member")


def require_admin(app: SandboxApp, board_id: str, action: str) -> None:
    """Admin role on the board, and an identity confirmed in the last 10 minutes (confirm_identity)."""
    if role(app, board_id) != "admin":
        name = app.state["boards"][board_id]["name"]
        raise AppError("permission_denied", f"{action} needs the admin role on '{name}' (you are "
                                            f"{role(app, board_id)}): ask an admin ({admins(app, board_id)})")
    until = app.state["auth"]["confirmed_until"]
    if until is None or parse_iso(until) <= app.now:
        raise AppError("auth", f"{action} needs a recent identity confirmation: call confirm_identity with your "
                               "password, then retry")


def writable_card(app: SandboxApp, card_id: str) -> dict[str, Any]:
    found = card(app, card_id)
    require_edit(app, found["board_id"])
    if found["archived"]:
        raise AppError("conflict", f"card {card_id} is archived and cannot be changed")
    return found


def filed(card: dict[str, Any]) -> tuple[tuple[str, bool]]:
    """The (list, archived) a card is filed under for reading a board in order (`index.py`'s groups)."""
    return ((card["list_id"], card["archived"]),)


def touch(app: SandboxApp, found: dict[str, Any]) -> None:
    found["updated_at"] = iso(app.now)


def attach(app: SandboxApp, found: dict[str, Any], field: str, item_id: str) -> None:
    """Put a label or member id on a card once (kept sorted); already there: nothing changes."""
    if item_id not in found[field]:
        found[field] = sorted([*found[field], item_id])
        touch(app, found)


def elevate(app: SandboxApp) -> str:
    until = iso(app.now + timedelta(minutes=ELEVATION_MINUTES))
    app.state["auth"]["confirmed_until"] = until
    return until
