"""The LLM engine on the world (issue 22): the model writes an answer's wording and values; the world decides
existence, errors and effects, and the graded end state is the world's. Mock provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cworld.config import ModelConfig, ModelsConfig
from cworld.engine.cards.card import load_cards
from cworld.engine.llm.engine import LLMEngine
from cworld.engine.protocol import SessionLog
from cworld.engine.rules import RulesEngine
from cworld.engine.rules.spec import load_operations
from cworld.engine.schema.engine import SchemaEngine
from cworld.engine.world.build import build_world
from cworld.llm import Gateway, mock
from cworld.registry.tools import sandbox_tools

ROOT = Path(__file__).resolve().parents[1]
CARD_DIR = ROOT / "category_cards"
CARDS = load_cards(CARD_DIR)
TOOLS = dict(sandbox_tools())
WORLD = build_world(0, TOOLS.values(), CARDS, servers=["mail", "shop"])


def engine_for(script: str, tmp_path: Path) -> LLMEngine:
    world = RulesEngine(CARDS, TOOLS.values(), world=WORLD, operations=load_operations(CARD_DIR / "_operations"),
                        fallback=SchemaEngine(CARDS, TOOLS.values()))
    gateway = Gateway(ModelsConfig(engine=ModelConfig(model=f"mock/{script}")), cache_path=tmp_path / "llm.sqlite")
    return LLMEngine(CARDS, gateway, cards_dir=CARD_DIR, tools=TOOLS.values(), world=world)


def ok(result: Any) -> str:
    return json.dumps({"status": "ok", "result": result})


async def test_the_world_refuses_what_the_model_would_accept(tmp_path: Path) -> None:
    with mock.script("world_refuses", [ok({"message_id": "mail_9999", "subject": "made up"})]) as script:
        engine = engine_for("world_refuses", tmp_path)
        result = await engine.respond(TOOLS["mail/get_message"], {"message_id": "mail_9999"}, SessionLog(seed=0))
    assert result.is_error and result.error_class == "not_found"
    assert not script.calls  # a refusal is the world's: the model is not asked


async def test_the_model_words_the_answer_and_the_world_keeps_its_facts(tmp_path: Path) -> None:
    message = next(iter(WORLD.servers["mail"].state["messages"]))
    invented = {"message_id": message, "subject": "A subject the model invented", "body": "Words by the model."}
    with mock.script("world_words", [ok(invented)]) as script:
        engine = engine_for("world_words", tmp_path)
        result = await engine.respond(TOOLS["mail/get_message"], {"message_id": message}, SessionLog(seed=0))
    held = WORLD.servers["mail"].state["messages"][message]
    assert not result.is_error and script.calls  # the model was asked to word it
    assert result.structured_content["subject"] == held["subject"]  # type: ignore[index]
    assert "keep every value" in script.calls[0].messages[-1]["content"]


async def test_the_worlds_effects_are_the_end_state_whatever_the_model_says(tmp_path: Path) -> None:
    mail = WORLD.servers["mail"].state
    gone = next(iter(mail["contacts"]))
    with mock.script("world_effects", [ok({"contact": {}, "deleted": False})] * 3):
        engine = engine_for("world_effects", tmp_path)
        session = SessionLog(seed=0)
        for tool, args in (("mail/delete_contact", {"contact_id": gone}),
                           ("mail/add_contact", {"name": "Ada Quist", "email": "ada.quist@example.com"})):
            session.record(tool, args, await engine.respond(TOOLS[tool], args, session))
    contacts = engine.end_state(session)["mail"]["contacts"]  # type: ignore[index]
    assert gone not in contacts and [c["email"] for c in contacts.values()].count("ada.quist@example.com") == 1
    assert gone in WORLD.servers["mail"].state["contacts"]  # the seed's world is untouched


async def test_a_model_that_fails_leaves_the_worlds_own_answer(tmp_path: Path) -> None:
    message = next(iter(WORLD.servers["mail"].state["messages"]))
    with mock.script("world_garbage", ["not json at all"] * 4):
        engine = engine_for("world_garbage", tmp_path)
        result = await engine.respond(TOOLS["mail/get_message"], {"message_id": message}, SessionLog(seed=0))
    assert not result.is_error and result.meta.get("fallback") and result.meta.get("rule") in ("family", "inferred")
