"""Which earlier answer field an argument of a harvested tool can take: links by semantic type.

The harvested dependency graph only links tools of one server, and fields of the same name rarely meet
across servers. People chain services by *what* a value is: the city a search found is where the
weather is looked up, the ticker a screener listed is the quote to fetch, the title of a paper is what
to search the web for, an issue's id is the issue to comment on. So a parameter and an answer field each
get a semantic type read off the normalized name (and the JSON-schema `format`), and a parameter takes a
field of its type; a search-like parameter (`query`, `keyword`, `topic`) takes a name or title found
earlier; an id parameter (`issueId`, `vault_id`) takes the id of an entity of that kind from an earlier
step of the same service (an id means nothing to another service).
"""

from __future__ import annotations

import re
from typing import Any

# the kinds' synonyms are the engine's (cards/operations); the synthesizer's readers import them from here too
from cworld.engine.cards.operations import SYNONYMS as SYNONYMS
from cworld.engine.cards.operations import same_entity as same_entity
from cworld.synth.offline.schema_values import snake

_TYPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("email", re.compile(r"(^|_)(e_?mail|email_address|recipient_email|to_email)s?$")),
    ("url", re.compile(r"(^|_)(url|uri|link|href|website|homepage|web_url|html_url)s?$")),
    ("symbol", re.compile(r"(^|_)(symbol|ticker|stock|coin)s?$")),
    ("city", re.compile(r"(^|_)(city|location|place|destination|origin|address|town|locality|venue)s?$")),
    ("country", re.compile(r"(^|_)(country|country_code|nation)$")),
    ("company", re.compile(r"(^|_)(company|company_name|organi[sz]ation|org_name|vendor|supplier|customer_name)$")),
    ("person", re.compile(r"(^|_)(author|owner|assignee|full_name|person|contact_name|user_name|username)$")),
    ("domain", re.compile(r"(^|_)(domain|company_domain|hostname|host)$")),
    ("phone", re.compile(r"(^|_)(phone|phone_number|mobile)$")),
    ("date", re.compile(r"(^|_)(date|day|due|due_date|start_date|end_date|deadline|published_at|created_at)$")),
    ("path", re.compile(r"(^|_)(path|file_path|filename|file_name|filepath)$")),
    ("title", re.compile(r"(^|_)(title|name|subject|headline|topic_name|label)$")),
)
_SEARCH = re.compile(r"(^|_)(query|q|search|search_query|keywords?|term|topic|question|text_query)$")
_FORMATS = {"email": "email", "uri": "url", "url": "url", "date": "date", "hostname": "domain"}
_ID = re.compile(r"^(?P<entity>[a-z0-9_]+?)_?ids?$")
SEARCHABLE = frozenset({"title", "company", "city", "symbol", "person"})
"""What a search-like parameter may take from an earlier answer: something a person would search for."""


def input_type(name: str, prop: dict[str, Any]) -> str | None:
    """The semantic type of a parameter: its format's, else its name's, else `search` for a query."""
    fmt = prop.get("format") or (prop.get("items") or {}).get("format") if isinstance(prop, dict) else None
    if isinstance(fmt, str) and fmt in _FORMATS:
        return _FORMATS[fmt]
    key = snake(name)
    if _SEARCH.search(key):
        return "search"
    return name_type(key)


def name_type(key: str) -> str | None:
    for kind, pattern in _TYPES:
        if pattern.search(key):
            return kind
    return None


def id_entity(name: str) -> str | None:
    """`issueId` -> issue, `vault_ids` -> vault; None for a bare `id` or a name that is no id."""
    key = snake(name)
    if key in ("id", "ids") or not (key.endswith("_id") or key.endswith("_ids")):
        return None
    match = _ID.match(key)
    return match.group("entity").rsplit("_", 1)[-1] if match else None


def leaf_type(path: str, value: Any) -> str | None:
    """The semantic type of an answer field (`items.0.city` -> city); a value shaped like an email or a
    URL is one, whatever the field's name."""
    leaf = snake(path.rsplit(".", 1)[-1])
    if isinstance(value, str):
        if re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", value):
            return "email"
        if re.match(r"https?://", value):
            return "url"
    if leaf.isdigit() and "." in path:  # the first item of a list of strings: its list's name
        leaf = snake(path.rsplit(".", 2)[-2])
    kind = name_type(leaf)
    return kind if kind != "title" or isinstance(value, str) and len(value) > 2 else None


def id_leaf_entity(path: str) -> str | None:
    """The entity an id field names: `card.id` -> card, `items.0.vault_id` -> vault."""
    parts = [snake(p) for p in path.split(".") if not p.isdigit()]
    if not parts:
        return None
    leaf = parts[-1]
    if leaf == "id":
        return parts[-2].rstrip("s") if len(parts) > 1 and parts[-2] not in ("items", "results", "data") else None
    return id_entity(leaf)


def takes(kind: str | None, found: str | None) -> bool:
    """A parameter of semantic type `kind` may take an answer field of type `found`."""
    if kind is None or found is None:
        return False
    if kind == "search":
        return found in SEARCHABLE
    return kind == found
