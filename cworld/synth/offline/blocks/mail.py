"""Mail block: email a colleague the details an anchor left (directly, or as a draft that is then sent); the
request dictates the subject and the body."""

from __future__ import annotations

from cworld.sandbox.framework import world
from cworld.synth.offline.blocks.dictated import dictated
from cworld.synth.offline.composer import Composer, follow_up, tools
from cworld.synth.offline.people import colleague, exclude_twin, first_name

APP = "mail"
MAIL = "mail/"


def email(c: Composer) -> None:
    contacts = {p["name"]: cid for cid, p in c.state["mail"]["contacts"].items()}
    who = colleague(c, list(contacts), avoid=set(c.facts.get("people", [])))
    me = world.cast(c.seed)["me"]
    topic = c.facts["topic"]
    c.subgoal("email", who=who)
    found = c.step("find_contact", MAIL + "search_contacts", {"query": first_name(who)}, who=who)
    message = {
        "to": [found.ref(f"contacts[name={who}].contact_id")],
        "subject": dictated(c.text("email.subject", topic=topic)),
        "body": dictated(c.text("email.body", first=first_name(who), summary=c.facts["summary"], me=me["first"])),
    }
    if c.wants(MAIL + "create_draft", MAIL + "send_draft"):
        draft = c.step("draft", MAIL + "create_draft", message, topic=topic, who=who)
        c.step("send", MAIL + "send_draft", {"draft_id": draft.ref("message_id")}, why="send_draft", who=who)
        tool = MAIL + "create_draft"
    else:
        c.step("send", MAIL + "send_email", message, topic=topic, who=who)
        tool = MAIL + "send_email"
    exclude_twin(c, "mail_twin", who, contacts, tool, "to")
    c.say(*c.variants("email.say", who=who, subject=message["subject"], body=message["body"]))


SENDING = tools(MAIL, "search_contacts", "send_email", "create_draft", "send_draft")
BLOCKS = [follow_up("email", APP, SENDING, email, needs="summary")]
