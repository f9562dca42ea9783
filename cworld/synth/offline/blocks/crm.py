"""CRM block (the schema-only `helio-crm` catalog): log the outcome against an external contact and set a
follow-up. Its calls are planned, never probed (`Composer.describe`)."""

from __future__ import annotations

from datetime import timedelta

from cworld.sandbox.framework import world
from cworld.synth.offline.blocks.dictated import dictated
from cworld.synth.offline.composer import Composer, follow_up, tools
from cworld.synth.offline.phrases import day

APP = "crm"
CRM = "helio-crm/"


def crm(c: Composer) -> None:
    contact = c.pick(world.cast(c.seed)["externals"])
    name = contact["name"]
    c.subgoal("crm", name=name)
    c.presume(CRM.rstrip("/"), "contact", {"name": name, "company": contact["company"]})
    found = c.describe("crm_contact", CRM + "search_contacts", {"query": name}, name=name)
    ref = found.ref("contacts.0.contact_id")
    note = {"kind": "note", "summary": dictated(c.facts["summary"]), "contact_id": ref}
    c.describe("crm_note", CRM + "log_activity", note, topic=c.facts["topic"], name=name)
    due = (c.today + timedelta(days=7)).isoformat()
    task = {"title": c.text("crm.follow_up", name=name), "due_date": due, "contact_id": ref}
    c.describe("crm_follow_up", CRM + "create_follow_up_task", task, name=name)
    c.say(*c.variants("crm.say", name=name, company=contact["company"], day=day(due), text=note["summary"]))


LOGGING = tools(CRM, "search_contacts", "log_activity", "create_follow_up_task")
BLOCKS = [follow_up("crm", APP, LOGGING, crm, needs="summary topic")]
