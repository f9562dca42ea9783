"""Chat app: login tokens that expire on the shared clock, membership before posting, messy workspace."""

from __future__ import annotations

from typing import Any

import pytest
from sandbox_results import err, ok

from cworld.sandbox.apps.chat import ChatApp
from cworld.sandbox.apps.clock import ClockApp
from cworld.sandbox.framework import SandboxSession
from cworld.sandbox.framework.server import build_all


@pytest.fixture
def servers() -> dict[str, Any]:
    return build_all(SandboxSession(seed=41, apps=[ChatApp, ClockApp]))


def _login(chat: Any) -> str:
    handle = ok(chat.call_tool_sync("get_my_profile", {}))["handle"]
    return ok(chat.call_tool_sync("login", {"handle": handle}))["token"]


def _channels(chat: Any) -> dict[str, dict[str, Any]]:
    found = ok(chat.call_tool_sync("list_channels", {"include_archived": True, "page_size": 50}))["channels"]
    return {c["name"]: c for c in found}


def test_seeded_workspace_is_messy(servers: dict[str, Any]) -> None:
    chat = servers["chat"]
    unread = ok(chat.call_tool_sync("list_unread", {}))["conversations"]
    assert len(unread) >= 2 and any(u["conversation_id"].startswith("D_") for u in unread)
    channels = _channels(chat)
    old = next(c for c in channels.values() if c["archived"])
    assert old["name"].removesuffix("-old") in channels, "an archived channel shadows the live one"
    state = chat.session.state["chat"]
    assert any(c["private"] and state["me"] not in c["members"] for c in state["channels"].values())
    firsts = [u["name"].split()[0] for u in state["users"].values()]
    assert len(firsts) > len(set(firsts)), "two people share a first name"


def test_changes_need_a_token_from_login(servers: dict[str, Any]) -> None:
    chat = servers["chat"]
    general = _channels(chat)["general"]["channel_id"]
    args = {"channel_id": general, "text": "hello"}
    assert "login" in err(chat.call_tool_sync("post_message", {**args, "token": "guess"}), "auth")
    err(chat.call_tool_sync("login", {"handle": "someone.else"}), "auth")
    token = _login(chat)
    assert ok(chat.call_tool_sync("post_message", {**args, "token": token}))["message"]["text"] == "hello"


def test_tokens_expire_against_the_shared_clock(servers: dict[str, Any]) -> None:
    chat, clock = servers["chat"], servers["clock"]
    token = _login(chat)
    general = _channels(chat)["general"]["channel_id"]
    ok(clock.call_tool_sync("sleep", {"seconds": 600}))
    assert "expired" in err(chat.call_tool_sync("post_message", {"token": token, "channel_id": general, "text": "hi"}),
                            "auth")
    fresh = _login(chat)
    ok(chat.call_tool_sync("post_message", {"token": fresh, "channel_id": general, "text": "hi"}))


def test_posting_needs_membership_and_a_live_channel(servers: dict[str, Any]) -> None:
    chat = servers["chat"]
    token = _login(chat)
    channels = _channels(chat)
    outside = next(c for c in channels.values() if not c["is_member"] and not c["archived"] and not c["private"])
    args = {"token": token, "channel_id": outside["channel_id"], "text": "hi all"}
    assert "join_channel" in err(chat.call_tool_sync("post_message", args), "permission_denied")
    ok(chat.call_tool_sync("join_channel", {"token": token, "channel_id": outside["channel_id"]}))
    ok(chat.call_tool_sync("post_message", args))
    archived = next(c for c in channels.values() if c["archived"])
    err(chat.call_tool_sync("post_message", {**args, "channel_id": archived["channel_id"]}), "conflict")
    err(chat.call_tool_sync("post_message", {**args, "channel_id": "general"}), "not_found")


def test_private_channels_cannot_be_joined(servers: dict[str, Any]) -> None:
    chat = servers["chat"]
    token = _login(chat)
    state = chat.session.state["chat"]
    private = next(c for c in state["channels"].values() if c["private"] and state["me"] not in c["members"])
    err(chat.call_tool_sync("join_channel", {"token": token, "channel_id": private["id"]}), "permission_denied")
    err(chat.call_tool_sync("read_channel", {"channel_id": private["id"]}), "permission_denied")
    assert private["id"] not in {c["channel_id"] for c in _channels(chat).values()}


