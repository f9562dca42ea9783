"""Message blocks: email someone the details, post in a channel or send a direct message on chat, write up
a note in the shared documents and share it."""

from __future__ import annotations

from cworld.sandbox.framework import world
from cworld.synth.offline.composer import Block, Composer
from cworld.synth.offline.people import colleague, exclude_twin, first_name

MAIL, CHAT, DOCS = "mail/", "chat/", "docs/"


def email(c: Composer) -> None:
    contacts = {p["name"]: cid for cid, p in c.state["mail"]["contacts"].items()}
    who = colleague(c, list(contacts), avoid=set(c.facts.get("people", [])))
    me = world.cast(c.seed)["me"]
    c.subgoal("email", f"Email {who} the details")
    found = c.step(
        "find_contact", MAIL + "search_contacts", {"query": first_name(who)}, f"find {who}'s contact id"
    )
    to = [found.ref(f"contacts[name={who}].contact_id")]
    body = f"Hi {first_name(who)},\n\n{c.facts['summary']}\n\nBest,\n{me['first']}"
    subject = f"Update: {c.facts['topic']}"
    if c.wants(MAIL + "create_draft", MAIL + "send_draft"):
        draft = c.step(
            "draft",
            MAIL + "create_draft",
            {"to": to, "subject": subject, "body": body},
            f"write the email about {c.facts['topic']} to {who} as a draft",
        )
        c.step("send", MAIL + "send_draft", {"draft_id": draft.ref("message_id")}, f"send the draft to {who}")
        tool = MAIL + "create_draft"
    else:
        c.step(
            "send",
            MAIL + "send_email",
            {"to": to, "subject": subject, "body": body},
            f"email {who} the details of {c.facts['topic']}",
        )
        tool = MAIL + "send_email"
    exclude_twin(c, "mail_twin", who, contacts, tool, "to")
    c.say(f"Email {who} the details.", f"Send {who} an email with the details.", f"Let {who} know by email.")


def chat_post(c: Composer) -> None:
    channels = [
        ch
        for ch in c.state["chat"]["channels"].values()
        if not ch["archived"] and not ch["private"] and ch["name"] not in ("general", "random")
    ]
    outside = [ch for ch in channels if c.state["chat"]["me"] not in ch["members"]]
    if outside and CHAT + "join_channel" in c.wanted:
        channels = outside  # the candidates include joining a channel: pick one I am not in yet
    channel = c.pick(sorted(channels, key=lambda ch: ch["id"]))
    banned = [ch["id"] for ch in c.state["chat"]["channels"].values() if ch["name"] in ("general", "random")]
    token, login = _login(c)
    c.subgoal("announce", f"Post the news in #{channel['name']}", after=[*c.upstream(), login])
    found = c.step(
        "channel", CHAT + "list_channels", {"query": channel["name"]}, f"find the #{channel['name']} channel"
    )
    ref = found.ref(f"channels[name={channel['name']}].channel_id")
    if c.state["chat"]["me"] not in channel["members"]:
        c.step(
            "join",
            CHAT + "join_channel",
            {"token": token, "channel_id": ref},
            f"join #{channel['name']} to post there",
        )
    c.step(
        "post",
        CHAT + "post_message",
        {"token": token, "channel_id": ref, "text": c.facts["summary"]},
        f"tell #{channel['name']} about {c.facts['topic']}",
    )
    if banned:
        c.decide(
            "channel",
            "exclusion",
            "Keep it out of the company-wide channels (#general and #random).",
            {
                "kind": "argument_excludes",
                "tool": CHAT + "post_message",
                "argument": "channel_id",
                "value": banned,
            },
        )
    c.say(
        f"Post the details in the #{channel['name']} channel.",
        f"Let the #{channel['name']} channel know.",
        f"Share it with the team in #{channel['name']}.",
    )


