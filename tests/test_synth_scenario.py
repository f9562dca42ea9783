"""Task scenarios: the offline synthesizer writes them from the seeded state its verified run relied on, the
facts-only check keeps tool names, references, plan steps and answers out. (The LLM synthesizer's scenario:
tests/test_synth_llm.py.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cworld.agents.references import resolve
from cworld.data_model import Scenario, ScenarioEntity, ScenarioRelation, Task
from cworld.environment import Environment, Workspace
from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework import SandboxSession
from cworld.synth import SynthOptions, prepare, run_prepared
from cworld.synth.checks import CheckReport, check_scenario
from cworld.synth.draft import Draft
from cworld.synth.leak import scenario_leaks
from cworld.synth.plan_exec import CallRecord
from cworld.synth.scenario import collection_records, derive_scenario, sandbox_kinds, sandbox_observed

ENV = Environment.resolve()
KINDS = sandbox_kinds()
OBSERVED = sandbox_observed()


def _synth(ws: Workspace, out: Path, **options) -> list[Task]:
    prepared = prepare(ENV, ws, SynthOptions(**{"seed": 5, **options}), out=out)
    result, _ = asyncio.run(run_prepared(prepared))
    return result.accepted


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    mp.setenv("CWORLD_EMBED_MODEL", "hash")
    yield Workspace.resolve(tmp_path_factory.mktemp("ws"))
    mp.undo()


@pytest.fixture(scope="module")
def tasks(ws: Workspace, tmp_path_factory: pytest.TempPathFactory) -> list[Task]:
    return _synth(ws, tmp_path_factory.mktemp("a") / "tasks.jsonl", n=8)


def _initial(task: Task) -> dict:
    return SandboxSession(task.initial_state_seed, all_apps()).snapshot()


def _record(state: dict, entity: ScenarioEntity) -> dict | None:
    collection = next(c for c, k in KINDS[entity.app].items() if k == entity.kind)
    return collection_records(state[entity.app], collection).get(str(entity.id))


def test_sandbox_scenarios_hold_the_initial_records_and_their_relations(tasks: list[Task]) -> None:
    verifiable = [t for t in tasks if t.verifiable]
    assert len(verifiable) >= 6
    for task in verifiable:
        initial, scenario = _initial(task), task.scenario
        assert scenario.entities and scenario.relations
        assert scenario.today == SandboxSession(task.initial_state_seed, all_apps()).clock.now().isoformat()
        handles = {e.handle for e in scenario.entities}
        assert len(handles) == len(scenario.entities)
        for entity in scenario.entities:
            assert entity.app in task.servers
            if entity.kind in OBSERVED.get(entity.app, {}):
                continue  # no state collection holds it: test_observed_records_are_what_the_run_showed
            assert entity.kind in KINDS[entity.app].values()
            assert _record(initial, entity) == entity.attributes, entity.handle
        assert all(r.subject in handles and r.object in handles for r in scenario.relations)


def test_no_record_the_plan_creates_is_in_the_scenario(tasks: list[Task]) -> None:
    for task in (t for t in tasks if t.verifiable):
        assert task.ground_truth is not None
        initial = _initial(task)
        created = {
            (app, key)
            for app, collections in KINDS.items()
            for collection in collections
            for key in collection_records(task.ground_truth.get(app, {}), collection)
            if key not in collection_records(initial.get(app, {}), collection)
        }
        assert created, task.id  # every offline task writes something
        assert not created & {(e.app, e.id) for e in task.scenario.entities}


def test_records_the_plan_reads_are_in_the_scenario_with_their_attributes(tasks: list[Task]) -> None:
    """Every key a plan step passes literally, or copies from an earlier result, names a scenario entity
    when the seeded world has that record; a payee chosen by name is there with its bank and account."""
    checked = 0
    for task in (t for t in tasks if t.verifiable):
        initial, have = _initial(task), {(e.app, e.id) for e in task.scenario.entities}
        results = _results(task)
        for step in task.gold_plan:
            app = step.tool.split("/", 1)[0]
            for value in _strings(resolve(step.arguments, results, strict=False)):
                seeded = any(value in collection_records(initial.get(app, {}), c) for c in KINDS.get(app, {}))
                if seeded:
                    checked += 1
                    assert (app, value) in have, (task.id, step.id, value)
    assert checked >= 10


def test_observed_records_are_what_the_run_showed(tasks: list[Task]) -> None:
    """Flights, hotels and airports come from the travel knowledge base, not a state collection: the
    scenario holds each one the plan's answers showed, keyed by its key field, with the fields shown."""
    checked = 0
    for task in (t for t in tasks if t.verifiable and "travel" in t.servers):
        shown = {}
        for value in _results(task).values():
            for key in ("flights", "hotels", "airports"):
                for item in value.get(key, []) if isinstance(value, dict) else []:
                    shown[(key[:-1], str(item.get("code") or item.get(f"{key[:-1]}_id")))] = item
        observed = [e for e in task.scenario.entities if e.kind in OBSERVED["travel"]]
        assert {(e.kind, e.id) for e in observed} == set(shown), task.id
        for entity in observed:
            record = shown[(entity.kind, entity.id)]
            assert all(record[k] == v for k, v in entity.attributes.items() if k in record), entity.handle
            assert OBSERVED["travel"][entity.kind] not in entity.attributes  # the key is the id
            checked += 1
    assert checked >= 2


