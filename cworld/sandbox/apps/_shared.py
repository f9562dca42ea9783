"""What the stateful apps share: pages, look-ups, times, tokens, name matching and the models two apps publish.

Kept out of the app packages so that each app reads as its tools only, and so that pagination, not-found
errors, token expiry and date parsing behave the same in every app (an agent that learns one learns them all).
"""

from __future__ import annotations

import difflib
import hashlib
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field

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
    chunk = list(items[start : start + page_size])
    meta = {"page": page, "page_size": page_size, "total": len(items), "has_more": start + page_size < len(items)}
    return chunk, meta


def lookup(table: Mapping[str, T], key: str, missing: str) -> T:
    """`table[key]`, or a `not_found` error whose text (`missing`) says where the ids come from."""
    found = table.get(key)
    if found is None:
        raise AppError("not_found", missing)
    return found


def produces(flows: Sequence[tuple[str, str, str]]) -> list[Prerequisite]:
    """One "produces" edge per (before, after, via) row: the compact way apps declare where ids come from."""
    return [Prerequisite(before, after, "produces", via) for before, after, via in flows]


# --- time ------------------------------------------------------------------------------------
def iso(moment: datetime) -> str:
    """Times in state and answers are ISO-8601 UTC strings: JSON-friendly and sortable."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def parse_day(text: str, field: str) -> date:
    """A `YYYY-MM-DD` argument; an impossible date (2026-02-30) is the caller's error, said plainly."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise AppError("invalid", f"{field} '{text}' is not a real date; give it as YYYY-MM-DD") from None


def parse_moment(text: str, field: str) -> datetime:
    """A `YYYY-MM-DDTHH:MM` (UTC) argument, seconds and a trailing Z optional."""
    cleaned = text.strip().removesuffix("Z")
    for fmt in ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"):
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise AppError("invalid", f"{field} '{text}' is not a time; give it as YYYY-MM-DDTHH:MM in UTC")


def later(moment: datetime, **delta: float) -> str:
    return iso(moment + timedelta(**delta))


# --- tokens ----------------------------------------------------------------------------------
def secret(app: SandboxApp, purpose: str, length: int = 20) -> str:
    """A token or code that looks random but is fixed by (seed, purpose): same seed, same responses."""
    digest = hashlib.sha256(f"{app.session.seed}\x1f{app.name}\x1f{purpose}".encode()).hexdigest()
    return digest[:length]


def issue_token(app: SandboxApp, auth: dict[str, Any], prefix: str, minutes: int) -> dict[str, str]:
    """Start a login session in `auth` (one live token at a time, as a browser session would have)."""
    token = f"{prefix}_{secret(app, app.new_id(prefix + '_login'))}"
    auth["token"] = {"value": token, "expires_at": later(app.now, minutes=minutes)}
    return auth["token"]


def require_token(app: SandboxApp, auth: dict[str, Any], token: str, login_tool: str) -> None:
    """Raise an `auth` error naming the login tool unless `token` is the live, unexpired one."""
    live = auth.get("token")
    if not live or live["value"] != token:
        raise AppError("auth", f"token is not valid for this account; call {login_tool} to get a fresh token")
    if parse_iso(live["expires_at"]) <= app.now:
        raise AppError("auth", f"token expired at {live['expires_at']}; call {login_tool} again for a new one")


# --- names -----------------------------------------------------------------------------------
def norm(text: str) -> str:
    """Lower case, single spaces, accents dropped: 'Sao  Paulo' finds 'São Paulo'."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return " ".join(plain.lower().split())


def matches(query: str, *fields: str) -> bool:
    """Every word of the query appears in one of the fields (case-insensitive): how search boxes behave."""
    haystack = norm(" ".join(fields))
    return all(word in haystack for word in norm(query).split())


def suggest(name: str, candidates: Sequence[str]) -> str:
    """' Did you mean X?' for a not-found message, or '' when nothing is close."""
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def money(value: float) -> float:
    return round(value + 0.0, 2)


def name_search(records: Iterable[dict[str, Any]], query: str, fields: Sequence[str], page: int,
                page_size: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A page of the records whose `fields` match every word of `query`, by name then id: how the
    directory, contact and user searches of the apps behave."""
    found = [r for r in records if matches(query, *(r[f] for f in fields))]
    return paginate(sorted(found, key=lambda r: (r["name"], r["id"])), page, page_size)


# --- models two apps publish ----------------------------------------------------------------
# Each app subclasses these under its own model name (the schema title), adding or wording fields, so the
# published schemas stay each app's own while the shared fields and the code that fills them live here.
class PersonBase(BaseModel):
    # calendar and docs: `Person`, a directory entry; subclasses add the fields their app shows
    person_id: str
    name: str
    email: str


class LoginBase(BaseModel):
    # finance and shop: `LoginResult`; subclasses word `token` and `expires_at` for their app
    token: str
    expires_at: str
    customer_name: str


P = TypeVar("P", bound=PersonBase)
PageT = TypeVar("PageT", bound=Paged)
L = TypeVar("L", bound=LoginBase)

PeopleQuery = Annotated[str, Field(description="words from a name, email or company")]


def people_page(directory: dict[str, dict[str, Any]], query: str, page: int, page_size: int,
                person: type[P], page_model: Callable[..., PageT]) -> PageT:
    """A page of the people whose name, email or company match `query`, by name: the look-up that
    calendar invitations and document sharing both need before they take a person id."""
    chunk, meta = name_search(directory.values(), query, ("name", "email", "company"), page, page_size)
    people = [person(person_id=p["id"], **{k: p[k] for k in person.model_fields if k != "person_id"}) for p in chunk]
    return page_model(people=people, **meta)


def log_in(app: SandboxApp, prefix: str, minutes: int, customer_name: str, result: type[L]) -> L:
    """Start a login session in the app's `auth` state and answer with the token (finance and shop)."""
    token = issue_token(app, app.state["auth"], prefix, minutes)
    return result(token=token["value"], expires_at=token["expires_at"], customer_name=customer_name)
