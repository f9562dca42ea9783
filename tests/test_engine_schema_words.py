"""What a tool's schema says in words (issue 33: inference that reads real schemas): a format its description
documents (`"UTC time, YYYY-MM-DDTHH:MM"`) and the kind its description says an argument's ids are of (`to:
"contact ids, not addresses"`). The service here is written for the test: a small team mailer on the email card."""

from __future__ import annotations

import json
from typing import Any

import pytest
from engine_helpers import rules_caller

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.rules import RulesEngine
from cworld.engine.rules.formats import documented_formats
from cworld.engine.world.base import ServerWorld, World
from cworld.environment import Environment

SERVER = "team-mailer"
CONTACTS = {"ct_0001": {"name": "Ada Byrne", "email": "ada@example.com"},
            "ct_0002": {"name": "Tomas Vel", "email": "tomas@example.com"}}


def tool(name: str, props: dict[str, Any], required: list[str]) -> ToolSpec:
    return ToolSpec(server=SERVER, name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": required})


TOOLS = [
    tool("send_message", {"recipients": {"type": "array", "items": {"type": "string"},
                                         "description": "contact ids to send to, not addresses"},
                          "subject": {"type": "string"}, "body": {"type": "string"},
                          "send_at": {"type": "string", "description": "when to send it: UTC time, YYYY-MM-DDTHH:MM"}},
         ["recipients", "subject", "body"]),
    tool("daily_digest", {"day": {"type": "string", "description": "the day, YYYY-MM-DD"}}, ["day"]),
    tool("mark_read", {"message_ids": {"type": "array", "items": {"type": "string"}}}, ["message_ids"]),
    tool("get_message", {"message_id": {"type": "string"}}, ["message_id"]),
    tool("list_messages", {}, []),
    tool("create_draft", {"subject": {"type": "string"}, "body": {"type": "string"}}, ["subject", "body"]),
    tool("update_draft", {"draft_id": {"type": "string"}, "subject": {"type": "string"}}, ["draft_id", "subject"]),
    tool("send_draft", {"draft_id": {"type": "string"}}, ["draft_id"]),
]
MESSAGES = {f"msg_{n}": {"subject": f"Note {n}", "folder": "inbox", "read": False, "starred": False} for n in (1, 2, 3)}


@pytest.fixture(scope="module")
def engine() -> RulesEngine:
    cards = load_cards(Environment.resolve().category_cards)
    world = World(seed=0, now="2026-08-01T09:00:00Z", servers={SERVER: ServerWorld(
        SERVER, {"contacts": CONTACTS, "messages": MESSAGES}, kinds={"contact": "contacts", "message": "messages"},
        card="email")})
    return RulesEngine(cards, TOOLS, world=world)


def call(engine: RulesEngine, name: str, log: SessionLog | None = None, **args: Any) -> ToolResult:
    log = log or SessionLog(seed=0)
    spec = next(t for t in TOOLS if t.name == name)
    result = engine.respond_sync(spec, args, log)
    log.record(spec.id, args, result)
    return result


def test_a_value_not_in_the_documented_form_is_refused(engine: RulesEngine) -> None:
    sent = dict(recipients=["ct_0001"], subject="Plan", body="See you")
    offset = call(engine, "send_message", **sent, send_at="2026-08-02T10:00:00+02:00")
    assert offset.error_class == "invalid_args" and "YYYY-MM-DDTHH:MM" in offset.text
    assert not call(engine, "send_message", **sent, send_at="2026-08-02T10:00").is_error
    assert not call(engine, "send_message", **sent, send_at="2026-08-02T10:00:00Z").is_error  # UTC, with seconds
    assert call(engine, "daily_digest", day="2026-08-02T10:00").error_class == "invalid_args"
    assert call(engine, "daily_digest", day="2026-08-02").error_class != "invalid_args"


def test_a_description_that_welcomes_other_forms_pins_none_down() -> None:
    assert documented_formats({"description": "UTC time, YYYY-MM-DDTHH:MM"}) == ["datetime"]
    assert documented_formats({"description": "start, ISO 8601 (e.g. YYYY-MM-DD or with an offset)"}) == []
    assert documented_formats({"description": "a date"}) == []


def test_ids_of_the_kind_a_description_names_must_exist(engine: RulesEngine) -> None:
    unknown = call(engine, "send_message", recipients=["ada@example.com"], subject="Plan", body="See you")
    assert unknown.error_class == "not_found"
    assert not call(engine, "send_message", recipients=["ct_0001", "ct_0002"], subject="Plan", body="See you").is_error


def test_a_family_about_one_record_runs_on_each_record_a_list_names(engine: RulesEngine) -> None:
    """The email card's mark-read family for `mark_read(message_ids)`: every id must exist, each is marked."""
    log = SessionLog(seed=0)
    assert call(engine, "mark_read", log, message_ids=["msg_1", "msg_404"]).error_class == "not_found"
    assert read_flags(engine, log) == [False, False, False]  # a list reads without opening (a get marks read)
    assert not call(engine, "mark_read", log, message_ids=["msg_1", "msg_2"]).is_error
    assert read_flags(engine, log) == [True, True, False]
    assert engine.rule_for(next(t for t in TOOLS if t.name == "mark_read"))[1] == "family"


def read_flags(engine: RulesEngine, log: SessionLog) -> list[Any]:
    listed = json.loads(call(engine, "list_messages", log).text)
    items = next(v for v in listed.values() if isinstance(v, list))
    return [m["read"] for m in sorted(items, key=lambda m: m.get("id") or m.get("message_id"))]


def test_a_token_lasts_as_long_as_the_logins_description_says() -> None:
    login = ToolSpec(server=SERVER, name="login", description="Log in; the token is valid 10 minutes.",
                     input_schema={"type": "object", "required": ["email", "password"], "properties": {
                         "email": {"type": "string"}, "password": {"type": "string"}}})
    read = tool("get_message", {"message_id": {"type": "string"}, "token": {"type": "string"}}, ["message_id", "token"])
    call = rules_caller(SERVER, "email", {"account": {"email": "ada@example.com", "password": "pw-1"}, "auth": {},
                                          "messages": MESSAGES}, {"message": "messages"}, [login, read])
    token = call("login", email="ada@example.com", password="pw-1").structured_content["token"]  # type: ignore[index]
    answers = [call("get_message", message_id="msg_1", token=token) for _ in range(40)]  # 20 s per call
    assert not answers[0].is_error and answers[-1].error_class == "auth"
    assert sum(not a.is_error for a in answers) < 31  # 10 minutes, not the hour a login gets by default


def test_drafts_land_in_drafts_and_only_a_draft_is_edited_or_sent(engine: RulesEngine) -> None:
    """The email card's draft families: a new draft is filed in drafts, a draft's tools refuse a received
    message, and a sent draft is filed as sent."""
    log = SessionLog(seed=0)
    assert call(engine, "update_draft", log, draft_id="msg_1", subject="x").error_class == "invalid_args"
    assert call(engine, "send_draft", log, draft_id="msg_1").error_class == "invalid_args"
    made = call(engine, "create_draft", log, subject="Plan", body="Draft text").structured_content
    draft = next(str(v) for k, v in (made or {}).items() if k in ("id", "message_id"))
    assert call(engine, "get_message", log, message_id=draft).structured_content["folder"] == "drafts"  # type: ignore[index]
    assert not call(engine, "update_draft", log, draft_id=draft, subject="Plan v2").is_error
    assert not call(engine, "send_draft", log, draft_id=draft).is_error
    assert call(engine, "get_message", log, message_id=draft).structured_content["folder"] == "sent"  # type: ignore[index]