def test_observed_kinds_come_from_lists_and_items_and_keep_the_first_sighting() -> None:
    def shown(tool: str, result: dict) -> CallRecord:
        return CallRecord(step_id="s", tool=tool, arguments={}, ok=True, result=result)

    calls = [
        shown("travel/find_airports", {"airports": [{"code": "SYD", "name": "Sydney", "city": "Sydney"}]}),
        shown("travel/search_hotels", {"city": "Warsaw", "note": "2 found", "hotels": [
            {"hotel_id": "htl_064", "name": "Riverside Lodge", "rooms_left": 20}]}),
        shown("travel/book_hotel", {"booking_id": "bk_9", "hotel": {"hotel_id": "htl_064", "rooms_left": 19, "stars": 3}}),
        shown("travel/search_flights", {"flights": [{"flight_id": "OA314-20260426", "fare": 984.03}, {"fare": 1.0}]}),
        CallRecord(step_id="x", tool="travel/get_flight", arguments={}, ok=False, result={"flight": {"flight_id": "ZZ1"}}),
    ]
    scenario = derive_scenario({}, KINDS, calls, query="", apps=["travel"])
    got = {e.handle: e.attributes for e in scenario.entities}
    assert got == {
        "travel/airport/SYD": {"name": "Sydney", "city": "Sydney"},
        "travel/hotel/htl_064": {"name": "Riverside Lodge", "rooms_left": 20, "city": "Warsaw", "stars": 3},
        "travel/flight/OA314-20260426": {"fare": 984.03},
    }
    assert derive_scenario({}, KINDS, calls, query="", apps=["travel"], observed={}).entities == []
    assert derive_scenario({}, KINDS, calls, query="", apps=["shop"]).entities == []


def test_observed_records_come_from_generic_lists_and_reads_that_name_them() -> None:
    """Securities have no state collection: `find_symbol` lists them under `matches` and `get_quote`
    answers one by its symbol; an answer that only mentions a symbol (an order) is no security record."""
    def shown(tool: str, arguments: dict, result: dict) -> CallRecord:
        return CallRecord(step_id="s", tool=tool, arguments=arguments, ok=True, result=result)

    calls = [
        shown("finance/find_symbol", {"query": "Podcastle"}, {"matches": [
            {"symbol": "PODC", "company": "Podcastle Audio", "sector": "Communication Services", "exchange": "NASDAQ"}]}),
        shown("finance/get_quote", {"symbol": "PODC"}, {"symbol": "PODC", "company": "Podcastle Audio", "price": 31.5}),
        shown("finance/get_quote", {"symbol": "ZZZZ"}, {"symbol": "PODC", "price": 1.0}),
        shown("finance/place_order", {"symbol": "KRNL"}, {"order_id": "trd_9", "symbol": "KRNL", "quantity": 2}),
        shown("finance/get_order", {"order_id": "trd_9"}, {"order_id": "trd_9", "symbol": "KRNL"}),
    ]
    scenario = derive_scenario({}, KINDS, calls, query="", apps=["finance"])
    got = {e.handle: e.attributes for e in scenario.entities}
    assert got == {"finance/symbol/PODC": {"company": "Podcastle Audio", "sector": "Communication Services",
                                           "exchange": "NASDAQ", "price": 31.5}}


