"""Pure tools (issue 22): a stateless sandbox server's tool is computed in synthesized mode, never guessed."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from cworld.config import ModelConfig, ModelsConfig
from cworld.controller.backends.sandbox import SandboxBackend
from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.llm.engine import LLMEngine
from cworld.engine.protocol import SessionLog
from cworld.engine.pure import is_pure, is_pure_id, mark_simulated, pure_result, pure_server
from cworld.environment import Environment, packaged_environment_root
from cworld.llm import Gateway, mock
from cworld.registry.manifest import load_manifest
from cworld.registry.probe_args import planned_args
from cworld.registry.tools import sandbox_tools

ROOT = Path(__file__).resolve().parents[1]
CARD_DIR = ROOT / "category_cards"
TOOLS = sandbox_tools()
LOAN = TOOLS["math/loan_payment"]
LOAN_ARGS = {"principal": 5, "annual_rate_percent": 20, "months": 2}
PURE_SERVERS = {"math", "units", "datetime", "text", "crypto", "graph"}
CALCULATOR = ToolSpec(server="calculator", name="loan_payment", server_kind="catalog", category="math",
                      input_schema=LOAN.input_schema, output_schema=LOAN.output_schema)


async def live(tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
    """The same call through the live sandbox backend, in a fresh episode."""
    backend = SandboxBackend()
    await backend.open(0)
    return await backend.call(tool, arguments)


def answer(result: ToolResult) -> tuple[Any, ...]:
    """What the agent sees of a result (not its meta)."""
    return result.content, result.structured_content, result.is_error, result.error_class


def test_the_stateless_servers_are_pure_and_named_as_in_the_manifest() -> None:
    specs = {s.id: s for s in load_manifest(Environment.resolve(packaged_environment_root())) if s.kind == "sandbox"}
    assert {server for server in specs if pure_server(server)} == PURE_SERVERS
    assert all(specs[server].app == server for server in PURE_SERVERS)  # a sandbox server's id is its app
    assert is_pure_id("math/loan_payment") and not is_pure_id("math/no_such_tool") and not is_pure_id("mail/get_message")


async def test_a_loan_payment_is_computed_as_live_computes_it() -> None:
    computed = pure_result(LOAN, LOAN_ARGS)
    assert computed is not None and computed.structured_content == {"payment": 2.56, "total_paid": 5.12, "total_interest": 0.12}
    assert computed.structured_content == (await live(LOAN, LOAN_ARGS)).structured_content
    assert computed.meta == {"source": "engine", "engine": "pure", "computed": True}


async def test_a_bad_call_fails_as_live_fails() -> None:
    calls = [
        (LOAN, {**LOAN_ARGS, "months": 0}),  # out of the schema's bounds
        (LOAN, {**LOAN_ARGS, "tip": 1}),  # an argument the tool does not take
        (TOOLS["graph/shortest_path"], {"edges": [], "source": "a", "target": "b"}),  # the tool's own refusal
        (TOOLS["datetime/add_duration"], {"moment": "not a date"}),
    ]
    for tool, arguments in calls:
        computed, expected = pure_result(tool, arguments), await live(tool, arguments)
        assert computed is not None and computed.is_error and computed.error_class == expected.error_class == "invalid_args"
        assert answer(computed) == answer(expected), tool.id


def test_tools_cworld_does_not_compute_give_none() -> None:
    assert pure_result(TOOLS["mail/get_message"], {"message_id": "mail_0001"}) is None
    assert pure_result(CALCULATOR, LOAN_ARGS) is None  # pure-looking, but nobody implements it
    assert not is_pure(LOAN.model_copy(update={"server_kind": "real"}))


def test_mark_simulated_flags_the_answer() -> None:
    result = ToolResult.ok({"payment": 49.69})
    assert mark_simulated(result) is result and result.meta["simulated"] is True


async def test_every_stateless_tool_with_its_probe_arguments_answers_as_live() -> None:
    specs = {s.id: s for s in load_manifest(Environment.resolve(packaged_environment_root()))}
    backend = SandboxBackend()
    await backend.open(0)
    tools = [t for t in TOOLS.values() if is_pure(t)]
    assert {t.server for t in tools} == PURE_SERVERS and len(tools) > 100
    started = time.perf_counter()
    for tool in tools:
        arguments, _ = planned_args(tool, specs[tool.server].probe_args, None)
        computed, expected = pure_result(tool, arguments), await backend.call(tool, arguments)
        assert computed is not None, tool.id
        assert (computed.structured_content, computed.is_error) == (expected.structured_content, expected.is_error), tool.id
        assert answer(computed) == answer(expected), tool.id
    assert time.perf_counter() - started < 5.0


def engine_for(script: str, tmp_path: Path) -> LLMEngine:
    gateway = Gateway(ModelsConfig(engine=ModelConfig(model=f"mock/{script}")), cache_path=tmp_path / "llm.sqlite")
    return LLMEngine(load_cards(CARD_DIR), gateway, cards_dir=CARD_DIR, tools=[LOAN, CALCULATOR])


async def test_the_llm_engine_computes_a_pure_tool_without_asking_the_model(tmp_path: Path) -> None:
    guess = json.dumps({"status": "ok", "result": {"payment": 49.69, "total_paid": 99.38, "total_interest": 94.38}})
    with mock.script("pure_llm", lambda messages, tools: guess) as script:
        engine = engine_for("pure_llm", tmp_path)
        computed = await engine.respond(LOAN, LOAN_ARGS, SessionLog(seed=1))
        bad = await engine.respond(LOAN, {**LOAN_ARGS, "months": 0}, SessionLog(seed=1))
        simulated = await engine.respond(CALCULATOR, LOAN_ARGS, SessionLog(seed=1))
    assert computed.structured_content == (await live(LOAN, LOAN_ARGS)).structured_content
    assert computed.meta["computed"] is True and "simulated" not in computed.meta
    assert answer(bad) == answer(await live(LOAN, {**LOAN_ARGS, "months": 0}))
    assert len(script.calls) == 1  # only the calculator nobody implements was asked
    assert simulated.structured_content == {"payment": 49.69, "total_paid": 99.38, "total_interest": 94.38}
    assert simulated.meta["simulated"] is True and simulated.meta["engine"] == "llm"
    assert engine.stats.computed == 2 and engine.stats.calls == 3
