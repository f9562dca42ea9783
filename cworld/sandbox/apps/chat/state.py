"""The seeded start state of the chat app: a workspace with channels, threads and direct messages.

Messy on purpose: several channels and a direct message hold unread messages (some days old), an
archived channel has almost the same name as the live one, a private channel cannot be joined, and
two people share a first name.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from cworld.sandbox.apps._shared.values import iso
from cworld.sandbox.framework import SandboxApp, kb
from cworld.sandbox.framework.world import cast, slug


def handle(person: dict[str, Any]) -> str:
    return f"{slug(person['first'])}.{slug(person['last'])}"


def _user(app: SandboxApp, person: dict[str, Any]) -> dict[str, Any]:
    return {"id": app.new_id("U"), "name": person["name"], "handle": handle(person), "title": person.get("title", ""),
            "timezone": person.get("timezone", "UTC"), "status": ""}


def _namesake(world: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    taken = {p["id"] for p in [world["me"], *world["colleagues"], *world["externals"]]}
    firsts = {p["first"] for p in world["colleagues"]}
    pool = [p for p in kb.load("people") if p["first"] in firsts and p["id"] not in taken]
    if not pool:
        return None
    other = dict(rng.choice(pool))
    other["name"] = f"{other['first']} {other['last']}"
    return other


def _channel(app: SandboxApp, name: str, topic: str, members: list[str], **extra: Any) -> dict[str, Any]:
    rec = {"id": app.new_id("C"), "name": name, "topic": topic, "private": False, "archived": False,
           "members": sorted(members), "created_by": members[0] if members else ""}
    rec.update(extra)
    return rec


def _post(app: SandboxApp, conv: str, author: str, text: str, age: timedelta, parent: str | None = None) -> dict[str, Any]:
    return {"id": app.new_id("chat"), "conversation_id": conv, "author": author, "text": text, "ts": iso(app.now - age),
            "edited": False, "thread_parent": parent, "reactions": {}, "deleted": False}


def _history(app: SandboxApp, channel: dict[str, Any], lines: list[str], rng: random.Random) -> list[dict[str, Any]]:
    authors = list(channel["members"]) or [channel["created_by"]]
    ages = sorted((timedelta(days=rng.randint(0, 9), hours=rng.randint(0, 23), minutes=rng.randint(0, 59))
                   for _ in lines), reverse=True)
    posts = [_post(app, channel["id"], rng.choice(authors), line, age) for line, age in zip(lines, ages, strict=True)]
    if len(posts) >= 3:
        root = posts[1]
        for i, reply in enumerate(("+1, agreed.", "I'll follow up on this today.")):
            posts.append(_post(app, channel["id"], rng.choice(authors), reply,
                               ages[1] - timedelta(minutes=10 * (i + 1)), parent=root["id"]))
    return posts


def _channels(app: SandboxApp, world: dict[str, Any], users: dict[str, str], rng: random.Random,
              me: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    colleague_ids = [users[p["id"]] for p in world["colleagues"]]
    everyone_ids = [me, *colleague_ids]
    channels = [_channel(app, "general", "Company-wide announcements", everyone_ids),
                _channel(app, "random", "Anything goes", everyone_ids)]
    posts: list[dict[str, Any]] = []
    for i, topic in enumerate(world["topics"]):
        members = rng.sample(colleague_ids, 6) + ([me] if i < 4 else [])
        channels.append(_channel(app, topic["channel"], topic["project"], members, private=(i == 5)))
        posts += _history(app, channels[-1], rng.sample(topic["chat"], 5), rng)
    first = world["topics"][0]
    channels.append(_channel(app, f"{first['channel']}-old", f"{first['project']} (old, read-only)",
                             [me, *colleague_ids[:5]], archived=True))
    posts += _history(app, channels[-1], first["chat"][:3], rng)
    posts += [_post(app, channels[0]["id"], colleague_ids[0], n["body"], timedelta(days=rng.randint(1, 6)))
              for n in kb.sample("notices", rng, 2)]
    return channels, posts


def seed_state(app: SandboxApp, rng: random.Random) -> dict[str, Any]:
    world = cast(app.session.seed)
    people = [world["me"], *world["colleagues"]]
    namesake = _namesake(world, rng)
    users = [_user(app, p) for p in people + ([namesake] if namesake else [])]
    by_person = {p["id"]: u["id"] for p, u in zip(people, users, strict=False)}
    me = by_person[world["me"]["id"]]
    channels, posts = _channels(app, world, by_person, rng, me)
    dm_peer = by_person[world["colleagues"][2]["id"]]
    dm: dict[str, Any] = {"id": app.new_id("D"), "members": sorted([me, dm_peer])}
    posts.append(_post(app, dm["id"], dm_peer, f"Hi! Do you have a minute today about {world['topics'][0]['project']}?",
                       timedelta(hours=5)))
    last_read = {c["id"]: iso(app.now - timedelta(days=rng.randint(1, 5))) for c in channels if me in c["members"]}
    last_read[dm["id"]] = iso(app.now - timedelta(days=1))
    return {"me": me, "users": {u["id"]: u for u in users}, "auth": {},
            "channels": {c["id"]: c for c in channels}, "dms": {dm["id"]: dm},
            "messages": {p["id"]: p for p in posts}, "last_read": last_read}
