"""The LLM engine's wire format with the mock provider: a cut answer is asked again longer (then for a
shorter page), never repaired at the same length; the budgets come from settings and the workspace
config; transient faults are never the model's to answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cworld.config import ModelConfig, ModelsConfig
from cworld.data_model import ToolResult
from cworld.engine.cards.card import load_cards
from cworld.engine.llm.engine import LLMEngine
from cworld.engine.llm.prompts import TRANSIENT_ERROR_CLASSES, demonstrations_text
from cworld.engine.llm.settings import LLMEngineSettings, load_engine_settings
from cworld.engine.protocol import SessionLog
from cworld.errors import ConfigError
from cworld.llm import Gateway, mock
from cworld.sandbox.catalog import app_by_name
from cworld.sandbox.framework.server import tool_specs

ROOT = Path(__file__).resolve().parents[1]
CARD_DIR = ROOT / "category_cards"
CARDS = load_cards(CARD_DIR)
MAIL = {t.name: t for t in tool_specs(app_by_name("mail"))}
PAGE = {"page": 1, "page_size": 20, "total": 0, "has_more": False, "messages": [], "unread_in_folder": 0}


def engine_for(script: str, tmp_path: Path, **kwargs: Any) -> LLMEngine:
    gateway = Gateway(ModelsConfig(engine=ModelConfig(model=f"mock/{script}")), cache_path=tmp_path / "llm.sqlite")
    return LLMEngine(CARDS, gateway, cards_dir=CARD_DIR, tools=list(MAIL.values()), **kwargs)


def ok(result: Any) -> str:
    return json.dumps({"status": "ok", "result": result})


def cut(text: str) -> dict[str, Any]:
    """What a provider sends when the output cap stops the answer."""
    return {"text": text, "finish_reason": "length"}


async def test_a_cut_answer_is_asked_again_longer_never_repaired(tmp_path: Path) -> None:
    whole = ok(PAGE)
    with mock.script("wire_cut", [cut(whole[:40]), whole]) as script:
        engine = engine_for("wire_cut", tmp_path, settings=LLMEngineSettings(max_tokens=300))
        result = await engine.respond(MAIL["list_messages"], {}, SessionLog(seed=1))
    first, second = script.calls
    assert first.params["max_tokens"] == 300 and second.params["max_tokens"] == 600
    assert second.messages == first.messages  # asked afresh: no cut answer, no repair turn appended
    assert result.structured_content == PAGE and "fallback" not in result.meta
    assert engine.stats.cut == 1 and engine.stats.repaired == 0 and result.meta["max_tokens"] == 600


async def test_at_the_limit_a_shorter_page_is_asked(tmp_path: Path) -> None:
    settings = LLMEngineSettings(max_tokens=200, max_tokens_limit=400, cut_retries=3)
    with mock.script("wire_page", [cut('{"status": "ok"'), cut('{"status": "ok", "res'), ok(PAGE)]) as script:
        engine = engine_for("wire_page", tmp_path, settings=settings)
        result = await engine.respond(MAIL["list_messages"], {}, SessionLog(seed=2))
    caps = [c.params["max_tokens"] for c in script.calls]
    assert caps == [200, 400, 400]
    note = script.calls[2].messages[-1]["content"]
    page = CARDS["email"].page_size // 2
    assert f"at most {page} items" in note and "pages its results" in note
    assert not result.is_error and "fallback" not in result.meta


async def test_an_answer_cut_every_time_falls_back_without_more_retries(tmp_path: Path) -> None:
    settings = LLMEngineSettings(max_tokens=100, max_tokens_limit=200, cut_retries=2)
    with mock.script("wire_never", lambda m, t: cut('{"status": "ok", "result": {"page": 1')) as script:
        engine = engine_for("wire_never", tmp_path, settings=settings, retries=1)
        result = await engine.respond(MAIL["list_messages"], {}, SessionLog(seed=3))
    assert len(script.calls) == 3  # first ask + 2 after cuts; no fresh retry of the same cut
    assert result.meta["fallback"] is True and result.meta["fallback_reason"].startswith("cut: ")
    assert engine.stats.fallback_reasons == {"cut": 1} and engine.stats.repaired == 0


def test_budgets_come_from_the_workspace_config(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "engine:\n  llm:\n    max_tokens: 900\n    history_tokens: 4000\n    result_chars: 2000\n"
    )
    settings = load_engine_settings(tmp_path)
    assert (settings.max_tokens, settings.history_tokens, settings.result_chars) == (900, 4000, 2000)
    assert settings.max_tokens_limit == LLMEngineSettings().max_tokens_limit
    assert load_engine_settings(tmp_path / "nowhere") == LLMEngineSettings()
    (tmp_path / "config.yaml").write_text("engine:\n  llm:\n    history_tokenz: 10\n")
    with pytest.raises(ConfigError) as bad:
        load_engine_settings(tmp_path)
    assert "\n" not in str(bad.value) and "engine.llm.history_tokenz" in str(bad.value)


async def test_the_history_budgets_reach_the_prompt(tmp_path: Path) -> None:
    session = SessionLog(seed=4)
    for i in range(30):
        session.record("mail/get_message", {"message_id": f"mail_{i:04d}"}, ToolResult.ok({"body": "x" * 1500}))
    prompts: list[str] = []

    def model(messages: list[dict[str, Any]], tools: Any) -> str:
        prompts.append(messages[1]["content"])
        return ok(PAGE)

    with mock.script("wire_hist", model):
        small = engine_for("wire_hist", tmp_path, settings=LLMEngineSettings(history_tokens=400, result_chars=100))
        await small.respond(MAIL["list_messages"], {}, session)
        large = engine_for("wire_hist", tmp_path, settings=LLMEngineSettings(history_tokens=20000, result_chars=1200))
        await large.respond(MAIL["list_messages"], {}, session)
    assert 0 < prompts[0].count("mail/get_message {") < 30 and "x" * 101 not in prompts[0]
    assert prompts[1].count("mail/get_message {") == 30 and "x" * 1100 in prompts[1]


async def test_transient_faults_are_never_offered_nor_accepted(tmp_path: Path) -> None:
    """Timeouts, rate limits and outages are the controller's: the prompt and the reply schema leave them
    out, and a model that answers one anyway is asked to repair it, so the agent is never scored for it."""
    timeout = json.dumps({"status": "error", "error_class": "timeout", "message": "upstream timed out"})
    with mock.script("wire_transient", [timeout, ok(PAGE)]) as script:
        engine = engine_for("wire_transient", tmp_path, response_format="schema")
        result = await engine.respond(MAIL["list_messages"], {}, SessionLog(seed=5))
    system, user = script.calls[0].messages[0]["content"], script.calls[0].messages[1]["content"]
    for name in TRANSIENT_ERROR_CLASSES:
        assert name not in system.split("Rules:")[1].split("3.")[0] and f"error_class: {name}" not in system
        assert name not in json.dumps(script.calls[0].params["response_format"])
    assert "rate_limit" in (CARD_DIR / "email.yaml").read_text()  # the card has one; the prompt leaves it out
    assert "could not be used" in script.calls[1].messages[-1]["content"]
    assert not result.is_error and result.structured_content == PAGE and engine.stats.repaired == 1
    assert "Examples of calls" in user


def test_error_demonstrations_carry_their_class() -> None:
    text = demonstrations_text(CARDS["email"])
    error = json.loads(next(line[3:] for line in text.splitlines() if '"status": "error"' in line))
    assert error["error_class"] == "not_found" and error["message"].startswith("not_found")
    ok_demo = json.loads(text.splitlines()[1][3:])
    assert ok_demo["result"]["items"][0]["id"] == "mail_0003"
