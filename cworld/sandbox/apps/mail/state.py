"""The seeded start state of the mail app: contacts from the world's cast and a realistically messy mailbox.

Messy on purpose: unread mail mixed with read, stale unread mail from weeks ago, a half-written draft
addressed to the wrong one of two look-alike contacts, a message already in the trash, automated
notices from no-reply senders, and a password for a locked document (which the docs app needs).
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from cworld.sandbox.apps._shared.values import iso
from cworld.sandbox.framework import SandboxApp, kb
from cworld.sandbox.framework.world import cast, everyone, slug

STALE_DAYS = 14


def no_reply(email: str) -> bool:
    """Automated senders (`...-noreply@`) do not take replies."""
    return email.split("@")[0].endswith("noreply")


def _contact(app: SandboxApp, person: dict[str, Any], **extra: Any) -> dict[str, Any]:
    rec = {"id": app.new_id("contact"), "name": person["name"], "email": person["email"],
           "company": person.get("company", ""), "title": person.get("title", ""), "phone": person.get("phone", ""),
           "favorite": False, "notes": ""}
    rec.update(extra)
    return rec


def _lookalikes(app: SandboxApp, world: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """A second entry for one colleague (nickname, personal address) and a different person with the same first name."""
    pool = [p for p in world["colleagues"][1:] if p["nickname"]]
    twin = rng.choice(pool or world["colleagues"][1:])
    nick = twin["nickname"] or twin["first"][:3]
    dup = _contact(app, {"name": f"{nick} {twin['last']}", "email": f"{slug(nick)}{slug(twin['last'])}@mailbox.example",
                         "company": "", "title": "", "phone": twin["phone"]}, notes="personal address")
    taken = {p["id"] for p in [world["me"], *everyone(world)]}
    firsts = {p["first"]: p for p in world["colleagues"]}
    namesakes = [p for p in kb.load("people") if p["first"] in firsts and p["id"] not in taken]
    extra = []
    if namesakes:
        other = dict(rng.choice(namesakes))
        other.update(name=f"{other['first']} {other['last']}", company=world["externals"][-1]["company"],
                     email=f"{slug(other['first'])}.{slug(other['last'])}@{world['externals'][-1]['email'].split('@')[1]}")
        extra.append(_contact(app, other))
    return [dup, *extra]


def _message(app: SandboxApp, folder: str, sender: dict[str, str], to: list[dict[str, str]], subject: str,
             body: str, when: Any, read: bool, thread_id: str | None = None) -> dict[str, Any]:
    return {"id": app.new_id("mail"), "thread_id": thread_id or app.new_id("thread"), "folder": folder,
            "from": {"name": sender["name"], "email": sender["email"]},
            "to": [{"name": p["name"], "email": p["email"]} for p in to], "cc": [],
            "subject": subject, "body": body, "date": iso(when), "read": read, "starred": False, "replied": False}


def _topic_mail(app: SandboxApp, world: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    me, people, now = world["me"], everyone(world), app.now
    out: list[dict[str, Any]] = []
    for topic in world["topics"]:
        for mail in rng.sample(topic["mail"], rng.randint(1, len(topic["mail"]))):
            sender = rng.choice(people)
            age = timedelta(days=rng.randint(0, 24), hours=rng.randint(0, 20), minutes=rng.choice([0, 15, 30, 45]))
            body = mail["body"].format(first=me["first"], sender=sender["first"])
            stale = age.days >= STALE_DAYS
            read = rng.random() < (0.6 if stale else 0.35)
            out.append(_message(app, "inbox", sender, [me], mail["subject"], body, now - age, read))
    forgotten = out[0]  # one message is always stale and still unread: the one an agent should not miss
    forgotten.update(read=False, date=iso(now - timedelta(days=rng.randint(STALE_DAYS + 1, 30), hours=3)))
    return out


def _notices(app: SandboxApp, world: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    domain = world["company"]["domain"]
    out = []
    for notice in kb.sample("notices", rng, 4):
        sender = {"name": notice["sender"], "email": f"{notice['address']}@{domain}"}
        when = app.now - timedelta(days=rng.randint(0, 30), hours=rng.randint(0, 12))
        out.append(_message(app, "inbox", sender, [world["me"]], notice["subject"], notice["body"], when,
                            read=rng.random() < 0.5))
    return out


def _password_mail(app: SandboxApp, world: dict[str, Any]) -> dict[str, Any]:
    locked = world["locked_document"]
    owner = next(p for p in world["colleagues"] if p["id"] == locked["owner"])
    body = (f"Hi {world['me']['first']},\n\nI locked the document '{locked['title']}' while we finish it. "
            f"The password is {locked['password']} - please don't forward it.\n\n{owner['first']}")
    return _message(app, "inbox", owner, [world["me"]], f"Password for '{locked['title']}'", body,
                    app.now - timedelta(days=2, hours=3), read=False)


def _sent_draft_trash(app: SandboxApp, world: dict[str, Any], inbox: list[dict[str, Any]],
                      wrong: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    me, out = world["me"], []
    answerable = [m for m in inbox if m["read"] and not no_reply(m["from"]["email"])]
    replied = rng.sample(answerable, k=min(2, len(answerable)))
    for orig in replied:
        orig["replied"] = True
        body = f"Thanks {orig['from']['name'].split()[0]}, noted. I'll get back to you on this.\n\n{me['first']}"
        out.append(_message(app, "sent", me, [orig["from"]], f"Re: {orig['subject']}", body,
                            app.now - timedelta(hours=rng.randint(1, 30)), True, orig["thread_id"]))
    topic = world["topics"][1]
    out.append(_message(app, "drafts", me, [wrong], f"{topic['project']}: quick question",
                        f"Hi {wrong['name'].split()[0]},\n\nAbout the {topic['project'].lower()} - ", app.now - timedelta(days=1), True))
    old = rng.choice([m for m in inbox if no_reply(m["from"]["email"])] or inbox)
    old["folder"] = "trash"
    return out


def seed_state(app: SandboxApp, rng: random.Random) -> dict[str, Any]:
    world = cast(app.session.seed)
    contacts = [_contact(app, p) for p in everyone(world)]
    lookalikes = _lookalikes(app, world, rng)
    contacts += lookalikes
    rng.shuffle(contacts)
    inbox = _topic_mail(app, world, rng) + _notices(app, world, rng) + [_password_mail(app, world)]
    messages = inbox + _sent_draft_trash(app, world, inbox, lookalikes[0], rng)
    me = world["me"]
    return {"account": {"name": me["name"], "email": me["email"]},
            "contacts": {c["id"]: c for c in contacts},
            "messages": {m["id"]: m for m in messages}}