def chat_dm(c: Composer) -> None:
    users = {u["name"]: uid for uid, u in c.state["chat"]["users"].items() if uid != c.state["chat"]["me"]}
    who = colleague(c, list(users), avoid=set(c.facts.get("people", [])))
    token, login = _login(c)
    c.subgoal("direct_message", f"Message {who} directly", after=[*c.upstream(), login])
    found = c.step(
        "find_user", CHAT + "search_users", {"query": first_name(who)}, f"find {who}'s chat user id"
    )
    c.step(
        "dm",
        CHAT + "send_direct_message",
        {
            "token": token,
            "user_id": found.ref(f"users[name={who}].user_id"),
            "text": f"Hi {first_name(who)}! {c.facts['summary']}",
        },
        f"send {who} the details of {c.facts['topic']} in a direct message",
    )
    exclude_twin(c, "dm_twin", who, users, CHAT + "send_direct_message", "user_id")
    c.say(f"Send {who} a direct message on chat with the details.", f"Ping {who} privately on chat about it.")


def _login(c: Composer) -> tuple[str, str]:
    """(token reference, sign-in sub-goal id); one sign-in serves every chat block of the task."""
    if "chat_token" not in c.facts:
        goal = c.subgoal("chat_login", "Sign in to the team chat", after=[])
        me = c.step(
            "profile",
            CHAT + "get_my_profile",
            {},
            "get my chat handle to sign in before messaging the team channel or a colleague",
        )
        token = c.step(
            "login",
            CHAT + "login",
            {"handle": me.ref("handle")},
            "sign in to chat, which posting to the team channel or messaging needs",
        )
        c.facts["chat_token"] = (token.ref("token"), goal)
    return c.facts["chat_token"]


def doc_note(c: Composer) -> None:
    folders = {f["name"]: fid for fid, f in c.state["docs"]["folders"].items()}
    folder = c.pick(sorted(n for n in folders if n != "Archive"))
    directory = {
        p["name"]: pid for pid, p in c.state["docs"]["directory"].items() if pid != c.state["docs"]["me"]
    }
    who = colleague(c, list(directory), avoid=set(c.facts.get("people", [])))
    title = f"Notes: {c.facts['topic']}"
    c.subgoal("write_note", f"Write up {c.facts['topic']} and share it with {who}")
    listed = c.step(
        "folders",
        DOCS + "list_folders",
        {},
        f"find the {folder} folder to file the notes on {c.facts['topic']}",
    )
    doc = c.step(
        "note",
        DOCS + "create_document",
        {
            "title": title,
            "folder_id": listed.ref(f"folders[name={folder}].folder_id"),
            "content": f"# {title}\n\n{c.facts['summary']}",
        },
        f"write the notes on {c.facts['topic']}",
    )
    person = c.step(
        "find_reader", DOCS + "find_people", {"query": first_name(who)}, f"get {who}'s id to share the notes"
    )
    role = c.rng.choice(["viewer", "editor"])
    c.step(
        "share",
        DOCS + "share_document",
        {
            "document_id": doc.ref("document_id"),
            "role": role,
            "person_id": person.ref(f"people[name={who}].person_id"),
        },
        f"share the notes with {who} so they can {'edit' if role == 'editor' else 'read'} them",
    )
    exclude_twin(c, "doc_twin", who, directory, DOCS + "share_document", "person_id")
    c.say(
        f"Write it up in a document in my {folder} folder and share it with {who} "
        f"({'can edit' if role == 'editor' else 'read only'}).",
        f"Keep a note of it in a new document under {folder}, shared with {who} as "
        f"{'an editor' if role == 'editor' else 'a viewer'}.",
    )


BLOCKS = [
    Block(
        "email",
        False,
        frozenset(MAIL + n for n in ("search_contacts", "send_email", "create_draft", "send_draft")),
        email,
        needs=frozenset({"summary"}),
    ),
    Block(
        "chat_post",
        False,
        frozenset(
            CHAT + n for n in ("get_my_profile", "login", "list_channels", "join_channel", "post_message")
        ),
        chat_post,
        needs=frozenset({"summary"}),
    ),
    Block(
        "chat_dm",
        False,
        frozenset(CHAT + n for n in ("get_my_profile", "login", "search_users", "send_direct_message")),
        chat_dm,
        needs=frozenset({"summary"}),
    ),
    Block(
        "doc_note",
        False,
        frozenset(DOCS + n for n in ("list_folders", "create_document", "find_people", "share_document")),
        doc_note,
        needs=frozenset({"summary"}),
    ),
]