def test_direct_message_and_mark_read(servers: dict[str, Any]) -> None:
    chat = servers["chat"]
    token = _login(chat)
    dm = next(u for u in ok(chat.call_tool_sync("list_unread", {}))["conversations"] if u["conversation_id"].startswith("D_"))
    ok(chat.call_tool_sync("mark_read", {"token": token, "conversation_id": dm["conversation_id"]}))
    assert dm["conversation_id"] not in {u["conversation_id"] for u in ok(chat.call_tool_sync("list_unread", {}))["conversations"]}
    peer = ok(chat.call_tool_sync("search_users", {"query": dm["name"]}))["users"][0]
    sent = ok(chat.call_tool_sync("send_direct_message", {"token": token, "user_id": peer["user_id"], "text": "sure!"}))
    assert sent["message"]["conversation_id"] == dm["conversation_id"]
    history = ok(chat.call_tool_sync("read_direct_messages", {"user_id": peer["user_id"]}))["messages"]
    assert history[0]["text"] == "sure!" and len(history) == 2


def test_only_your_own_messages_can_change_and_errors_change_nothing(servers: dict[str, Any]) -> None:
    chat = servers["chat"]
    token = _login(chat)
    general = _channels(chat)["general"]["channel_id"]
    theirs = ok(chat.call_tool_sync("read_channel", {"channel_id": general}))["messages"][0]["message_id"]
    before = chat.session.snapshot()
    err(chat.call_tool_sync("edit_message", {"token": token, "message_id": theirs, "text": "mine"}), "permission_denied")
    err(chat.call_tool_sync("create_channel", {"token": token, "name": "general"}), "conflict")
    err(chat.call_tool_sync("create_channel", {"token": token, "name": "Bad Name!"}), "invalid")
    assert chat.session.snapshot() == before


def test_a_thread_pages_its_replies_oldest_first(servers: dict[str, Any]) -> None:
    """get_thread answers the thread's first message and a page of its replies; the page fields count replies."""
    chat = servers["chat"]
    token = _login(chat)
    general = _channels(chat)["general"]["channel_id"]
    root = ok(chat.call_tool_sync("post_message", {"token": token, "channel_id": general, "text": "plan?"}))["message"]
    replies = [ok(chat.call_tool_sync("post_message", {"token": token, "channel_id": general, "text": f"r{n}",
                                                       "thread_id": root["message_id"]}))["message"]["message_id"]
               for n in range(5)]
    seen, page = [], 1
    while True:
        answer = ok(chat.call_tool_sync("get_thread", {"message_id": replies[2], "page": page, "page_size": 2}))
        assert answer["root"]["message_id"] == root["message_id"] and answer["total"] == 5
        seen += [m["message_id"] for m in answer["replies"]]
        if not answer["has_more"]:
            break
        page += 1
    assert seen == replies and page == 3


def test_unread_counts_in_a_grown_workspace(servers: dict[str, Any]) -> None:
    """list_unread reads each conversation's messages after your last read off a sorted index: the same counts
    and oldest times as walking every message (yours and deleted ones left out)."""
    chat = servers["chat"]
    state = chat.session.state["chat"]  # grown before any call, so the indexes are built over it
    messages, me = state["messages"], state["me"]
    for n, message in enumerate(list(messages.values()) * 8):
        key = f"msg_9{n:04d}"
        messages[key] = {**message, "id": key, "deleted": n % 7 == 0, "author": me if n % 5 == 0 else message["author"],
                         "ts": message["ts"][:-3] + f"{n % 60:02d}Z"}
    last_read = state["last_read"]
    wanted: dict[str, list[str]] = {}
    for m in messages.values():
        seen = last_read.get(m["conversation_id"])
        if seen is not None and m["ts"] > seen and m["author"] != me and not m["deleted"]:
            wanted.setdefault(m["conversation_id"], []).append(m["ts"])
    answer = ok(chat.call_tool_sync("list_unread", {"page_size": 50}))
    assert {u["conversation_id"]: (u["unread"], u["oldest_unread_ts"]) for u in answer["conversations"]} == {
        c: (len(ts), min(ts)) for c, ts in wanted.items()} and len(wanted) >= 2
