"""Settings a server holds once (`world/settings.py`): Gmail's vacation responder is read and set by the same
noun, so a read after a change shows it; a kind's records (`update_customer(customer_id)`) and a list
(`get_positions`) are never taken for one."""

from __future__ import annotations

import random

from engine_helpers import tool_spec

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.rules import RulesEngine
from cworld.engine.world.base import World
from cworld.engine.world.build import generated_world
from cworld.engine.world.settings import held_settings
from cworld.environment import Environment

BOOL, STR = {"type": "boolean"}, {"type": "string"}
VACATION = [
    tool_spec("mail", "get_vacation", {}, []).model_copy(update={"output_schema": {
        "type": "object", "properties": {"enableAutoReply": BOOL, "responseSubject": STR}}}),
    tool_spec("mail", "update_vacation", {"enableAutoReply": BOOL, "responseSubject": STR}, ["enableAutoReply"]),
    tool_spec("mail", "list_messages", {}, []),
]


def test_a_thing_read_and_set_by_one_noun_is_held_once_and_a_read_after_a_change_shows_it() -> None:
    cards = load_cards(Environment.resolve().category_cards)
    world = generated_world("mail", cards["email"], seed=3, tools=VACATION)
    assert set(world.state["vacation"]) == {"enable_auto_reply", "response_subject"}
    engine = RulesEngine(cards, VACATION, world=World(seed=3, now="2026-08-01T09:00:00Z", servers={"mail": world}))
    log = SessionLog(seed=3)
    spec = {t.name: t for t in VACATION}
    first = engine.respond_sync(spec["get_vacation"], {}, log)
    assert engine.respond_sync(spec["get_vacation"], {}, log).text == first.text  # the same thing on every read
    changed = engine.respond_sync(spec["update_vacation"], {"enableAutoReply": True, "responseSubject": "Away"}, log)
    log.record(spec["update_vacation"].id, {"enableAutoReply": True, "responseSubject": "Away"}, changed)
    after = engine.respond_sync(spec["get_vacation"], {}, log)
    assert "Away" in after.text and after.meta.get("simulated") is not True, after.text


def test_records_a_tool_names_and_lists_are_no_settings() -> None:
    tools: list[ToolSpec] = [tool_spec("crm", "get_customer", {"customer_id": STR}, []),
                             tool_spec("crm", "update_customer", {"customer_id": STR, "phone": STR}, []),
                             tool_spec("crm", "get_positions", {}, []),
                             tool_spec("crm", "close_positions", {"cancel_orders": BOOL}, []),
                             tool_spec("crm", "check_update", {}, []), tool_spec("crm", "self_update", {"yes": BOOL}, [])]
    assert held_settings(tools, set(), lambda noun: random.Random(0)) == {}