def _results(task: Task) -> dict:
    from cworld.synth.plan_exec import execute_plan

    return execute_plan(task.gold_plan, task.initial_state_seed).results


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_a_payee_paid_by_name_is_in_the_scenario(tasks: list[Task]) -> None:
    paying = [t for t in tasks if any(s.tool == "finance/create_transfer" for s in t.gold_plan)]
    assert paying, "the fixture run should include a transfer; pick another seed"
    for task in paying:
        payees = {e.attributes["name"]: e for e in task.scenario.of("finance", "payee")}
        named = [name for name in payees if name in task.query]
        assert named, task.query
        assert {"bank", "account"} <= set(payees[named[0]].attributes)
        assert any(
            r.relation == "account"
            for r in task.scenario.relations
            if r.subject.startswith("finance/transaction")
        )


def test_same_seed_same_scenario(ws: Workspace, tasks: list[Task], tmp_path: Path) -> None:
    again = _synth(ws, tmp_path / "tasks.jsonl", n=3)
    assert [t.scenario for t in again] == [t.scenario for t in tasks[:3]]


def test_schema_only_tasks_state_what_the_request_names(ws: Workspace, tmp_path: Path) -> None:
    crm = [t for t in _synth(ws, tmp_path / "t.jsonl", n=2, schema_only_share=0.5) if not t.verifiable]
    assert crm
    for task in crm:
        (contact,) = task.scenario.of("helio-crm", "contact")
        assert contact.id is None and set(contact.attributes) == {"name", "company"}
        assert all(str(v) in task.query for v in contact.attributes.values())
        assert task.scenario.today and any(e.app != "helio-crm" for e in task.scenario.entities)


# --- the facts-only check ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def leaks(ws: Workspace):
    from cworld.synth.leak import LeakChecker
    from cworld.synth.toolset import load_universe

    return LeakChecker(load_universe(ENV, ws, need_search=False))


def test_the_facts_only_check_rejects_tools_references_steps_and_hints(tasks: list[Task], leaks) -> None:
    task = tasks[0]
    ids = [s.id for s in task.gold_plan]
    clean = scenario_leaks(leaks, task.scenario, step_ids=ids, hints=task.final_answer_hints)
    assert clean == []
    payee = ScenarioEntity(app="finance", kind="payee", id="pay_0001", attributes={"name": "Chidi Lewis"})

    def problems(**change) -> list[str]:
        scenario = Scenario(entities=[payee], **change)
        hints = ["Paid {{pay.amount}} to Chidi Lewis and the transfer is confirmed."]
        return scenario_leaks(leaks, scenario, step_ids=["step_2", "pay"], hints=hints)

    assert problems() == []
    assert any("finance/create_transfer" in p for p in problems(notes=["Use finance/create_transfer first."]))
    assert any("'create_transfer'" in p for p in problems(notes=["Then create_transfer is needed."]))
    assert any("reference" in p for p in problems(notes=["The amount is {{pay.amount}}."]))
    assert any("plan step" in p for p in problems(notes=["Done after step_2."]))
    assert any("solving the task" in p for p in problems(notes=["The final answer is 42."]))
    assert any("hint" in p for p in problems(notes=["It went to Chidi Lewis and the transfer is confirmed."]))
    tooled = payee.model_copy(update={"attributes": {"name": "{{who.name}}"}})
    assert any(
        "reference" in p for p in scenario_leaks(leaks, Scenario(entities=[tooled]), step_ids=[], hints=[])
    )


def test_a_malformed_or_dangling_scenario_is_a_check_issue(tasks: list[Task], leaks) -> None:
    base = Draft.of_task(tasks[0]).model_dump(mode="json")
    bad = Draft.model_validate({**base, "scenario": {"entities": [{"kind": 3}]}})
    assert bad.scenario == Scenario() and bad.scenario_problem and "scenario_problem" not in bad.compact()
    report = CheckReport()
    check_scenario(bad, leaks, report)
    assert [i.code for i in report.issues] == ["malformed"]
    entity = tasks[0].scenario.entities[0]
    dangling = ScenarioRelation(subject=entity.handle, relation="owner", object="mail/contact/nobody")
    odd = Draft.of_task(tasks[0]).model_copy(
        update={"scenario": Scenario(entities=[entity, entity], relations=[dangling], today="soon")}
    )
    report = CheckReport()
    check_scenario(odd, leaks, report, require=True)
    assert {i.code for i in report.issues} == {"duplicate_entity", "dangling_relation", "bad_today"}
    empty = CheckReport()
    check_scenario(
        Draft.of_task(tasks[0]).model_copy(update={"scenario": Scenario()}), leaks, empty, require=True
    )
    assert [i.code for i in empty.issues] == ["no_scenario"]
