"""What the task board's tools take (argument types) and return (pydantic models: every tool has an output
schema)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from cworld.sandbox.apps._shared.records import Paged

BoardId = Annotated[str, Field(description="board id such as brd_0001, from list_boards", max_length=40)]
ListId = Annotated[str, Field(description="list id such as lst_0003 (not the list's name), from get_board",
                              max_length=40)]
CardId = Annotated[str, Field(description="card id such as crd_0012, from list_cards or search_cards",
                              max_length=40)]
MemberId = Annotated[str, Field(description="member id such as person_012, from get_board's members",
                                max_length=40)]
LabelId = Annotated[str, Field(description="label id such as lbl_0002, from get_board's labels", max_length=40)]
Title = Annotated[str, Field(description="card title", min_length=1, max_length=200)]
Position = Annotated[Literal["top", "bottom"], Field(description="where in the list the card goes")]
Role = Literal["admin", "normal", "observer"]


class BoardSummary(BaseModel):
    board_id: str
    name: str
    your_role: str = Field(description="admin (may archive and change roles), normal (may edit) or observer "
                                       "(read only)")
    open_cards: int


class BoardList(Paged):
    boards: list[BoardSummary]


class ListInfo(BaseModel):
    list_id: str
    name: str
    open_cards: int
    archived: bool


class Label(BaseModel):
    label_id: str
    name: str
    color: str


class Member(BaseModel):
    member_id: str
    name: str
    username: str
    role: str


class Board(Paged):
    """A board; its lists are paged (the page fields count lists)."""

    board_id: str
    name: str
    description: str
    your_role: str
    lists: list[ListInfo]
    labels: list[Label]
    members: list[Member]


class CardSummary(BaseModel):
    card_id: str
    title: str
    board_id: str
    list_id: str
    list_name: str
    due: str | None
    due_complete: bool
    overdue: bool = Field(description="due date passed (virtual clock) and not marked complete")
    labels: list[str] = Field(description="label names")
    members: list[str] = Field(description="member ids")
    archived: bool


class CardPage(Paged):
    cards: list[CardSummary]


class ChecklistItem(BaseModel):
    item_id: str
    text: str
    done: bool


class Checklist(BaseModel):
    checklist_id: str
    name: str
    items: list[ChecklistItem]


class Card(CardSummary, Paged):
    """A card; its checklists are paged (the page fields count checklists)."""

    description: str
    checklists: list[Checklist]
    comments: int
    created_at: str
    updated_at: str


class Comment(BaseModel):
    comment_id: str
    card_id: str
    author: str
    text: str
    at: str


class CommentPage(Paged):
    comments: list[Comment]


class Elevation(BaseModel):
    confirmed_until: str = Field(description="admin actions (archive, roles) work until this time")


class Archived(BaseModel):
    archived_id: str
    kind: str
    cards_archived: int
