"""The cast of a seeded world: who "you" are, your company, colleagues, outside contacts and projects.

Mail, calendar, chat and docs all draw their people and subjects from this one cast, so that the
Priya Shah who wrote you an email is the same Priya Shah in the chat directory and on the calendar,
and a task can span apps. It is sampled from the knowledge base with its own seeded RNG (purpose
`sandbox:world`), so it never shifts when an app changes how many draws it makes.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

from cworld.sandbox.framework import kb
from cworld.sandbox.framework.session import plain_copy
from cworld.seeding import derive_rng

N_COLLEAGUES = 28
N_EXTERNAL = 10
N_TOPICS = 6


def slug(text: str) -> str:
    """ASCII, lower case, letters and digits only: `O'Brien` -> `obrien`, `São` -> `sao`."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", ascii_text.lower())


def _person(record: dict[str, Any], domain: str, company: str) -> dict[str, Any]:
    person = dict(record)
    person["name"] = f"{record['first']} {record['last']}"
    person["email"] = f"{slug(record['first'])}.{slug(record['last'])}@{domain}"
    person["company"] = company
    return person


def _password(rng: Any) -> str:
    words = ["amber", "cobalt", "harbor", "juniper", "maple", "orbit", "quartz", "saffron", "tundra", "willow"]
    return f"{rng.choice(words)}-{rng.choice(words)}-{rng.randrange(10, 99)}"


@lru_cache(maxsize=64)
def _cast(seed: int) -> dict[str, Any]:
    rng = derive_rng(seed, "sandbox:world")
    companies = kb.sample("companies", rng, 1 + N_EXTERNAL)
    home, others = companies[0], companies[1:]
    people = kb.sample("people", rng, 1 + N_COLLEAGUES + N_EXTERNAL)
    me = _person(people[0], home["domain"], home["name"])
    colleagues = [_person(p, home["domain"], home["name"]) for p in people[1 : 1 + N_COLLEAGUES]]
    externals = [_person(p, c["domain"], c["name"]) for p, c in zip(people[1 + N_COLLEAGUES :], others, strict=True)]
    topics = kb.sample("topics", rng, N_TOPICS)
    locked = {"topic": topics[0]["key"], "title": topics[0]["doc_title"], "password": _password(rng),
              "owner": colleagues[0]["id"]}
    return {"company": home, "me": me, "colleagues": colleagues, "externals": externals, "topics": topics,
            "locked_document": locked}


def cast(seed: int) -> dict[str, Any]:
    """The world's cast for `seed` (a fresh copy: callers put parts of it into their state)."""
    return plain_copy(_cast(seed))


def everyone(world: dict[str, Any]) -> list[dict[str, Any]]:
    """Colleagues then outside contacts (not you), in a fixed order."""
    return world["colleagues"] + world["externals"]


def by_id(world: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for p in [world["me"], *everyone(world)]}
