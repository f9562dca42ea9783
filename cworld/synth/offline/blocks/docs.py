"""Shared-documents blocks: write up a note and share it; open a locked document whose password sits in
the inbox (mail is only its way in, so the block lives here)."""

from __future__ import annotations

import re

from cworld.sandbox.framework import world
from cworld.synth.offline.blocks.dictated import dictated
from cworld.synth.offline.composer import BlockFailed, Composer, anchor, follow_up, tools
from cworld.synth.offline.people import colleague, exclude_twin, first_name

APP = "docs"
DOCS = "docs/"


def doc_note(c: Composer) -> None:
    folders = {f["name"]: fid for fid, f in c.state["docs"]["folders"].items()}
    folder = c.pick(sorted(n for n in folders if n != "Archive"))
    directory = {
        p["name"]: pid for pid, p in c.state["docs"]["directory"].items() if pid != c.state["docs"]["me"]
    }
    who = colleague(c, list(directory), avoid=set(c.facts.get("people", [])))
    topic, summary = c.facts["topic"], c.facts["summary"]
    title = dictated(c.text("doc_note.title", topic=topic))
    c.subgoal("write_note", topic=topic, who=who)
    listed = c.step("folders", DOCS + "list_folders", {}, folder=folder, topic=topic)
    written = {
        "title": title,
        "folder_id": listed.ref(f"folders[name={folder}].folder_id"),
        "content": dictated(c.text("doc_note.content", title=title, summary=summary)),
    }
    doc = c.step("note", DOCS + "create_document", written, topic=topic)
    person = c.step("find_reader", DOCS + "find_people", {"query": first_name(who)}, who=who)
    role = c.rng.choice(["viewer", "editor"])
    shared = {
        "document_id": doc.ref("document_id"),
        "role": role,
        "person_id": person.ref(f"people[name={who}].person_id"),
    }
    access = "share_edit" if role == "editor" else "share_read"
    c.step("share", DOCS + "share_document", shared, why=access, who=who)
    exclude_twin(c, "doc_twin", who, directory, DOCS + "share_document", "person_id")
    can, named = c.book.mapping("doc_note.can")[role], c.book.mapping("doc_note.role")[role]
    said = {"title": title, "content": written["content"], "folder": folder, "who": who}
    c.say(*c.variants("doc_note.say", can=can, role=named, **said))


def locked_doc(c: Composer) -> None:
    locked = world.cast(c.seed)["locked_document"]
    docs = [(k, v) for k, v in c.state["docs"]["documents"].items() if v["title"] == locked["title"]]
    if not docs:
        raise BlockFailed("no locked document")
    title = locked["title"]
    note = dictated(c.text("locked_doc.note", today=c.today.isoformat()))
    c.subgoal("unlock", title=title)
    mails = c.step("find_password", "mail/search_messages", {"query": "password"}, title=title)
    c.step("read_password", "mail/get_message", {"message_id": mails.ref("messages.0.message_id")})
    found = c.step("find_doc", DOCS + "search_documents", {"query": title}, title=title)
    ref = found.ref(f"documents[title={title}].document_id")
    c.step(
        "unlock", DOCS + "unlock_document", {"document_id": ref, "password": locked["password"]}, title=title
    )
    body = c.step("read_doc", DOCS + "get_document", {"document_id": ref}, title=title)
    c.step("append", DOCS + "append_to_document", {"document_id": ref, "text": note}, title=title)
    first = re.split(r"(?<=[.!?\n])\s", body.value.get("content", "").replace("#", "").strip())[0][:120]
    owner = first_name(c.state["docs"]["directory"][locked["owner"]]["name"])
    c.say(*c.variants("locked_doc.say", owner=owner, title=title, note=note))
    c.hint(c.text("locked_doc.hint", title=title, version=body.ref("version")))
    c.report(c.text("locked_doc.report"), body.ref("version"))
    c.facts.update(
        topic=c.text("locked_doc.topic", title=title),
        when=c.today.isoformat(),
        summary=c.text("locked_doc.summary", title=title, first=first),
    )


NOTING = tools(DOCS, "list_folders", "create_document", "find_people", "share_document")
UNLOCKING = tools("mail/", "search_messages", "get_message") | tools(
    DOCS, "search_documents", "unlock_document", "get_document", "append_to_document"
)
BLOCKS = [
    follow_up("doc_note", APP, NOTING, doc_note, needs="summary"),
    anchor("locked_doc", APP, UNLOCKING, locked_doc, gives="topic summary when"),
]
