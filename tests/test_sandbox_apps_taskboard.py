"""Task board app: list names vs ids, roles per board, admin actions behind confirm_identity, due dates by the
virtual clock, labels/members/checklists by id, honest pages, and business errors that change nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sandbox_results import err, ok

from cworld.sandbox.apps.taskboard import TaskboardApp
from cworld.sandbox.framework import SandboxSession
from cworld.sandbox.framework.server import SandboxServer, build_server
from cworld.sandbox.framework.world import cast

SEED = 9


@pytest.fixture
def board() -> SandboxServer:
    return build_server(SandboxSession(seed=SEED, apps=[TaskboardApp]), "taskboard")


def boards_by_role(server: SandboxServer) -> dict[str, str]:
    return {b["your_role"]: b["board_id"] for b in ok(server.call_tool_sync("list_boards", {}))["boards"]}


def lists_of(server: SandboxServer, board_id: str) -> dict[str, str]:
    return {x["name"]: x["list_id"] for x in ok(server.call_tool_sync("get_board", {"board_id": board_id}))["lists"]}


def first_card(server: SandboxServer, board_id: str) -> dict[str, Any]:
    return ok(server.call_tool_sync("list_cards", {"board_id": board_id, "page_size": 1}))["cards"][0]


def test_seeded_state_is_messy(board: SandboxServer) -> None:
    roles = boards_by_role(board)
    assert set(roles) == {"admin", "normal", "observer"}
    names = {b["name"] for b in ok(board.call_tool_sync("list_boards", {}))["boards"]}
    assert names == {t["project"] for t in cast(SEED)["topics"][:3]}, "boards are the world's projects"
    overdue = ok(board.call_tool_sync("search_cards", {"overdue_only": True, "page_size": 50}))["cards"]
    assert {c["board_id"] for c in overdue} == set(roles.values()) and all(c["overdue"] for c in overdue)
    cards = ok(board.call_tool_sync("list_cards", {"board_id": roles["admin"], "page_size": 50}))["cards"]
    titles = [c["title"] for c in cards]
    duplicated = {t for t in titles if titles.count(t) > 1}
    assert len(duplicated) == 1
    twins = [c for c in cards if c["title"] in duplicated]
    assert {c["list_name"] for c in twins} >= {"To do"}


def test_move_card_needs_the_list_id(board: SandboxServer) -> None:
    roles = boards_by_role(board)
    card = first_card(board, roles["admin"])
    text = err(board.call_tool_sync("move_card", {"card_id": card["card_id"], "list_id": "Done"}), "not_found")
    assert "list name" in text and text.count("lst_") == 3
    done = lists_of(board, roles["admin"])["Done"]
    moved = ok(board.call_tool_sync("move_card", {"card_id": card["card_id"], "list_id": done, "position": "top"}))
    assert moved["list_name"] == "Done"
    assert ok(board.call_tool_sync("list_cards", {"board_id": roles["admin"], "list_id": done}))["cards"][0][
        "card_id"] == card["card_id"]
    assert ok(board.call_tool_sync("move_card", {"card_id": card["card_id"], "list_id": done, "position": "top"})
              )["updated_at"] == moved["updated_at"], "moving to where it already is changes nothing"
    other_done = lists_of(board, roles["normal"])["Done"]
    err(board.call_tool_sync("move_card", {"card_id": card["card_id"], "list_id": other_done}), "invalid")


def test_archiving_needs_admin_role_and_a_fresh_identity_check(board: SandboxServer) -> None:
    roles = boards_by_role(board)
    card = first_card(board, roles["admin"])["card_id"]
    assert "confirm_identity" in err(board.call_tool_sync("archive_card", {"card_id": card}), "auth")
    err(board.call_tool_sync("confirm_identity", {"password": "guess"}), "auth")
    password = board.session.state["taskboard"]["auth"]["password"]
    ok(board.call_tool_sync("confirm_identity", {"password": password}))
    assert ok(board.call_tool_sync("archive_card", {"card_id": card}))["cards_archived"] == 1
    assert ok(board.call_tool_sync("get_card", {"card_id": card}))["archived"]
    ok(board.call_tool_sync("archive_card", {"card_id": card}))
    err(board.call_tool_sync("add_comment", {"card_id": card, "text": "late"}), "conflict")
    other = first_card(board, roles["normal"])["card_id"]
    text = err(board.call_tool_sync("archive_card", {"card_id": other}), "permission_denied")
    assert "admin" in text
    board.session.clock.advance(11 * 60)
    review = lists_of(board, roles["admin"])["Review"]
    err(board.call_tool_sync("archive_list", {"list_id": review}), "auth")
    ok(board.call_tool_sync("confirm_identity", {"password": password}))
    open_cards = ok(board.call_tool_sync("list_cards", {"board_id": roles["admin"], "list_id": review}))["total"]
    assert ok(board.call_tool_sync("archive_list", {"list_id": review}))["cards_archived"] == open_cards
    err(board.call_tool_sync("create_card", {"list_id": review, "title": "x"}), "conflict")


def test_roles_limit_what_you_may_change(board: SandboxServer) -> None:
    roles = boards_by_role(board)
    watched = first_card(board, roles["observer"])["card_id"]
    text = err(board.call_tool_sync("add_comment", {"card_id": watched, "text": "+1"}), "permission_denied")
    assert "observer" in text
    ok(board.call_tool_sync("add_comment", {"card_id": first_card(board, roles["normal"])["card_id"], "text": "+1"}))
    info = ok(board.call_tool_sync("get_board", {"board_id": roles["admin"]}))
    outsider = next(m for m in board.session.state["taskboard"]["members"]
                    if m not in {x["member_id"] for x in info["members"]})
    ok(board.call_tool_sync("confirm_identity", {"password": board.session.state["taskboard"]["auth"]["password"]}))
    added = ok(board.call_tool_sync("set_member_role", {"board_id": roles["admin"], "member_id": outsider,
                                                        "role": "normal"}))
    assert added["role"] == "normal"
    card = first_card(board, roles["admin"])["card_id"]
    ok(board.call_tool_sync("assign_member", {"card_id": card, "member_id": outsider}))
    err(board.call_tool_sync("set_member_role", {"board_id": roles["normal"], "member_id": outsider,
                                                 "role": "normal"}), "permission_denied")


def test_due_dates_follow_the_virtual_clock(board: SandboxServer) -> None:
    card = first_card(board, boards_by_role(board)["admin"])["card_id"]
    now = board.session.clock.now()
    err(board.call_tool_sync("set_due_date", {"card_id": card, "due": "2001-01-01T09:00"}), "invalid")
    err(board.call_tool_sync("set_due_date", {"card_id": card, "due": "tomorrow at 9"}), "invalid")
    due = (now + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M")
    card_after = ok(board.call_tool_sync("set_due_date", {"card_id": card, "due": due}))
    assert card_after["due"] == f"{due}:00Z" and not card_after["overdue"]
    board.session.clock.advance(3 * 3600)
    overdue = ok(board.call_tool_sync("search_cards", {"overdue_only": True, "page_size": 50}))["cards"]
    assert card in [c["card_id"] for c in overdue]
    done = ok(board.call_tool_sync("mark_due_complete", {"card_id": card}))
    assert done["due_complete"] and not done["overdue"]
    ok(board.call_tool_sync("set_due_date", {"card_id": card, "due": None}))
    assert "set_due_date" in err(board.call_tool_sync("mark_due_complete", {"card_id": card}), "precondition")


def test_labels_members_checklists_and_comments_by_id(board: SandboxServer) -> None:
    admin = boards_by_role(board)["admin"]
    info = ok(board.call_tool_sync("get_board", {"board_id": admin}))
    card = first_card(board, admin)["card_id"]
    err(board.call_tool_sync("add_label", {"card_id": card, "label_id": "urgent"}), "not_found")
    urgent = next(x["label_id"] for x in info["labels"] if x["name"] == "urgent")
    ok(board.call_tool_sync("add_label", {"card_id": card, "label_id": urgent}))
    assert ok(board.call_tool_sync("get_card", {"card_id": card}))["labels"].count("urgent") == 1
    ok(board.call_tool_sync("add_label", {"card_id": card, "label_id": urgent}))
    assert ok(board.call_tool_sync("get_card", {"card_id": card}))["labels"].count("urgent") == 1
    err(board.call_tool_sync("create_label", {"board_id": admin, "name": "URGENT", "color": "red"}), "conflict")
    err(board.call_tool_sync("assign_member", {"card_id": card, "member_id": "person_999"}), "not_found")
    created = ok(board.call_tool_sync("add_checklist", {"card_id": card, "name": "QA", "items": ["a", "b"]}))
    item = created["items"][1]["item_id"]
    ticked = ok(board.call_tool_sync("set_checklist_item", {"card_id": card, "item_id": item}))
    assert [i["done"] for i in ticked["items"]] == [False, True]
    err(board.call_tool_sync("set_checklist_item", {"card_id": card, "item_id": "chk_9999.1"}), "not_found")
    for n in range(3):
        ok(board.call_tool_sync("add_comment", {"card_id": card, "text": f"note {n}"}))
    pages = [ok(board.call_tool_sync("list_comments", {"card_id": card, "page": p, "page_size": 2})) for p in (1, 2)]
    assert pages[0]["has_more"] and not pages[1]["has_more"] and pages[0]["comments"][0]["text"] == "note 2"
    assert pages[0]["total"] == len(pages[0]["comments"]) + len(pages[1]["comments"])


def test_search_pages_are_honest(board: SandboxServer) -> None:
    seen, page = [], 1
    while True:
        result = ok(board.call_tool_sync("search_cards", {"page": page, "page_size": 4}))
        seen += [c["card_id"] for c in result["cards"]]
        if not result["has_more"]:
            break
        page += 1
    open_cards = [c for c, v in board.session.state["taskboard"]["cards"].items() if not v["archived"]]
    assert sorted(seen) == sorted(open_cards) and len(seen) == result["total"]
    admin = boards_by_role(board)["admin"]
    word = first_card(board, admin)["title"].split()[0]
    hits = ok(board.call_tool_sync("search_cards", {"query": word.upper(), "board_id": admin}))["cards"]
    cards = board.session.state["taskboard"]["cards"]
    assert hits and all(c["board_id"] == admin for c in hits)
    assert all(word.lower() in (cards[c["card_id"]]["title"] + cards[c["card_id"]]["description"]).lower()
               for c in hits)


def test_a_boards_lists_and_a_cards_checklists_page(board: SandboxServer) -> None:
    """get_board pages its lists in board order and get_card its checklists in the order they were added; the
    page fields count them, so a board of many lists answers a page."""
    admin = boards_by_role(board)["admin"]
    for n in range(4):
        ok(board.call_tool_sync("create_list", {"board_id": admin, "name": f"Extra {n}"}))
    lists = board.session.state["taskboard"]["lists"]
    in_order = sorted((k for k, v in lists.items() if v["board_id"] == admin), key=lambda k: lists[k]["position"])
    seen, page = [], 1
    while True:
        answer = ok(board.call_tool_sync("get_board", {"board_id": admin, "page": page, "page_size": 3}))
        assert answer["total"] == len(in_order) and answer["labels"] and answer["members"]
        seen += [x["list_id"] for x in answer["lists"]]
        if not answer["has_more"]:
            break
        page += 1
    assert seen == in_order and page == 3
    card = first_card(board, admin)["card_id"]
    made = [ok(board.call_tool_sync("add_checklist", {"card_id": card, "name": f"c{n}", "items": ["x"]}))["checklist_id"]
            for n in range(3)]
    every = [k for k, v in board.session.state["taskboard"]["checklists"].items() if v["card_id"] == card]
    assert every[-3:] == made
    second = ok(board.call_tool_sync("get_card", {"card_id": card, "page": 2, "page_size": 2}))
    assert [c["checklist_id"] for c in second["checklists"]] == every[2:4]
    assert second["total"] == len(every) and second["has_more"] == (len(every) > 4)


def board_order(state: dict[str, Any], cards: list[str]) -> list[str]:
    lists, records = state["lists"], state["cards"]
    return sorted(cards, key=lambda c: (records[c]["board_id"], lists[records[c]["list_id"]]["position"],
                                        records[c]["position"], c))


def every_page(server: SandboxServer, tool: str, arguments: dict[str, Any]) -> list[str]:
    seen, page = [], 1
    while True:
        answer = ok(server.call_tool_sync(tool, {**arguments, "page": page, "page_size": 7}))
        seen += [c["card_id"] for c in answer["cards"]]
        if not answer["has_more"]:
            assert answer["total"] == len(seen)
            return seen
        page += 1


def test_cards_read_in_board_order_where_lists_share_a_position(board: SandboxServer) -> None:
    """Lists that share a position interleave their cards by the cards' positions, as one sort of the board
    does; list_cards and search_cards page that order (read off the indexes, not a sort of every card)."""
    state = board.session.state["taskboard"]  # grown before any call, so the indexes are built over it
    admin = next(b for b, v in state["boards"].items() if v["roles"][state["me"]] == "admin")
    own = [k for k, v in state["lists"].items() if v["board_id"] == admin]
    for n, lid in enumerate(own):  # a twin of each list at the same position, holding every other card of it
        state["lists"][f"lst_9{n:03d}"] = {**state["lists"][lid], "name": f"Twin {n}"}
        for m, c in enumerate(k for k, v in list(state["cards"].items()) if v["list_id"] == lid):
            state["cards"][c]["list_id"] = f"lst_9{n:03d}" if m % 2 else lid
            state["cards"][c]["archived"] = m % 3 == 2
            state["cards"][c]["position"] = float(-((m + 1) // 2))  # against the ids' order, with a tie
    cards = state["cards"]
    for archived in (False, True):
        chosen = [c for c, v in cards.items() if v["board_id"] == admin and (archived or not v["archived"])]
        assert every_page(board, "list_cards", {"board_id": admin, "include_archived": archived}) \
            == board_order(state, chosen)
        anywhere = [c for c, v in cards.items() if archived or not v["archived"]]
        assert every_page(board, "search_cards", {"include_archived": archived}) == board_order(state, anywhere)


def test_business_errors_change_nothing(board: SandboxServer) -> None:
    roles = boards_by_role(board)
    card = first_card(board, roles["admin"])["card_id"]
    before = board.session.snapshot()
    failing = [
        ("move_card", {"card_id": card, "list_id": "Done"}),
        ("archive_card", {"card_id": card}),
        ("add_comment", {"card_id": first_card(board, roles["observer"])["card_id"], "text": "hi"}),
        ("set_due_date", {"card_id": card, "due": "1999-12-31T23:00"}),
        ("create_card", {"list_id": "lst_9999", "title": "x"}),
        ("update_card", {"card_id": card}),
    ]
    for name, args in failing:
        assert board.call_tool_sync(name, args).is_error, name
    assert board.session.snapshot() == before


def test_same_seed_same_state_other_seed_other_entities() -> None:
    one, two = SandboxSession(SEED, apps=[TaskboardApp]), SandboxSession(SEED, apps=[TaskboardApp])
    assert one.snapshot() == two.snapshot()
    other = SandboxSession(SEED + 1, apps=[TaskboardApp]).snapshot()["taskboard"]
    mine = one.snapshot()["taskboard"]
    assert other["members"] != mine["members"] and other["cards"] != mine["cards"]


def test_prerequisites_name_real_tools() -> None:
    names = {meta.name for meta, _ in TaskboardApp.tool_methods()}
    assert len(names) >= 12
    for edge in TaskboardApp.prerequisites:
        assert {edge.before, edge.after} <= names, edge
    assert any(e.before == "confirm_identity" and e.after == "archive_card" for e in TaskboardApp.prerequisites)
