"""Task board (Trello-like): boards with lists of cards, labels, members, checklists, comments and due dates.

Tools take ids, never names: a list is named "Done" on every board, so `move_card` needs the list id from
`get_board`. What you may do depends on your role per board (observer: read only; normal: edit; admin:
also archive and change roles, after `confirm_identity`). Due dates are judged by the virtual clock.
"""

from __future__ import annotations

from cworld.sandbox.apps._shared.records import produces
from cworld.sandbox.apps.taskboard.state import seed_state
from cworld.sandbox.apps.taskboard.tools import TaskboardTools
from cworld.sandbox.apps.taskboard.tools_extras import ExtraTools
from cworld.sandbox.framework import Prerequisite


def _edges() -> tuple[Prerequisite, ...]:
    flows = [
        ("list_boards", "get_board", "board_id"), ("list_boards", "list_cards", "board_id"),
        ("get_board", "move_card", "list_id"), ("get_board", "create_card", "list_id"),
        ("get_board", "add_label", "label_id"), ("create_label", "add_label", "label_id"),
        ("get_board", "assign_member", "member_id"), ("get_board", "archive_list", "list_id"),
        ("list_cards", "get_card", "card_id"), ("search_cards", "get_card", "card_id"),
        ("search_cards", "move_card", "card_id"), ("get_card", "set_checklist_item", "item_id"),
        ("create_card", "add_checklist", "card_id"), ("list_boards", "create_list", "board_id"),
    ]
    produced = produces(flows)
    admin = [Prerequisite("confirm_identity", t, "requires", None, "admin actions need a confirmation within "
                                                                     "10 minutes") for t in
             ("archive_card", "archive_list", "set_member_role")]
    return (*produced, *admin)


class TaskboardApp(TaskboardTools, ExtraTools):
    name = "taskboard"
    volatile_paths = ("auth**", "comments.*.at")
    title = "Task board"
    description = ("Trello-like boards: lists of cards with due dates, labels, members, checklists and comments; "
                   "search, move, and (as board admin) archive.")
    category = "productivity"
    entity_kinds = {"boards": "board", "lists": "list", "cards": "card", "checklists": "checklist", "comments": "comment",
                    "members": "member"}
    prerequisites = _edges()

    initial_state = seed_state
