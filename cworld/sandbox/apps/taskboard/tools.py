"""The task board's board, list and card tools."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from cworld.sandbox.apps._shared.records import Page, PageSize, paginate, paginate_in_order
from cworld.sandbox.apps._shared.values import iso, matches, parse_iso, parse_moment
from cworld.sandbox.apps.taskboard import state as tb
from cworld.sandbox.apps.taskboard.models import (
    Board,
    BoardId,
    BoardList,
    BoardSummary,
    Card,
    CardId,
    CardPage,
    CardSummary,
    Checklist,
    ChecklistItem,
    Label,
    ListId,
    ListInfo,
    Member,
    Position,
    Title,
)
from cworld.sandbox.framework import AppError, SandboxApp, tool
from cworld.sandbox.framework.journal import for_reading

Due = Annotated[str, Field(description="due time as YYYY-MM-DDTHH:MM (UTC)", min_length=10, max_length=25)]


class TaskboardTools(SandboxApp):
    """Tools of the taskboard app (a mixin of `TaskboardApp`)."""

    # --- boards and lists ---------------------------------------------------------------
    @tool(read_only=True)
    def list_boards(self, page: Page = 1, page_size: PageSize = 20) -> BoardList:
        """The boards you belong to, with your role on each and how many open cards they hold (20 a page by
        default)."""
        chunk, meta = paginate_in_order(self.state["boards"].items(), page, page_size)
        return BoardList(boards=[BoardSummary(board_id=b, name=v["name"], your_role=tb.role(self, b),
                                              open_cards=self._open_in("board_id", b)) for b, v in chunk], **meta)

    @tool(read_only=True)
    def get_board(self, board_id: BoardId) -> Board:
        """A board's lists (with list ids), labels (with label ids) and members (with member ids and roles)."""
        board = tb.board(self, board_id)
        lists = sorted(self.keys_where("lists", board_id=board_id), key=lambda lid: self.state["lists"][lid]["position"])
        members = self.state["members"]
        return Board(board_id=board_id, name=board["name"], description=board["description"],
                     your_role=tb.role(self, board_id),
                     lists=[ListInfo(list_id=lid, name=self.state["lists"][lid]["name"],
                                     open_cards=self._open_in("list_id", lid),
                                     archived=self.state["lists"][lid]["archived"]) for lid in lists],
                     labels=[Label(label_id=k, **v) for k, v in board["labels"].items()],
                     members=[Member(member_id=m, name=members[m]["name"], username=members[m]["username"], role=r)
                              for m, r in board["roles"].items()])

    @tool(read_only=False)
    def create_list(
        self, board_id: BoardId, name: Annotated[str, Field(description="list name", min_length=1, max_length=60)]
    ) -> ListInfo:
        """Add a list at the right end of a board."""
        tb.board(self, board_id)
        tb.require_edit(self, board_id)
        lists = for_reading(self.state["lists"])
        last = max((lists[k]["position"] for k in self.keys_where("lists", board_id=board_id)), default=0)
        list_id = self.new_id("lst")
        self.state["lists"][list_id] = {"board_id": board_id, "name": name.strip(), "position": last + 1,
                                        "archived": False}
        return ListInfo(list_id=list_id, name=name.strip(), open_cards=0, archived=False)

    # --- cards: reading -----------------------------------------------------------------
    @tool(read_only=True)
    def list_cards(
        self,
        board_id: BoardId,
        list_id: Annotated[str | None, Field(description="only this list (id from get_board)", max_length=40)] = None,
        include_archived: Annotated[bool, Field(description="also show archived cards")] = False,
        page: Page = 1,
        page_size: PageSize = 10,
    ) -> CardPage:
        """Cards of a board (or one of its lists) in board order, paginated."""
        tb.board(self, board_id)
        if list_id is not None and tb.task_list(self, list_id)["board_id"] != board_id:
            raise AppError("invalid", f"list {list_id} is not on board {board_id}: get_board shows its lists")
        cards = self.state["cards"]
        ids = [c for c in self._ordered(self.keys_where("cards", board_id=board_id))
               if list_id in (None, cards[c]["list_id"]) and (include_archived or not cards[c]["archived"])]
        chunk, meta = paginate(ids, page, page_size)
        return CardPage(cards=[self._summary(c) for c in chunk], **meta)

    @tool(read_only=True)
    def search_cards(
        self,
        query: Annotated[str, Field(description="words to find in titles and descriptions; empty matches all",
                                    max_length=200)] = "",
        board_id: Annotated[str | None, Field(description="only this board", max_length=40)] = None,
        member_id: Annotated[str | None, Field(description="only cards assigned to this member id",
                                               max_length=40)] = None,
        overdue_only: Annotated[bool, Field(description="only cards whose due date has passed, not complete")]
        = False,
        include_archived: Annotated[bool, Field(description="also search archived cards")] = False,
        page: Page = 1,
        page_size: PageSize = 10,
    ) -> CardPage:
        """Search cards across your boards by words, member and overdue status, paginated."""
        if board_id is not None:
            tb.board(self, board_id)
        hits = []
        on_board = {"board_id": board_id} if board_id is not None else {}
        for c in self._ordered(self.keys_matching("cards", query, ("title", "description"), **on_board)):
            v = self.state["cards"][c]
            if (matches(query, v["title"], v["description"]) and board_id in (None, v["board_id"])
                    and member_id in (None, *v["members"]) and (include_archived or not v["archived"])
                    and (not overdue_only or self._overdue(v))):
                hits.append(c)
        chunk, meta = paginate(hits, page, page_size)
        return CardPage(cards=[self._summary(c) for c in chunk], **meta)

    @tool(read_only=True)
    def get_card(self, card_id: CardId) -> Card:
        """Everything on a card: description, due date, labels, members, checklists (with item ids), comments
        count."""
        v = tb.card(self, card_id)
        lists = for_reading(self.state["checklists"])
        checklists = [Checklist(checklist_id=k, name=lists[k]["name"], items=[ChecklistItem(**i) for i in lists[k]["items"]])
                      for k in self.keys_where("checklists", card_id=card_id)]
        comments = self.count("comments", card_id=card_id)
        return Card(**self._summary(card_id).model_dump(), description=v["description"], checklists=checklists,
                    comments=comments, created_at=v["created_at"], updated_at=v["updated_at"])

    # --- cards: writing -----------------------------------------------------------------
    @tool(read_only=False)
    def create_card(
        self,
        list_id: ListId,
        title: Title,
        description: Annotated[str, Field(description="card description", max_length=4000)] = "",
        due: Annotated[str | None, Field(description="due time as YYYY-MM-DDTHH:MM (UTC), in the future",
                                         max_length=25)] = None,
        position: Position = "bottom",
    ) -> Card:
        """Create a card on a list (list id from get_board)."""
        found = self._open_list(list_id)
        tb.require_edit(self, found["board_id"])
        due_at = self._future(due) if due is not None else None
        card_id = self.new_id("crd")
        self.state["cards"][card_id] = {
            "board_id": found["board_id"], "list_id": list_id, "title": title.strip(), "description": description,
            "position": self._slot(list_id, position), "due": due_at, "due_complete": False, "labels": [],
            "members": [], "archived": False, "created_at": iso(self.now), "updated_at": iso(self.now)}
        return self.get_card(card_id)

    @tool(read_only=False, destructive=True, idempotent=True)
    def update_card(
        self,
        card_id: CardId,
        title: Annotated[str | None, Field(description="new title", min_length=1, max_length=200)] = None,
        description: Annotated[str | None, Field(description="new description (replaces the old one)",
                                                 max_length=4000)] = None,
    ) -> Card:
        """Change a card's title and/or description."""
        card = tb.writable_card(self, card_id)
        if title is None and description is None:
            raise AppError("invalid", "give a new title, a new description, or both")
        if title is not None:
            card["title"] = title.strip()
        if description is not None:
            card["description"] = description
        tb.touch(self, card)
        return self.get_card(card_id)

    @tool(read_only=False, destructive=True, idempotent=True)
    def move_card(self, card_id: CardId, list_id: ListId, position: Position = "bottom") -> Card:
        """Move a card to another list of the same board (by list id from get_board, not the list's name)."""
        card = tb.writable_card(self, card_id)
        target = self._open_list(list_id)
        if target["board_id"] != card["board_id"]:
            raise AppError("invalid", f"list {list_id} is on another board: cards move within their board "
                                      f"({card['board_id']}); get_board shows its lists")
        ordered = self._ordered(self.keys_where("cards", list_id=list_id))
        already = ordered and ordered[0 if position == "top" else -1] == card_id
        if not already:
            card["list_id"] = list_id
            card["position"] = self._slot(list_id, position)
            tb.touch(self, card)
        return self.get_card(card_id)

    @tool(read_only=False, destructive=True, idempotent=True)
    def set_due_date(
        self,
        card_id: CardId,
        due: Annotated[Due | None, Field(description="new due time (UTC, in the future); null removes it")],
    ) -> Card:
        """Set, move or remove a card's due date (a new due date also clears its complete mark)."""
        card = tb.writable_card(self, card_id)
        new_due = self._future(due) if due is not None else None
        if card["due"] != new_due:
            card["due"], card["due_complete"] = new_due, False
            tb.touch(self, card)
        return self.get_card(card_id)

    @tool(read_only=False, destructive=True, idempotent=True)
    def mark_due_complete(
        self, card_id: CardId, complete: Annotated[bool, Field(description="true: done; false: not done")] = True
    ) -> Card:
        """Mark a card's due date as complete (or not), which stops it counting as overdue."""
        card = tb.writable_card(self, card_id)
        if card["due"] is None:
            raise AppError("precondition", f"card {card_id} has no due date: set one with set_due_date first")
        if card["due_complete"] != complete:
            card["due_complete"] = complete
            tb.touch(self, card)
        return self.get_card(card_id)

    # --- helpers ------------------------------------------------------------------------
    def _ordered(self, keys: list[str]) -> list[str]:
        """Cards (`keys`, which the indexes found) in board order."""
        lists = for_reading(self.state["lists"])
        cards = for_reading(self.state["cards"])
        return sorted(keys, key=lambda c: (cards[c]["board_id"], lists[cards[c]["list_id"]]["position"],
                                           cards[c]["position"], c))

    def _open_list(self, list_id: str) -> dict[str, Any]:
        found = tb.task_list(self, list_id)
        if found["archived"]:
            raise AppError("conflict", f"list {list_id} is archived: pick an open list from get_board")
        return found

    def _slot(self, list_id: str, position: str) -> float:
        cards = for_reading(self.state["cards"])
        spots = [cards[k]["position"] for k in self.keys_where("cards", list_id=list_id)]
        if not spots:
            return 1.0
        return min(spots) - 1 if position == "top" else max(spots) + 1

    def _future(self, text: str) -> str:
        moment = parse_moment(text, "due")
        if moment <= self.now:
            raise AppError("invalid", f"due {text} is in the past (now is {iso(self.now)}): give a later time")
        return iso(moment)

    def _overdue(self, v: dict[str, Any]) -> bool:
        return bool(v["due"]) and not v["due_complete"] and not v["archived"] and parse_iso(v["due"]) <= self.now

    def _open_in(self, by: Literal["board_id", "list_id"], value: str) -> int:
        """Cards not archived on one board or list (from the index's bucket)."""
        return self.count("cards", **{by: value, "archived": False})

    def _summary(self, card_id: str) -> CardSummary:
        v = self.state["cards"][card_id]
        labels = self.state["boards"][v["board_id"]]["labels"]
        return CardSummary(card_id=card_id, title=v["title"], board_id=v["board_id"], list_id=v["list_id"],
                           list_name=self.state["lists"][v["list_id"]]["name"], due=v["due"],
                           due_complete=v["due_complete"], overdue=self._overdue(v),
                           labels=[labels[x]["name"] for x in v["labels"]], members=list(v["members"]),
                           archived=v["archived"])
