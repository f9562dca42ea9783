"""The World Engine is plan-blind (C-World §3.2): it answers from the public task (query, constraints as
stated, tools, scenario) and the session, never from what the agent is graded against."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from cworld.config import ModelConfig, ModelsConfig
from cworld.controller.backends import EngineBackend
from cworld.controller.factory import build_backend
from cworld.data_model import (
    Constraint,
    PlanStep,
    PublicTask,
    Scenario,
    ScenarioEntity,
    ScenarioRelation,
    SubGoal,
    Task,
    ToolSpec,
)
from cworld.engine.cards.card import load_cards
from cworld.engine.llm.engine import LLMEngine
from cworld.engine.protocol import SessionLog, WorldEngine
from cworld.engine.schema.engine import SchemaEngine
from cworld.environment import Environment, Workspace
from cworld.llm import Gateway, mock
from cworld.llm.mock import text_of
from cworld.registry.tools import sandbox_tools

ROOT = Path(__file__).resolve().parents[1]
CARDS = load_cards(ROOT / "category_cards")
TOOLS = sandbox_tools()
ENV = Environment.resolve()

#: Strings only the graded part of the task holds: none may reach the engine.
SECRETS = ("ZEPHYR-HINT-7781", "pay_9931", "GOLDARG-QX42", "GT-VALUE-5150", "RATIONALE-QUOKKA", "SUBGOAL-MARMOT",
           "PROVENANCE-OKAPI", "METADATA-TAPIR")

TASK = Task(
    id="blind-pay",
    query="Pay Chidi Lewis 212.52 from my checking account and check that SKU-1003 is in stock. Today is 2026-04-20.",
    constraints=[Constraint(id="c1", type="budget", description="Spend no more than 250.00 in total.")],
    tools=["finance/list_payees", "finance/list_accounts", "finance/create_transfer", "shop/get_product"],
    rationales={"finance/list_payees": "RATIONALE-QUOKKA"},
    subgoals=[SubGoal(id="g1", description="SUBGOAL-MARMOT")],
    gold_plan=[
        PlanStep(id="payees", tool="finance/list_payees", arguments={"token": "GOLDARG-QX42"}),
        PlanStep(id="pay", tool="finance/create_transfer", arguments={
            "token": "GOLDARG-QX42", "from_account_id": "acct_0001", "to_id": "pay_9931", "amount": 212.52}),
        PlanStep(id="stock", tool="shop/get_product", arguments={"product_id": "SKU-1003"}),
    ],
    verifiable=True,
    ground_truth={"finance": {"transfers": {"trf_0001": {"memo": "GT-VALUE-5150"}}}},
    final_answer_hints=["Transferred 212.52 to ZEPHYR-HINT-7781."],
    provenance=[{"source": "PROVENANCE-OKAPI"}],
    metadata={"note": "METADATA-TAPIR"},
    scenario=Scenario(
        today="2026-04-20T09:00:00+00:00",
        entities=[
            ScenarioEntity(app="finance", kind="payee", id="pay_0001",
                           attributes={"name": "Chidi Lewis", "bank": "Harbor Bank", "account": "****4410"}),
            ScenarioEntity(app="finance", kind="account", id="acct_0001",
                           attributes={"kind": "checking", "name": "Everyday Checking", "balance": 2134.0}),
            ScenarioEntity(app="finance", kind="transaction", id="txn_0001",
                           attributes={"description": "Coffee", "amount": -4.5, "kind": "card"}),
        ],
        relations=[ScenarioRelation(subject="finance/transaction/txn_0001", relation="account",
                                    object="finance/account/acct_0001")],
    ),
)

#: The same public part, with everything the agent is graded against removed.
STRIPPED = TASK.model_copy(update={"gold_plan": [], "subgoals": [], "rationales": {}, "final_answer_hints": [],
                                   "ground_truth": None, "provenance": [], "metadata": {}, "verifiable": False})

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("finance/list_payees", {"token": "t"}),
    ("finance/list_accounts", {"token": "t"}),
    ("finance/list_transactions", {"token": "t", "account_id": "acct_0001"}),
    ("finance/create_transfer", {"token": "t", "from_account_id": "acct_0001", "to_id": "pay_0001", "amount": 212.52}),
    ("finance/list_payees", {"token": "t"}),
    ("shop/get_product", {"product_id": "SKU-1003"}),
    ("shop/get_product", {"product_id": "SKU-1004"}),
    ("shop/search_products", {"query": "", "max_price": 30}),
    ("mail/search_contacts", {"query": "Chidi"}),
]


async def replay(task: Task, engine: WorldEngine, tmp_path: Path) -> list[dict[str, Any]]:
    backend = build_backend("synthesized", env=ENV, workspace=Workspace(tmp_path), tools=TOOLS, engine=engine, task=task)
    assert isinstance(backend, EngineBackend)
    await backend.open(seed=5)
    answers = []
    for tool_id, args in CALLS:
        result = await backend.call(TOOLS[tool_id], args)
        answers.append(result.model_dump(mode="json", exclude={"meta": {"latency_ms"}}))
    return answers


def test_the_stripped_copy_has_the_same_public_part() -> None:
    assert STRIPPED.public() == TASK.public()
    assert TASK.gold_plan and TASK.final_answer_hints and TASK.ground_truth  # the full task does hold them


async def test_the_schema_engine_answers_the_same_with_or_without_the_plan(tmp_path: Path) -> None:
    full = await replay(TASK, SchemaEngine(CARDS, TOOLS.values()), tmp_path / "a")
    blind = await replay(STRIPPED, SchemaEngine(CARDS, TOOLS.values()), tmp_path / "b")
    assert full == blind
    assert not any(secret in json.dumps(full) for secret in SECRETS)


def _llm(name: str, cache: Path) -> LLMEngine:
    gateway = Gateway(ModelsConfig(engine=ModelConfig(model=f"mock/{name}")), cache_path=cache)
    return LLMEngine(CARDS, gateway, cards_dir=ROOT / "category_cards", tools=list(TOOLS.values()), retries=0,
                     max_repairs=0)


def _by_prompt(messages: list[Any], tools: Any) -> str:
    """An answer that depends on every word of the prompt: a plan or hint in it would change the answer.
    Every third prompt (by its hash) gets an unusable reply, so the grounded fallback is exercised too."""
    prompt = "\n".join(text_of(m.get("content") if isinstance(m, dict) else m.content) for m in messages)
    digest = hashlib.sha256(prompt.encode()).hexdigest()
    if int(digest, 16) % 3 == 0:
        return "not json"
    return json.dumps({"status": "error", "error_class": "business", "message": f"declined ({digest[:12]})"})


async def test_the_llm_engine_answers_the_same_with_or_without_the_plan(tmp_path: Path) -> None:
    with mock.script("blind_llm", _by_prompt) as full_script:
        full = await replay(TASK, _llm("blind_llm", tmp_path / "a.sqlite"), tmp_path / "a")
    with mock.script("blind_llm", _by_prompt) as blind_script:  # a fresh cache: the model is asked again
        blind = await replay(STRIPPED, _llm("blind_llm", tmp_path / "b.sqlite"), tmp_path / "b")
    assert [c.messages for c in full_script.calls] == [c.messages for c in blind_script.calls]
    assert full == blind
    assert any(a["meta"].get("fallback") for a in full) and any(not a["meta"].get("fallback") for a in full)


async def test_the_llm_prompt_holds_no_plan_hint_or_ground_truth(tmp_path: Path) -> None:
    with mock.script("blind_prompt", lambda messages, tools: "not json") as script:
        await replay(TASK, _llm("blind_prompt", tmp_path / "c.sqlite"), tmp_path / "c")
    prompts = [json.dumps(c.messages, default=str) for c in script.calls]
    assert len(prompts) == len(CALLS)
    for prompt in prompts:
        assert not [s for s in SECRETS if s in prompt], prompt
        assert "Planned call" not in prompt and "Expected in the answer" not in prompt
        assert "Request: Pay Chidi Lewis 212.52" in prompt and "Constraint: Spend no more than 250.00" in prompt
        assert "Entity finance/payee/pay_0001" in prompt and "Relation: finance/transaction/txn_0001 account" in prompt


# --- scenario grounding ---------------------------------------------------------------------------------
def _session(task: Task = TASK) -> tuple[SchemaEngine, SessionLog]:
    return SchemaEngine(CARDS, TOOLS.values()), SessionLog(seed=2, context=task.public())


def _call(engine: SchemaEngine, log: SessionLog, tool_id: str, args: dict[str, Any]) -> Any:
    result = engine.respond_sync(TOOLS[tool_id], args, log)
    log.record(tool_id, args, result)
    return result


def test_a_get_of_a_scenario_id_returns_its_attributes() -> None:
    engine, log = _session()
    accounts = _call(engine, log, "finance/list_accounts", {"token": "t"}).structured_content["accounts"]
    assert [(a["account_id"], a["kind"], a["name"], a["balance"]) for a in accounts] == [
        ("acct_0001", "checking", "Everyday Checking", 2134.0)]
    txns = _call(engine, log, "finance/list_transactions", {"token": "t", "account_id": "acct_0001"}).structured_content
    assert [(t["transaction_id"], t["description"], t["amount"], t["account_id"]) for t in txns["transactions"]] == [
        ("txn_0001", "Coffee", -4.5, "acct_0001")]


def test_a_list_shows_the_scenarios_entities_of_that_kind_and_no_filler() -> None:
    engine, log = _session()
    payees = _call(engine, log, "finance/list_payees", {"token": "t"}).structured_content["payees"]
    assert [(p["payee_id"], p["name"]) for p in payees] == [("pay_0001", "Chidi Lewis")]
    # without a scenario, the card's seeded records are the world
    bare_engine, bare = _session(Task(id="t", query="Who are my payees?"))
    assert len(_call(bare_engine, bare, "finance/list_payees", {"token": "t"}).structured_content["payees"]) > 1


def test_an_id_neither_in_the_scenario_nor_mentioned_is_not_found() -> None:
    engine, log = _session()
    assert _call(engine, log, "shop/get_product", {"product_id": "SKU-1003"}).is_error is False  # mentioned
    assert _call(engine, log, "shop/get_product", {"product_id": "SKU-1004"}).error_class == "not_found"
    # where the scenario describes a collection, its entities are all there is: a mention adds nothing
    shop = Scenario(entities=[ScenarioEntity(app="shop", kind="product", id="SKU-1458", attributes={"price": 9.5})])
    engine, log = _session(TASK.model_copy(update={"scenario": shop}))
    assert _call(engine, log, "shop/get_product", {"product_id": "SKU-1003"}).error_class == "not_found"
    assert _call(engine, log, "shop/get_product", {"product_id": "SKU-1458"}).structured_content["price"] == 9.5


def test_a_schema_only_tool_with_no_scenario_entity_answers_for_an_unknown_world() -> None:
    lookup = ToolSpec(server="ehr", name="get_patient", description="One patient's record by id.",
                      input_schema={"type": "object", "properties": {"patient_id": {"type": "string"}},
                                    "required": ["patient_id"]})
    search = ToolSpec(server="ehr", name="search_patients", description="Search patients by name.",
                      input_schema={"type": "object", "properties": {"query": {"type": "string"}}})
    engine = SchemaEngine(CARDS, [*TOOLS.values(), lookup, search])
    log = SessionLog(seed=2, context=TASK.public())
    missing = engine.respond_sync(lookup, {"patient_id": "pat_4242"}, log)
    assert missing.is_error and missing.error_class == "not_found" and "pat_4242" in missing.text
    found = engine.respond_sync(search, {"query": "Zanzibar"}, log).structured_content
    assert found is not None and found["items"] == [] and found["total"] == 0  # ungrounded: nothing found
    listed = engine.respond_sync(search, {"query": ""}, log).structured_content
    assert listed is not None and listed["items"]  # the card's seeded records: no scenario entity of this kind


# --- the type -------------------------------------------------------------------------------------------
async def test_the_engine_side_takes_a_public_task_never_a_task(tmp_path: Path) -> None:
    backend = build_backend("synthesized", env=ENV, workspace=Workspace(tmp_path), tools=TOOLS,
                            engine=SchemaEngine(CARDS, TOOLS.values()), task=TASK)
    assert isinstance(backend, EngineBackend) and isinstance(backend.context, PublicTask)
    await backend.open(seed=0)
    assert backend.session is not None and backend.session.context == TASK.public()
    with pytest.raises(ValidationError):
        SessionLog(seed=0, context=TASK)  # type: ignore[arg-type]
