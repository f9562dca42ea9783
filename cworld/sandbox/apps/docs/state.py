"""The seeded start state of the docs app: folders, documents with version histories, sharing and comments.

Messy on purpose: an outdated copy with the same title sits in the Archive folder, some documents are
shared with you read-only (edit access must be requested), one is locked with a password that only the
mail app knows, and open comments wait on a document.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from cworld.sandbox.apps._shared.values import iso
from cworld.sandbox.framework import SandboxApp
from cworld.sandbox.framework.world import cast, everyone

FOLDERS = ("Projects", "Team", "Archive", "Personal")


def _doc(app: SandboxApp, title: str, folder: str, owner: str, history: list[tuple[str, str, Any]],
         access: dict[str, str], **extra: Any) -> dict[str, Any]:
    versions = [{"version": i + 1, "content": text, "author": who, "saved_at": iso(when)}
                for i, (text, who, when) in enumerate(history)]
    rec = {"id": app.new_id("doc"), "title": title, "folder_id": folder, "owner": owner,
           "content": versions[-1]["content"], "version": len(versions), "versions": versions,
           "access": {owner: "owner", **access}, "locked": False, "password": None, "unlocked": False,
           "trashed": False, "updated_at": versions[-1]["saved_at"]}
    rec.update(extra)
    return rec


def _topic_docs(app: SandboxApp, world: dict[str, Any], folders: dict[str, str], rng: random.Random) -> list[dict[str, Any]]:
    me, colleagues, out = world["me"]["id"], world["colleagues"], []
    locked = world["locked_document"]
    for i, topic in enumerate(world["topics"]):
        owner = locked["owner"] if topic["key"] == locked["topic"] else (me if i in (1, 4) else rng.choice(colleagues)["id"])
        mine = "owner" if owner == me else ("viewer" if i in (2, 3) else "editor")
        old_at = app.now - timedelta(days=rng.randint(12, 40))
        new_at = app.now - timedelta(days=rng.randint(1, 10), hours=rng.randint(0, 12))
        history = [(topic["doc_old_body"], owner, old_at), (topic["doc_body"], owner, new_at)]
        access = {p["id"]: rng.choice(["viewer", "editor"]) for p in rng.sample(colleagues, 3) if p["id"] != owner}
        if owner != me:
            access[me] = mine
        doc = _doc(app, topic["doc_title"], folders["Projects"], owner, history, access)
        if topic["key"] == locked["topic"]:
            doc.update(locked=True, password=locked["password"])
        out.append(doc)
    stale = world["topics"][2]
    when = app.now - timedelta(days=rng.randint(1, 3))  # touched recently, but its content is the old one
    out.append(_doc(app, stale["doc_title"], folders["Archive"], me, [(stale["doc_old_body"], me, when)], {}))
    return out


def _comments(app: SandboxApp, docs: list[dict[str, Any]], world: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    target = docs[1]
    people = [p for p in everyone(world) if p["id"] in target["access"]] or world["colleagues"]
    texts = ["Can we double-check these numbers before sharing?", "This section is out of date, see the latest thread.",
             "Looks good to me."]
    return [{"id": app.new_id("cmt"), "document_id": target["id"], "author": rng.choice(people)["id"], "text": text,
             "at": iso(app.now - timedelta(hours=rng.randint(2, 72))), "resolved": text.startswith("Looks")}
            for text in texts]


def seed_state(app: SandboxApp, rng: random.Random) -> dict[str, Any]:
    world = cast(app.session.seed)
    folders = {name: app.new_id("fld") for name in FOLDERS}
    docs = _topic_docs(app, world, folders, rng)
    people = [world["me"], *everyone(world)]
    return {"me": world["me"]["id"],
            "directory": {p["id"]: {"id": p["id"], "name": p["name"], "email": p["email"], "company": p["company"]}
                          for p in people},
            "folders": {fid: {"id": fid, "name": name} for name, fid in folders.items()},
            "documents": {d["id"]: d for d in docs},
            "access_requests": {},
            "comments": {c["id"]: c for c in _comments(app, docs, world, rng)}}
