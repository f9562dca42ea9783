"""The messaging card's families on a team chat written for the test (issue 33): a direct message opens the one
conversation of the two people once, a reply in a thread stays in its channel, a channel's name is a handle and
its maker is a member, joining is once, and reactions are kept as the world keeps them."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR = {"type": "string"}
IDS = {"type": "array", "items": {"type": "string"}}


def tool(name: str, props: dict[str, Any], required: list[str] | None = None) -> ToolSpec:
    return ToolSpec(server="team-chat", name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props,
                                  "required": list(props) if required is None else required})


TOOLS = [tool("send_direct_message", {"user_id": STR, "text": STR}),
         tool("post_message", {"channel_id": STR, "text": STR, "thread_id": STR}, ["channel_id", "text"]),
         tool("create_channel", {"name": STR, "member_ids": IDS}, ["name"]),
         tool("join_channel", {"channel_id": STR}), tool("get_channel", {"channel_id": STR}),
         tool("add_reaction", {"message_id": STR, "emoji": STR}), tool("get_message", {"message_id": STR}),
         tool("list_channels", {}).model_copy(update={"output_schema": {
             "type": "object", "required": ["channels"], "properties": {"channels": {"type": "array", "items": {
                 "type": "object", "required": ["channel_id", "name", "is_member"], "additionalProperties": False,
                 "properties": {"channel_id": STR, "name": STR, "is_member": {"type": "boolean"}}}}}}})]


def chat() -> Any:
    users = {u: {"id": u, "name": n} for u, n in (("U_1", "Ana"), ("U_2", "Bo"), ("U_3", "Cy"))}
    channels = {"C_0001": {"id": "C_0001", "name": "general", "members": ["U_2"]},
                "C_0002": {"id": "C_0002", "name": "launch", "members": ["U_1", "U_2"]}}
    dms = {"D_0001": {"id": "D_0001", "members": ["U_1", "U_3"]}}
    messages = {f"m_{i}": {"id": f"m_{i}", "conversation_id": c, "author": "U_2", "text": "hi", "ts": "2026-07-01T09:00:00Z",
                           "thread_parent": None, "reactions": {}} for i, c in ((1, "C_0001"), (2, "C_0002"), (3, "C_0001"))}
    state = {"me": "U_1", "users": users, "channels": channels, "dms": dms, "messages": messages}
    kinds = {"user": "users", "channel": "channels", "conversation": "dms", "message": "messages"}
    return rules_caller("team-chat", "messaging", state, kinds, TOOLS)


def test_a_direct_message_opens_the_pairs_conversation_once() -> None:
    call = chat()
    first = json.loads(call("send_direct_message", user_id="U_2", text="lunch?").text)
    again = json.loads(call("send_direct_message", user_id="U_2", text="12:30").text)
    assert first["conversation_id"] == again["conversation_id"] == "D_0002"  # the world's own key format
    known = json.loads(call("send_direct_message", user_id="U_3", text="hey").text)
    assert known["conversation_id"] == "D_0001"
    assert call("send_direct_message", user_id="U_9", text="hey").error_class == "not_found"


def test_a_thread_reply_stays_in_its_channel() -> None:
    call = chat()
    assert not call("post_message", channel_id="C_0002", text="same", thread_id="m_2").is_error
    assert call("post_message", channel_id="C_0002", text="elsewhere", thread_id="m_1").is_error


def test_only_a_member_posts_in_a_channel_and_joining_makes_one() -> None:
    """Slack's `not_in_channel`: the card's stated failure, held by a rule (a post had gone through anywhere)."""
    call = chat()
    refused = call("post_message", channel_id="C_0001", text="hello")
    assert refused.error_class == "business" and "join_channel" in refused.text
    call("join_channel", channel_id="C_0001")
    assert not call("post_message", channel_id="C_0001", text="hello").is_error


def test_a_channel_name_is_a_handle_and_its_maker_a_member() -> None:
    call = chat()
    assert call("create_channel", name="Launch Team").is_error
    made = call("create_channel", name="launch-team", member_ids=["U_3"])
    assert not made.is_error, made.text
    assert json.loads(made.text)["members"] == ["U_1", "U_3"]


def test_joining_is_once_and_reactions_are_kept_as_the_world_keeps_them() -> None:
    call = chat()
    call("join_channel", channel_id="C_0001")
    call("join_channel", channel_id="C_0001")
    assert json.loads(call("get_channel", channel_id="C_0001").text)["members"] == ["U_2", "U_1"]
    call("add_reaction", message_id="m_1", emoji="tada")
    assert json.loads(call("get_message", message_id="m_1").text)["reactions"] == {"tada": ["U_1"]}


def test_a_listing_says_whether_i_am_a_member_as_the_channel_says() -> None:
    """`is_member` beside a channel's members: whether the signed-in user is among them, never a coin toss."""
    call = chat()
    listed = {c["channel_id"]: c["is_member"] for c in json.loads(call("list_channels").text)["channels"]}
    assert listed == {"C_0001": False, "C_0002": True}
