"""Harvested-pool requests a person would make (issue 24, items 4 and 7): every card in a theme; one goal
whose services are joined by data flowing through the world; values from the world, never schema
placeholders; the request's words are not the tools' descriptions; the checker catches drafts that break
these rules, so the LLM path's revision loop is told what to change."""

from __future__ import annotations

import re

import networkx as nx
import pytest
from conftest import HARVESTED_BATCH

from cworld.agents.references import referenced_steps
from cworld.data_model import PlanStep, Task, ToolSpec
from cworld.engine import load_cards
from cworld.environment import Environment
from cworld.synth.checks import CheckReport
from cworld.synth.draft import Draft
from cworld.synth.harvest_pool import load_themes
from cworld.synth.offline.templates import Templates
from cworld.synth.request_checks import check_request, placeholder_values
from cworld.synth.toolset import ToolUniverse

ENV = Environment.resolve()
QUOTED = re.compile(r"(?<!\w)'([^']+)'(?!\w)")


@pytest.fixture(scope="module")
def batch(harvested_batch) -> tuple[list[Task], object]:
    """The worker's harvested batch (conftest `harvested_batch`): its tasks and what made them."""
    _, tasks, prepared = harvested_batch
    return tasks, prepared


def test_every_card_is_in_a_theme() -> None:
    themes = load_themes(Templates.of(ENV).book("harvested"))
    covered = set().union(*(t.cards for t in themes.values()))
    cards = set(load_cards(ENV.category_cards))
    assert cards - covered == set()
    assert covered <= cards  # no theme names a card that does not exist
    for theme in themes.values():
        assert theme.sources and theme.acts and theme.sinks


def test_harvested_requests_carry_no_placeholder_values(batch) -> None:
    tasks, prepared = batch
    assert len(tasks) == HARVESTED_BATCH["n"]
    tools = prepared.synthesis.universe.tools
    for task in tasks:
        for step in task.gold_plan:
            assert placeholder_values(step.arguments, task.query, tools[step.tool].input_schema) == [], (task.id, step)
        quoted = QUOTED.findall(task.query)
        rule_based = task.metadata.get("shape") in ("triage", "cleanup", "budget")  # a rule picks the record
        assert quoted or rule_based, task.query
        assert not any(q.lower() in ("example", "test", "1", "https") for q in quoted), task.query


def test_each_service_after_the_first_takes_what_an_earlier_one_found(batch) -> None:
    """Or gives what it found to another's step: a brief's two reads feed its note."""
    tasks, _ = batch
    for task in tasks:
        server_of = {s.id: s.tool.split("/", 1)[0] for s in task.gold_plan}
        order = list(dict.fromkeys(server_of.values()))
        assert len(order) >= 2  # a goal shape spans 2-4 services (issue 34)
        links = {(server_of[s.id], server_of[r]) for s in task.gold_plan for r in referenced_steps(s.arguments)
                 if server_of[r] != server_of[s.id]}
        for server in order[1:]:
            assert any(server in link for link in links), (task.id, server, task.query)
        assert task.metadata["shape"] != "brief" or len(links) >= 2


def test_requests_are_not_the_tools_descriptions(batch) -> None:
    tasks, prepared = batch
    universe = prepared.synthesis.universe
    for task in tasks:
        report = CheckReport()
        check_request(Draft(query=task.query, tools=task.tools, gold_plan=task.gold_plan,
                            final_answer_hints=task.final_answer_hints), universe, report)
        assert report.passed, (task.query, report.feedback())
        # the quoted names are the world's records: the plan finds them by name
        # (or, named by the world with no finder, the scenario holds them and the plan their key)
        plan = " ".join(str(s.arguments) for s in task.gold_plan) + task.scenario.model_dump_json()
        quoted = QUOTED.findall(task.query)
        assert not quoted or any(q in plan for q in quoted), task.query


def test_the_outcome_still_verifies(batch) -> None:
    tasks, _ = batch
    for task in tasks:
        assert task.verifiable and task.ground_truth and task.metadata["outcome"]["writes"]


def _tool(server: str, name: str, description: str, props: dict) -> ToolSpec:
    return ToolSpec(id=f"{server}/{name}", server=server, name=name, description=description,
                    input_schema={"type": "object", "properties": props})


