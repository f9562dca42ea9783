"""Docs app: edit-access requests, a password kept in the mail app, version conflicts, outdated copies."""

from __future__ import annotations

import re
from typing import Any

import pytest
from sandbox_results import err, ok

from cworld.sandbox.apps.docs import DocsApp
from cworld.sandbox.apps.mail import MailApp
from cworld.sandbox.framework import SandboxSession
from cworld.sandbox.framework.server import build_all


@pytest.fixture
def servers() -> dict[str, Any]:
    return build_all(SandboxSession(seed=51, apps=[MailApp, DocsApp]))


def _docs(docs: Any) -> list[dict[str, Any]]:
    return ok(docs.call_tool_sync("list_documents", {"page_size": 50}))["documents"]


def test_seeded_documents_are_messy(servers: dict[str, Any]) -> None:
    docs = servers["docs"]
    listed = _docs(docs)
    titles = [d["title"] for d in listed]
    twin = next(t for t in titles if titles.count(t) == 2)
    copies = sorted((d for d in listed if d["title"] == twin), key=lambda d: d["version"])
    folders = {f["folder_id"]: f["name"] for f in ok(docs.call_tool_sync("list_folders", {}))["folders"]}
    assert folders[copies[0]["folder_id"]] == "Archive" and copies[0]["version"] < copies[1]["version"]
    assert copies[0]["updated_at"] > copies[1]["updated_at"], "the outdated copy was touched more recently"
    assert any(d["your_role"] == "viewer" for d in listed) and any(d["locked"] for d in listed)
    assert any(ok(docs.call_tool_sync("list_comments", {"document_id": d["document_id"]}))["comments"] for d in listed)


def test_viewers_must_request_edit_access_first(servers: dict[str, Any]) -> None:
    docs = servers["docs"]
    doc = next(d for d in _docs(docs) if d["your_role"] == "viewer")
    args = {"document_id": doc["document_id"], "content": "new text", "expected_version": doc["version"]}
    assert "request_edit_access" in err(docs.call_tool_sync("update_document", args), "permission_denied")
    assert ok(docs.call_tool_sync("request_edit_access", {"document_id": doc["document_id"]}))["your_role"] == "editor"
    assert ok(docs.call_tool_sync("update_document", args))["version"] == doc["version"] + 1


def test_locked_document_opens_with_the_password_from_mail(servers: dict[str, Any]) -> None:
    docs, mail = servers["docs"], servers["mail"]
    locked = next(d for d in _docs(docs) if d["locked"])
    assert "unlock_document" in err(docs.call_tool_sync("get_document", {"document_id": locked["document_id"]}),
                                    "precondition")
    err(docs.call_tool_sync("unlock_document", {"document_id": locked["document_id"], "password": "guess"}), "auth")
    hit = ok(mail.call_tool_sync("search_messages", {"query": f"password {locked['title']}"}))["messages"][0]
    body = ok(mail.call_tool_sync("get_message", {"message_id": hit["message_id"]}))["body"]
    password = re.search(r"password is (\S+)", body).group(1)
    ok(docs.call_tool_sync("unlock_document", {"document_id": locked["document_id"], "password": password}))
    assert ok(docs.call_tool_sync("get_document", {"document_id": locked["document_id"]}))["content"]


def test_saving_over_a_newer_version_is_a_conflict(servers: dict[str, Any]) -> None:
    docs = servers["docs"]
    doc = next(d for d in _docs(docs) if d["your_role"] == "owner" and not d["locked"])
    current = ok(docs.call_tool_sync("get_document", {"document_id": doc["document_id"]}))
    ok(docs.call_tool_sync("append_to_document", {"document_id": doc["document_id"], "text": "More."}))
    before = docs.session.snapshot()
    stale = {"document_id": doc["document_id"], "content": "mine", "expected_version": current["version"]}
    assert "get_document again" in err(docs.call_tool_sync("update_document", stale), "conflict")
    assert docs.session.snapshot() == before
    ok(docs.call_tool_sync("update_document", {**stale, "expected_version": current["version"] + 1}))


