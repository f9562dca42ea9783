"""Team-chat blocks: post the news in a channel (joining it first if need be), or message a colleague
directly; one sign-in serves both."""

from __future__ import annotations

from cworld.synth.offline.blocks.dictated import dictated
from cworld.synth.offline.composer import Composer, follow_up, tools
from cworld.synth.offline.people import colleague, exclude_twin, first_name

APP = "chat"
CHAT = "chat/"
COMPANY_WIDE = ("general", "random")


def chat_post(c: Composer) -> None:
    channels = [
        ch
        for ch in c.state["chat"]["channels"].values()
        if not ch["archived"] and not ch["private"] and ch["name"] not in COMPANY_WIDE
    ]
    outside = [ch for ch in channels if c.state["chat"]["me"] not in ch["members"]]
    if outside and CHAT + "join_channel" in c.wanted:
        channels = outside  # the candidates include joining a channel: pick one I am not in yet
    channel = c.pick(sorted(channels, key=lambda ch: ch["id"]))
    banned = [ch["id"] for ch in c.state["chat"]["channels"].values() if ch["name"] in COMPANY_WIDE]
    token, login = _login(c)
    name = channel["name"]
    c.subgoal("announce", after=[*c.upstream(), login], channel=name)
    found = c.step("channel", CHAT + "list_channels", {"query": name}, channel=name)
    ref = found.ref(f"channels[name={name}].channel_id")
    if c.state["chat"]["me"] not in channel["members"]:
        c.step("join", CHAT + "join_channel", {"token": token, "channel_id": ref}, channel=name)
    posted = {"token": token, "channel_id": ref, "text": dictated(c.facts["summary"])}
    c.step("post", CHAT + "post_message", posted, channel=name, topic=c.facts["topic"])
    if banned:
        kept_out = {"kind": "argument_excludes", "tool": CHAT + "post_message", "argument": "channel_id"}
        c.decide("channel", "exclusion", {**kept_out, "value": banned})
    c.say(*c.variants("chat_post.say", channel=name, text=posted["text"]))


def chat_dm(c: Composer) -> None:
    users = {u["name"]: uid for uid, u in c.state["chat"]["users"].items() if uid != c.state["chat"]["me"]}
    who = colleague(c, list(users), avoid=set(c.facts.get("people", [])))
    token, login = _login(c)
    c.subgoal("direct_message", after=[*c.upstream(), login], who=who)
    found = c.step("find_user", CHAT + "search_users", {"query": first_name(who)}, who=who)
    sent = {
        "token": token,
        "user_id": found.ref(f"users[name={who}].user_id"),
        "text": dictated(c.text("chat_dm.text", first=first_name(who), summary=c.facts["summary"])),
    }
    c.step("dm", CHAT + "send_direct_message", sent, who=who, topic=c.facts["topic"])
    exclude_twin(c, "dm_twin", who, users, CHAT + "send_direct_message", "user_id")
    c.say(*c.variants("chat_dm.say", who=who, text=sent["text"]))


def _login(c: Composer) -> tuple[str, str]:
    """(token reference, sign-in sub-goal id); one sign-in serves every chat block of the task."""
    if "chat_token" not in c.facts:
        goal = c.subgoal("chat_login", after=[])
        me = c.step("profile", CHAT + "get_my_profile", {})
        token = c.step("login", CHAT + "login", {"handle": me.ref("handle")})
        c.facts["chat_token"] = (token.ref("token"), goal)
    return c.facts["chat_token"]


SIGN_IN = tools(CHAT, "get_my_profile", "login")
POSTING = SIGN_IN | tools(CHAT, "list_channels", "join_channel", "post_message")
MESSAGING = SIGN_IN | tools(CHAT, "search_users", "send_direct_message")
BLOCKS = [
    follow_up("chat_post", APP, POSTING, chat_post, needs="summary"),
    follow_up("chat_dm", APP, MESSAGING, chat_dm, needs="summary"),
]