def test_the_checker_tells_a_stitched_draft_what_to_change() -> None:
    """What today's stitched requests did: a placeholder, a service no data reaches, an unused read, a
    copied description. Each is an issue the revision is shown."""
    tools = [
        _tool("a", "list_items", "Lists every item in the workspace with its owner and status", {}),
        _tool("b", "send_message", "Send a message to a channel", {"channel_id": {"type": "string"},
                                                                    "text": {"type": "string"}}),
        _tool("c", "create_note", "Create a note", {"title": {"type": "string"}}),
    ]
    universe = ToolUniverse(tools={t.id: t for t in tools}, graph=nx.DiGraph())
    draft = Draft(
        query="Please lists every item in the workspace with its owner and status, then message 'example'.",
        tools=[t.id for t in tools],
        gold_plan=[PlanStep(id="s1", tool="a/list_items", arguments={}),
                   PlanStep(id="s2", tool="b/send_message", arguments={"channel_id": "1", "text": "example"}),
                   PlanStep(id="s3", tool="c/create_note", arguments={"title": "{{s1.items.0.name}}"})],
    )
    report = CheckReport()
    check_request(draft, universe, report)
    codes = {i.code for i in report.issues}
    assert codes == {"placeholder", "unlinked_service", "paraphrase"}
    draft.gold_plan[1].arguments = {"channel_id": "C_0001", "text": "Added {{s1.items.0.name}}"}
    draft.query = "Find our newest item and tell the team in 'general' about it."
    report = CheckReport()
    check_request(draft, universe, report)
    assert report.passed, report.feedback()
    draft.gold_plan.insert(1, PlanStep(id="s9", tool="a/list_items", arguments={"page": 2}))
    report = CheckReport()
    check_request(draft, universe, report)
    assert {i.code for i in report.issues} == {"idle_step"}


def test_two_reads_gathered_into_one_note_are_linked_and_an_unused_service_is_not() -> None:
    """A brief: two services read, a third writes what both found. Data flows from each read into the note,
    so neither read's service is unlinked; a service that takes nothing and gives nothing still is."""
    tools = [_tool("a", "get_item", "Get an item", {"item_id": {"type": "string"}}),
             _tool("b", "get_customer", "Get a customer", {"customer_id": {"type": "string"}}),
             _tool("c", "create_note", "Create a note", {"title": {"type": "string"}, "text": {"type": "string"}}),
             _tool("d", "get_weather", "Get the weather", {"city": {"type": "string"}})]
    universe = ToolUniverse(tools={t.id: t for t in tools}, graph=nx.DiGraph())
    plan = [PlanStep(id="s1", tool="a/get_item", arguments={"item_id": "itm_0001"}),
            PlanStep(id="s2", tool="b/get_customer", arguments={"customer_id": "cus_0002"}),
            PlanStep(id="s3", tool="c/create_note", arguments={
                "title": "Brief: {{s1.item.name}} and {{s2.customer.name}}",
                "text": "Brief: {{s1.item.name}}; {{s2.customer.name}}."})]
    draft = Draft(query="Pull up the item 'Q3 plan' and the customer 'Acme', and put both in one note.",
                  tools=[t.id for t in tools], gold_plan=plan)
    report = CheckReport()
    check_request(draft, universe, report)
    assert "unlinked_service" not in {i.code for i in report.issues}, report.feedback()
    draft.gold_plan = [plan[0], PlanStep(id="s4", tool="d/get_weather", arguments={"city": "Oslo"}), plan[2]]
    draft.gold_plan[2] = PlanStep(id="s3", tool="c/create_note", arguments={"title": "Brief: {{s1.item.name}}"})
    report = CheckReport()
    check_request(draft, universe, report)
    assert "unlinked_service" in {i.code for i in report.issues}


def test_a_finding_with_its_own_askers_opens_with_one_of_them() -> None:
    """A client found in a booking system is asked about by someone who has clients, whatever the theme."""
    import random

    from cworld.synth.offline.goal_words import GoalWords

    book = Templates.of(ENV).book("harvested")
    words = GoalWords(book)
    clauses = {"find": "find the client 'Ann Lee' in the booking system", "act": "note it on the event 'Sync'",
               "tell": "let the team know in the team chat"}
    own = book.variants("source_personas.service_bookings")
    trip = book.variants("personas.trip")
    for seed in range(12):
        asked = words.request("trip", clauses, random.Random(seed), "service_bookings")
        assert any(asked.startswith(p) for p in own) and not any(asked.startswith(p) for p in trip)
        assert any(words.request("trip", clauses, random.Random(seed), "weather").startswith(p) for p in trip)
