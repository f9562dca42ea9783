"""Records and pages: the page arguments and fields, pagination, not-found look-ups, name search and
the compact "produces" edges, so every app pages and fails to find things the same way."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import islice
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field

from cworld.sandbox.apps._shared.values import norm
from cworld.sandbox.framework import AppError, Prerequisite, SandboxApp

T = TypeVar("T")


PAGE_DOC = "1-based page number; see has_more in the answer to know whether another page exists"
PAGE_SIZE_DOC = "results per page (1-50)"
Page = Annotated[int, Field(description=PAGE_DOC, ge=1, le=10_000)]
PageSize = Annotated[int, Field(description=PAGE_SIZE_DOC, ge=1, le=50)]


#: The same arguments as mail, calendar, chat, docs and clock publish them (no upper bound on the page number).
OpenPage = Annotated[int, Field(ge=1, description=PAGE_DOC)]
OpenPageSize = Annotated[int, Field(ge=1, le=50, description=PAGE_SIZE_DOC)]


class Paged(BaseModel):
    """The page fields every paginated answer carries, so `has_more` is never a guess."""

    page: int = Field(description="the page returned (1-based)")
    page_size: int = Field(description="results per page")
    total: int = Field(description="results across all pages")
    has_more: bool = Field(description="true when a later page holds more results")


def paginate(items: Sequence[T], page: int, page_size: int) -> tuple[list[T], dict[str, Any]]:
    """The slice for one page and the honest page fields (a page past the end is empty, not an error)."""
    start = (page - 1) * page_size
    return list(items[start : start + page_size]), paged(len(items), page, page_size)


def paged(total: int, page: int, page_size: int) -> dict[str, Any]:
    """The page fields of a page of a list `total` long."""
    return {"page": page, "page_size": page_size, "total": total, "has_more": page * page_size < total}


def paginate_counted(items: Iterable[T], total: int, page: int, page_size: int) -> tuple[list[T], dict[str, Any]]:
    """`paginate` over an ordered iteration whose length is counted elsewhere (an index's buckets): the page is
    sliced off the iteration, which is read no further than the page's end."""
    start = (page - 1) * page_size
    return list(islice(items, start, start + page_size)), paged(total, page, page_size)


def paginate_in_order(items: Collection[T], page: int, page_size: int) -> tuple[list[T], dict[str, Any]]:
    """`paginate` over a collection's own order (a map's `items()` or `values()`) without listing all of it:
    the page is sliced off the iteration and the total is the collection's size."""
    return paginate_counted(items, len(items), page, page_size)


def lookup(table: Mapping[str, T], key: str, missing: str) -> T:
    """`table[key]`, or a `not_found` error whose text (`missing`) says where the ids come from."""
    found = table.get(key)
    if found is None:
        raise AppError("not_found", missing)
    return found


def produces(flows: Sequence[tuple[str, str, str]]) -> list[Prerequisite]:
    """One "produces" edge per (before, after, via) row: the compact way apps declare where ids come from."""
    return [Prerequisite(before, after, "produces", via) for before, after, via in flows]


def name_search(app: SandboxApp, name: str, query: str, fields: tuple[str, ...], page: int,
                page_size: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A page of the records of the app's map `name` whose `fields` match every word of `query`, by name
    then id: how the directory, contact and user searches of the apps behave. An empty query pages the
    map's sorted order; a query reads only the records its text index says may match."""
    if not norm(query).split():
        return paginate(app.ordered(name, ("name", "id")), page, page_size)
    found = app.matched(name, query, fields)
    return paginate(sorted(found, key=lambda r: (r["name"], r["id"])), page, page_size)
