"""A record the session writes looks like the scenario's records of its collection (engine/world/likeness.py):
the service's field names and value forms, the session user as author, empty defaults for a new thing.
That is what lets the simulated end state be graded like the live one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cworld.data_model import PublicTask, Scenario, ScenarioEntity, ToolResult
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.schema.engine import SchemaEngine
from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework.server import tool_specs

ROOT = Path(__file__).resolve().parents[1]
CARDS = load_cards(ROOT / "category_cards")
TOOLS = {t.id: t for app in all_apps() for t in tool_specs(app)}

SCENARIO = Scenario(
    today="2026-03-17T10:15:00+00:00",
    entities=[
        ScenarioEntity(app="chat", kind="user", id="U_0001", attributes={"name": "Deborah Taylor", "handle": "deborah.taylor"}),
        ScenarioEntity(app="chat", kind="user", id="U_0018", attributes={"name": "Omar Haddad", "handle": "omar.haddad"}),
        ScenarioEntity(app="chat", kind="channel", id="C_0005", attributes={"name": "procurement", "private": False}),
        *[ScenarioEntity(app="chat", kind="message", id=f"chat_001{n}", attributes={
            "conversation_id": "C_0005", "author": "U_0018", "text": f"Quote {n} is in.", "ts": "2026-03-08T19:30:00Z",
            "edited": False, "thread_parent": None, "reactions": {}, "deleted": False}) for n in range(3)],
        ScenarioEntity(app="taskboard", kind="card", id="crd_0007", attributes={
            "board_id": "brd_0001", "title": "Monitor crash rate", "due": "2026-04-03T12:15:00Z", "members": ["person_183"]}),
        ScenarioEntity(app="taskboard", kind="comment", id="cmt_0004", attributes={
            "card_id": "crd_0007", "author": "person_181", "at": "2026-03-09T10:15:00Z", "text": "Draft is ready."}),
        ScenarioEntity(app="docs", kind="person", id="person_156", attributes={"name": "Deborah Taylor"}),
    ],
    notes=["The user is chat/user/U_0001 on chat.", "The user is docs/person/person_156 on docs."],
)
TASK = PublicTask(id="t-likeness", query="Post the update on procurement and move the card.", scenario=SCENARIO)


def call(engine: SchemaEngine, log: SessionLog, tool_id: str, args: dict[str, Any]) -> ToolResult:
    result = engine.respond_sync(TOOLS[tool_id], args, log)
    log.record(tool_id, args, result)
    assert not result.is_error, result.text
    return result


def created(engine: SchemaEngine, log: SessionLog, server: str, kind: str) -> dict[str, Any]:
    changes = next(c for c in engine.world_changes(log) if (c.server, c.kind) == (server, kind))
    (record,) = changes.created.values()
    return record


def test_a_posted_message_is_the_users_in_the_channel_named_with_a_new_things_empty_fields() -> None:
    engine, log = SchemaEngine(CARDS, TOOLS.values()), SessionLog(seed=3, context=TASK)
    call(engine, log, "chat/post_message", {"token": "t", "channel_id": "C_0005", "text": "Quotes are in."})
    message = created(engine, log, "chat", "message")
    assert message["conversation_id"] == "C_0005"  # the argument's id form is that of the records' field
    assert message["author"] == "U_0001"  # the scenario's notes say who the user is; records hold ids
    assert (message["thread_parent"], message["deleted"], message["edited"], message["reactions"]) == (None, False, False, {})
    assert message["text"] == "Quotes are in."


def test_written_values_take_the_records_forms_and_the_user_is_known_across_apps_by_id_form() -> None:
    engine, log = SchemaEngine(CARDS, TOOLS.values()), SessionLog(seed=4, context=TASK)
    call(engine, log, "taskboard/set_due_date", {"card_id": "crd_0007", "due": "2026-03-22T12:00"})
    call(engine, log, "taskboard/add_comment", {"card_id": "crd_0007", "text": "Moved the due date."})
    card = next(c for c in engine.world_changes(log) if c.kind == "card")
    assert card.updated["crd_0007"]["due"] == "2026-03-22T12:00:00Z"  # as the records write a time
    assert created(engine, log, "taskboard", "comment")["author"] == "person_156"  # the docs note's id, same form


def test_without_a_scenario_records_keep_the_cards_vocabulary() -> None:
    engine, log = SchemaEngine(CARDS, TOOLS.values()), SessionLog(seed=3)
    call(engine, log, "chat/post_message", {"token": "t", "channel_id": "C_0001", "text": "Hello"})
    message = created(engine, log, "chat", "message")
    assert "deleted" not in message and isinstance(message["author"], str) and not message["author"].startswith("U_")


def test_value_forms_in_isolation() -> None:
    from cworld.engine.world.likeness import _NONE, _common_empty, _time_like

    assert _time_like("2026-03-22T12:00", "2026-04-03T12:15:00Z") == "2026-03-22T12:00:00Z"
    assert _time_like("2026-03-22T14:00:00+02:00", "2026-04-03T12:15:00Z") == "2026-03-22T12:00:00Z"
    assert _time_like("2026-03-22T12:00:00Z", "2026-04-03T12:15:00+00:00") == "2026-03-22T12:00:00+00:00"
    assert _common_empty([None, None, "m_1"]) is None and _common_empty(["open", "open"]) is _NONE
    assert _common_empty([[], ["a"], ["b"]]) is _NONE  # an empty value most records do not share


def test_recipients_given_as_contact_ids_are_held_as_the_records_hold_people() -> None:
    mail = Scenario(today="2026-03-17", entities=[
        ScenarioEntity(app="mail", kind="contact", id="contact_0009", attributes={
            "name": "Chidi Oliveira", "email": "chidi.oliveira@bellows.example"}),
        ScenarioEntity(app="mail", kind="message", id="mail_0013", attributes={
            "thread_id": "thread_0013", "folder": "inbox", "from": {"name": "Noah Brown", "email": "noah@datum.example"},
            "to": [{"name": "Deborah Taylor", "email": "deborah.taylor@datum.example"}], "subject": "Hi", "body": "Hi"})],
        notes=["mail account: name Deborah Taylor, email deborah.taylor@datum.example"])
    engine, log = SchemaEngine(CARDS, TOOLS.values()), SessionLog(seed=3, context=TASK.model_copy(update={"scenario": mail}))
    call(engine, log, "mail/search_contacts", {"query": "Chidi"})
    call(engine, log, "mail/send_email", {"to": ["contact_0009", "ana@example.com"], "subject": "Update", "body": "Done."})
    message = created(engine, log, "mail", "message")
    assert message["to"] == [{"name": "Chidi Oliveira", "email": "chidi.oliveira@bellows.example"},
                             {"name": "", "email": "ana@example.com"}]
    assert message["from"] == {"name": "Deborah Taylor", "email": "deborah.taylor@datum.example"}
