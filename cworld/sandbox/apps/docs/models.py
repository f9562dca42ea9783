"""The docs app's answer models (kept apart so `docs.py` reads as its tools)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from cworld.sandbox.apps._shared.people import PersonBase
from cworld.sandbox.apps._shared.records import Paged

Role = Literal["owner", "editor", "viewer"]


class Person(PersonBase):
    company: str


class PersonPage(Paged):
    people: list[Person]


class Folder(BaseModel):
    folder_id: str
    name: str
    documents: int = Field(description="documents in it (not counting the trash)")


class FolderList(Paged):
    folders: list[Folder]


class DocumentInfo(BaseModel):
    document_id: str
    title: str
    folder_id: str
    owner: str = Field(description="person id of the owner")
    your_role: Role | None = Field(description="your access; null if the document is not shared with you")
    version: int = Field(description="current version number")
    updated_at: str
    locked: bool = Field(description="locked documents need unlock_document before reading or editing")
    trashed: bool


class DocumentPage(Paged):
    documents: list[DocumentInfo]


class Document(DocumentInfo):
    content: str
    shared_with: dict[str, Role] = Field(description="person id -> role")


class Version(BaseModel):
    version: int
    author: str
    saved_at: str
    length: int = Field(description="characters of content")
    preview: str = Field(description="the first line of that version")


class VersionList(Paged):
    document_id: str
    current: int
    versions: list[Version] = Field(description="oldest first")


class VersionContent(BaseModel):
    document_id: str
    version: int
    content: str


class AccessRequest(BaseModel):
    request_id: str
    document_id: str
    role: Literal["editor"]
    status: Literal["approved"] = Field(description="the owner's answer (requests inside the company are approved)")
    your_role: Role


class Comment(BaseModel):
    comment_id: str
    document_id: str
    author: str
    text: str
    at: str
    resolved: bool


class CommentList(Paged):
    comments: list[Comment]
