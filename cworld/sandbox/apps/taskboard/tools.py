"""The task board's board, list and card tools."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from itertools import groupby
from typing import Annotated, Any, Literal

from pydantic import Field

from cworld.sandbox.apps._shared.records import Page, PageSize, paginate, paginate_counted, paginate_in_order
from cworld.sandbox.apps._shared.values import iso, matches, norm, parse_iso, parse_moment
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
from cworld.sandbox.framework.index import BY_KEY
from cworld.sandbox.framework.journal import for_reading

Due = Annotated[str, Field(description="due time as YYYY-MM-DDTHH:MM (UTC)", min_length=10, max_length=25)]



def _members(card: dict[str, Any]) -> list[str]:
    """The members a card is assigned to (the group `search_cards` reads a member's cards from)."""
    return list(card["members"])

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
    def get_board(self, board_id: BoardId, page: Page = 1, page_size: PageSize = 20) -> Board:
        """A board's labels (with label ids), members (with member ids and roles) and lists (with list ids and
        open cards) in board order, the lists paged (20 a page by default; page, total and has_more count them)."""
        board = tb.board(self, board_id)
        chunk, meta = paginate(self.ordered("lists", ("position",), keys=True, board_id=board_id), page, page_size)
        lists = self.state["lists"]
        members = self.state["members"]
        return Board(board_id=board_id, name=board["name"], description=board["description"],
                     your_role=tb.role(self, board_id),
                     lists=[ListInfo(list_id=lid, name=lists[lid]["name"], open_cards=self._open_in("list_id", lid),
                                     archived=lists[lid]["archived"]) for lid in chunk],
                     labels=[Label(label_id=k, **v) for k, v in board["labels"].items()],
                     members=[Member(member_id=m, name=members[m]["name"], username=members[m]["username"], role=r)
                              for m, r in board["roles"].items()], **meta)

    @tool(read_only=False)
    def create_list(
        self, board_id: BoardId, name: Annotated[str, Field(description="list name", min_length=1, max_length=60)]
    ) -> ListInfo:
        """Add a list at the right end of a board."""
        tb.board(self, board_id)
        tb.require_edit(self, board_id)
        lists = for_reading(self.state["lists"])
        by_position = self.ordered("lists", ("position",), keys=True, board_id=board_id)  # the last holds the highest
        last = lists[by_position[-1]]["position"] if by_position else 0
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
        chunk, meta = self._board_page(board_id, list_id, include_archived, page, page_size)
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
        if not norm(query).split() and member_id is None and not overdue_only:
            chunk, meta = self._board_page(board_id, None, include_archived, page, page_size)
            return CardPage(cards=[self._summary(c) for c in chunk], **meta)
        cards = self.state["cards"]
        on_board = {"board_id": board_id} if board_id is not None else {}
        if member_id is not None and not norm(query).split():  # a member's cards: their group, not every card
            found = [c for c in self.keys_having("cards", _members, member_id)
                     if board_id is None or cards[c]["board_id"] == board_id]
        else:
            found = self.keys_matching("cards", query, ("title", "description"), **on_board)
        hits = [c for c in found
                if matches(query, cards[c]["title"], cards[c]["description"])
                and member_id in (None, *cards[c]["members"]) and (include_archived or not cards[c]["archived"])
                and (not overdue_only or self._overdue(cards[c]))]
        first = heapq.nsmallest(page * page_size, hits, key=self._board_places())  # only what the page needs sorted
        chunk, meta = paginate_counted(iter(first), len(hits), page, page_size)
        return CardPage(cards=[self._summary(c) for c in chunk], **meta)

    @tool(read_only=True)
    def get_card(self, card_id: CardId, page: Page = 1, page_size: PageSize = 10) -> Card:
        """Everything on a card: description, due date, labels, members, comments count, and its checklists (with
        item ids) paged (10 a page by default; page, total and has_more count the checklists)."""
        return self._card(card_id, page, page_size)

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
        return self._card(card_id)

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
        return self._card(card_id)

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
        return self._card(card_id)

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
        return self._card(card_id)

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
        return self._card(card_id)

    # --- helpers ------------------------------------------------------------------------
    def _card(self, card_id: str, page: int = 1, page_size: int = 10) -> Card:
        """A card with one page of its checklists (in the order they were added): what get_card answers and
        what the card writes answer with (their first page)."""
        v = tb.card(self, card_id)
        checklists = for_reading(self.state["checklists"])
        chunk, meta = paginate(self.ordered("checklists", (), keys=True, card_id=card_id), page, page_size)
        return Card(**self._summary(card_id).model_dump(), description=v["description"],
                    checklists=[Checklist(checklist_id=k, name=checklists[k]["name"],
                                          items=[ChecklistItem(**i) for i in checklists[k]["items"]]) for k in chunk],
                    comments=self.count("comments", card_id=card_id), created_at=v["created_at"],
                    updated_at=v["updated_at"], **meta)

    def _board_places(self) -> Callable[[str], tuple[Any, ...]]:
        """Where a card stands in board order (its board, its list's position, its position, its id), as a sort
        key with the two maps read once, not once a card (reading the state costs more than the look-ups)."""
        cards, lists = for_reading(self.state["cards"]), for_reading(self.state["lists"])
        return lambda card_id: (cards[card_id]["board_id"], lists[cards[card_id]["list_id"]]["position"],
                                cards[card_id]["position"], card_id)

    def _ordered(self, keys: list[str]) -> list[str]:
        """Cards (`keys`, which the indexes found) in board order."""
        return sorted(keys, key=self._board_places())

    def _board_page(self, board_id: str | None, list_id: str | None, include_archived: bool, page: int,
                    page_size: int) -> tuple[list[str], dict[str, Any]]:
        """A page of the cards of a board (or of one list, or of every board) in board order, counted from the
        index's buckets and read off the lists before it: a page costs the lists and cards before it."""
        scope = {"list_id": list_id} if list_id is not None else {"board_id": board_id} if board_id is not None else {}
        total = (self.count("cards", **scope) if scope else len(self.state["cards"])) if include_archived \
            else self.count("cards", **scope, archived=False)
        return paginate_counted(self._in_board_order(board_id, list_id, include_archived), total, page, page_size)

    def _in_board_order(self, board_id: str | None, list_id: str | None, include_archived: bool) -> Iterator[str]:
        """Card ids in board order, one run of lists that share a board and a position at a time (their cards
        merged by position and id, as the sort of the whole board interleaves them)."""
        lists = for_reading(self.state["lists"])
        order = [list_id] if list_id is not None else self.ordered("lists", ("position",), keys=True, board_id=board_id) \
            if board_id is not None else self.ordered("lists", ("board_id", "position"), keys=True)
        states = (False, True) if include_archived else (False,)
        holders = {lid for lid, archived in self.held("cards", tb.filed) if archived in states}
        holding = (lid for lid in order if lid in holders)  # a list without cards adds nothing to the order
        for _, run in groupby(holding, key=lambda lid: (lists[lid]["board_id"], lists[lid]["position"])):
            yield from self.ordered("cards", ("position", BY_KEY), keys=True,
                                    having=(tb.filed, [(lid, a) for lid in run for a in states]))

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
