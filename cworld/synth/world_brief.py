"""A short description of a seeded world for the LLM drafter: the entities a task over live tools may name.

A drafted gold plan only executes if it names things that exist in the task's world (a real colleague,
a real channel, a product in the catalog). The drafter cannot call tools, so it is told, per candidate
server, the handful of facts a person in that world would know.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MAX_ITEMS = 8


def _names(records: Any, key: str = "name") -> str:
    values = records.values() if isinstance(records, dict) else records
    return ", ".join(str(v.get(key)) for v in list(values)[:MAX_ITEMS] if isinstance(v, dict) and v.get(key))


def _calendar(st: dict[str, Any]) -> str:
    return f"directory: {_names(st['directory'])}; rooms: {_names(st['rooms'])}"


def _chat(st: dict[str, Any]) -> str:
    channels = ", ".join(f"#{c['name']}" for c in list(st["channels"].values())[:MAX_ITEMS])
    return f"channels: {channels}; people: {_names(st['users'])}"


def _mail(st: dict[str, Any]) -> str:
    subjects = "; ".join(m["subject"] for m in list(st["messages"].values())[:5])
    return f"contacts: {_names(st['contacts'])}; recent subjects: {subjects}"


def _docs(st: dict[str, Any]) -> str:
    titles = ", ".join(d["title"] for d in list(st["documents"].values())[:MAX_ITEMS])
    return f"folders: {_names(st['folders'])}; documents: {titles}"


def _shop(st: dict[str, Any]) -> str:
    account = st["account"]
    cats = sorted({p["category"] for p in st["catalog"].values()})
    products = _names(st["catalog"])
    login = f"login {account['email']} / {account['password']}"
    return f"{login}; categories: {', '.join(cats)}; products: {products}"


def _finance(st: dict[str, Any]) -> str:
    c = st["customer"]
    payees, watchlists = _names(st["payees"]), _names(st["watchlists"])
    return f"customer id {c['customer_id']}, PIN {c['pin']}; payees: {payees}; watchlists: {watchlists}"


def _taskboard(st: dict[str, Any]) -> str:
    return (
        f"boards: {_names(st['boards'])}; members: {_names(st['members'])}; password {st['auth']['password']}"
    )


def _travel(st: dict[str, Any]) -> str:
    people = ", ".join(f"{t['first_name']} {t['last_name']}" for t in st["travellers"].values())
    return f"traveller profiles: {people}"


def _clock(st: dict[str, Any]) -> str:
    return f"time zone {st['timezone']}"


BRIEFS: dict[str, Callable[[dict[str, Any]], str]] = {
    "calendar": _calendar,
    "chat": _chat,
    "mail": _mail,
    "docs": _docs,
    "shop": _shop,
    "finance": _finance,
    "taskboard": _taskboard,
    "travel": _travel,
    "clock": _clock,
}


def world_brief(seed: int, servers: list[str]) -> str:
    """One line per stateful candidate server, plus who 'I' am and what time it is."""
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework import SandboxSession, world

    session = SandboxSession(seed, all_apps())
    me = world.cast(seed)["me"]
    lines = [
        f"You are {me['name']} ({me['title']}, {me['company']}, {me['city']}); now is "
        f"{session.clock.now():%Y-%m-%d %H:%M} UTC."
    ]
    for server in servers:
        brief = BRIEFS.get(server)
        if brief is not None and server in session.state:
            try:
                lines.append(f"- {server}: {brief(session.state[server])}")
            except (KeyError, TypeError):
                continue
    return "\n".join(lines)