def test_restore_version_brings_back_old_text_as_a_new_version(servers: dict[str, Any]) -> None:
    docs = servers["docs"]
    doc = next(d for d in _docs(docs) if d["your_role"] == "owner" and d["version"] >= 2)
    history = ok(docs.call_tool_sync("list_versions", {"document_id": doc["document_id"]}))
    old = ok(docs.call_tool_sync("get_version", {"document_id": doc["document_id"], "version": 1}))["content"]
    restored = ok(docs.call_tool_sync("restore_version", {"document_id": doc["document_id"], "version": 1}))
    assert restored["content"] == old and restored["version"] == history["current"] + 1
    err(docs.call_tool_sync("get_version", {"document_id": doc["document_id"], "version": 99}), "not_found")


def test_sharing_needs_person_ids_and_unsharing_needs_ownership(servers: dict[str, Any]) -> None:
    docs = servers["docs"]
    listed = _docs(docs)
    mine = next(d for d in listed if d["your_role"] == "owner" and not d["locked"])
    person = ok(docs.call_tool_sync("find_people", {"page_size": 1}))["people"][0]
    err(docs.call_tool_sync("share_document", {"document_id": mine["document_id"], "person_id": person["name"],
                                               "role": "viewer"}), "not_found")
    shared = ok(docs.call_tool_sync("share_document", {"document_id": mine["document_id"],
                                                       "person_id": person["person_id"], "role": "editor"}))
    assert shared["shared_with"][person["person_id"]] == "editor"
    theirs = next(d for d in listed if d["your_role"] == "editor" and not d["locked"])
    some_one = next(p for p, r in ok(docs.call_tool_sync("get_document", {"document_id": theirs["document_id"]}))
                    ["shared_with"].items() if r != "owner")
    err(docs.call_tool_sync("unshare_document", {"document_id": theirs["document_id"], "person_id": some_one}),
        "permission_denied")


def test_document_lists_and_folder_counts_in_a_grown_workspace(servers: dict[str, Any]) -> None:
    """list_documents and list_folders read groups per (person, folder, trashed): the same answers as walking
    every document you can open, newest first, trashed ones only when asked."""
    docs = servers["docs"]
    state = docs.session.state["docs"]  # grown before any call, so the indexes are built over it
    me, documents = state["me"], state["documents"]
    for n, doc in enumerate(list(documents.values()) * 4):
        key = f"doc_9{n:03d}"
        documents[key] = {**doc, "id": key, "trashed": n % 3 == 0, "updated_at": doc["updated_at"][:-3] + "00Z",
                          "access": {**doc["access"], me: (None, "viewer")[n % 5 != 0]}}
    folder = next(iter(state["folders"]))
    for arguments in ({}, {"include_trashed": True}, {"folder_id": folder}, {"folder_id": folder, "include_trashed": True}):
        wanted = sorted((d for d in documents.values() if d["access"].get(me) is not None
                         and (arguments.get("include_trashed") or not d["trashed"])
                         and arguments.get("folder_id", d["folder_id"]) == d["folder_id"]),
                        key=lambda d: (d["updated_at"], d["id"]), reverse=True)
        seen, page = [], 1
        while True:
            answer = ok(docs.call_tool_sync("list_documents", {**arguments, "page": page, "page_size": 7}))
            seen += [d["document_id"] for d in answer["documents"]]
            if not answer["has_more"]:
                break
            page += 1
        assert seen == [d["id"] for d in wanted] and answer["total"] == len(wanted), arguments
    counts = {f["folder_id"]: f["documents"] for f in ok(docs.call_tool_sync("list_folders", {"page_size": 50}))["folders"]}
    assert counts == {f: sum(1 for d in documents.values() if d["folder_id"] == f and not d["trashed"]
                             and d["access"].get(me) is not None) for f in state["folders"]}
