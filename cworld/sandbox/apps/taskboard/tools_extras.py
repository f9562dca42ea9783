"""The task board's card details and admin tools, as a base class of `TaskboardApp`: labels, members,
checklists, comments, identity confirmation, archiving and roles.

Archiving and role changes need the admin role on the board and an identity confirmed within the last
10 virtual minutes (`confirm_identity`), like the "sudo mode" of real collaboration tools.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from cworld.sandbox.apps._shared.records import Page, PageSize, lookup, paginate
from cworld.sandbox.apps._shared.values import iso
from cworld.sandbox.apps.taskboard import state as tb
from cworld.sandbox.apps.taskboard.models import (
    Archived,
    BoardId,
    CardId,
    Checklist,
    ChecklistItem,
    Comment,
    CommentPage,
    Elevation,
    Label,
    LabelId,
    ListId,
    Member,
    MemberId,
    Role,
)
from cworld.sandbox.framework import AppError, SandboxApp, tool
from cworld.sandbox.framework.index import BY_KEY

COLORS = ("red", "orange", "yellow", "green", "blue", "purple", "grey")


class ExtraTools(SandboxApp):
    """Labels, members, checklists, comments and the admin actions."""

    @tool(read_only=False)
    def create_label(
        self,
        board_id: BoardId,
        name: Annotated[str, Field(description="label name", min_length=1, max_length=40)],
        color: Annotated[str, Field(description=f"one of {', '.join(COLORS)}", max_length=20)] = "blue",
    ) -> Label:
        """Create a label on a board (label names are unique per board)."""
        board = tb.board(self, board_id)
        tb.require_edit(self, board_id)
        if color not in COLORS:
            raise AppError("invalid", f"color '{color}' is not one of {', '.join(COLORS)}")
        if any(v["name"].lower() == name.strip().lower() for v in board["labels"].values()):
            raise AppError("conflict", f"board already has a label '{name}': get_board shows its id")
        label_id = self.new_id("lbl")
        board["labels"][label_id] = {"name": name.strip(), "color": color}
        return Label(label_id=label_id, **board["labels"][label_id])

    @tool(read_only=False, idempotent=True)
    def add_label(self, card_id: CardId, label_id: LabelId) -> Label:
        """Put one of its board's labels on a card (by label id; already there: nothing changes)."""
        card = tb.writable_card(self, card_id)
        label = lookup(self.state["boards"][card["board_id"]]["labels"], label_id, f"no label '{label_id}' on "
                       "this card's board: get_board lists label ids (create_label makes a new one)")
        tb.attach(self, card, "labels", label_id)
        return Label(label_id=label_id, **label)

    @tool(read_only=False, idempotent=True)
    def assign_member(self, card_id: CardId, member_id: MemberId) -> Member:
        """Assign a board member to a card (by member id from get_board; already assigned: nothing changes)."""
        card = tb.writable_card(self, card_id)
        role = lookup(self.state["boards"][card["board_id"]]["roles"], member_id, f"'{member_id}' is not a "
                      "member of this card's board: get_board lists member ids")
        tb.attach(self, card, "members", member_id)
        person = self.state["members"][member_id]
        return Member(member_id=member_id, name=person["name"], username=person["username"], role=role)

    @tool(read_only=False)
    def add_checklist(
        self,
        card_id: CardId,
        name: Annotated[str, Field(description="checklist name", min_length=1, max_length=100)],
        items: Annotated[list[Annotated[str, Field(min_length=1, max_length=200)]],
                         Field(description="item texts, in order (up to 30)", max_length=30)],
    ) -> Checklist:
        """Add a checklist with items to a card."""
        tb.writable_card(self, card_id)
        checklist_id = self.new_id("chk")
        record = {"card_id": card_id, "name": name, "items": [
            {"item_id": f"{checklist_id}.{n + 1}", "text": text, "done": False} for n, text in enumerate(items)]}
        self.state["checklists"][checklist_id] = record
        return self._checklist(checklist_id)

    @tool(read_only=False, destructive=True, idempotent=True)
    def set_checklist_item(
        self,
        card_id: CardId,
        item_id: Annotated[str, Field(description="item id such as chk_0004.2, from get_card", max_length=40)],
        done: Annotated[bool, Field(description="true to tick the item, false to untick it")] = True,
    ) -> Checklist:
        """Tick or untick one checklist item on a card."""
        card = tb.writable_card(self, card_id)
        checklist_id = item_id.partition(".")[0]
        checklist = self.state["checklists"].get(checklist_id)
        item = next((i for i in checklist["items"] if i["item_id"] == item_id), None) if checklist else None
        if checklist is None or item is None or checklist["card_id"] != card_id:
            raise AppError("not_found", f"card {card_id} has no checklist item '{item_id}': get_card lists item ids")
        item["done"] = done
        tb.touch(self, card)
        return self._checklist(checklist_id)

    @tool(read_only=False)
    def add_comment(
        self, card_id: CardId, text: Annotated[str, Field(description="comment text", min_length=1, max_length=2000)]
    ) -> Comment:
        """Comment on a card as yourself."""
        card = tb.writable_card(self, card_id)
        comment_id = self.new_id("cmt")
        record = {"card_id": card_id, "author": self.state["me"], "text": text, "at": iso(self.now)}
        self.state["comments"][comment_id] = record
        tb.touch(self, card)
        return Comment(comment_id=comment_id, **record)

    @tool(read_only=True)
    def list_comments(self, card_id: CardId, page: Page = 1, page_size: PageSize = 10) -> CommentPage:
        """A card's comments, newest first, paginated (author is a member id)."""
        tb.card(self, card_id)
        comments = self.state["comments"]
        ids = self.ordered("comments", ("at", BY_KEY), reverse=True, keys=True, card_id=card_id)
        chunk, meta = paginate(ids, page, page_size)
        return CommentPage(comments=[Comment(comment_id=c, **comments[c]) for c in chunk], **meta)

    @tool(read_only=False)
    def confirm_identity(
        self, password: Annotated[str, Field(description="your account password", min_length=1, max_length=200)]
    ) -> Elevation:
        """Confirm your identity with your password before admin actions (archiving, changing roles); valid for
        10 minutes."""
        if password != self.state["auth"]["password"]:
            raise AppError("auth", "wrong password: check it and call confirm_identity again")
        return Elevation(confirmed_until=tb.elevate(self))

    @tool(read_only=False, destructive=True, idempotent=True)
    def archive_card(self, card_id: CardId) -> Archived:
        """Archive a card (hidden from lists and search; needs board admin and confirm_identity first)."""
        card = tb.card(self, card_id)
        tb.require_admin(self, card["board_id"], "archiving a card")
        if not card["archived"]:
            card["archived"] = True
            tb.touch(self, card)
        return Archived(archived_id=card_id, kind="card", cards_archived=1)

    @tool(read_only=False, destructive=True, idempotent=True)
    def archive_list(self, list_id: ListId) -> Archived:
        """Archive a list and every open card on it (needs board admin and confirm_identity first)."""
        found = tb.task_list(self, list_id)
        tb.require_admin(self, found["board_id"], "archiving a list")
        found["archived"] = True
        count = 0
        for card in self.where("cards", list_id=list_id):
            if not card["archived"]:
                card["archived"], count = True, count + 1
                tb.touch(self, card)
        return Archived(archived_id=list_id, kind="list", cards_archived=count)

    @tool(read_only=False, destructive=True, idempotent=True)
    def set_member_role(
        self, board_id: BoardId, member_id: MemberId, role: Annotated[Role, Field(description="the new role")]
    ) -> Member:
        """Add a person to a board or change their role (needs board admin and confirm_identity first)."""
        board = tb.board(self, board_id)
        tb.require_admin(self, board_id, "changing roles")
        person = self.state["members"].get(member_id)
        if person is None:
            raise AppError("not_found", f"no member '{member_id}' in this workspace: get_board lists member ids")
        if member_id == self.state["me"] and role != "admin":
            raise AppError("conflict", "you cannot demote yourself: ask another admin to do it")
        board["roles"][member_id] = role
        return Member(member_id=member_id, name=person["name"], username=person["username"], role=role)

    def _checklist(self, checklist_id: str) -> Checklist:
        c = self.state["checklists"][checklist_id]
        return Checklist(checklist_id=checklist_id, name=c["name"], items=[ChecklistItem(**i) for i in c["items"]])
