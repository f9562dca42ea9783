"""Arguments valid by meaning (issue 34, item 3): each rule of `cworld.synth.argument_checks` accepts a draft
that makes sense and rejects a seeded bad one, with a message that says what to change."""

from __future__ import annotations

import networkx as nx
import pytest

from cworld.data_model import PlanStep, Scenario, ToolSpec
from cworld.synth.argument_checks import check_arguments
from cworld.synth.checks import CheckReport
from cworld.synth.draft import Draft
from cworld.synth.toolset import ToolUniverse


def _tool(server: str, name: str, props: dict[str, dict], category: str = "generic", read_only: bool = False
          ) -> ToolSpec:
    spec = ToolSpec(server=server, name=name, description=name.replace("_", " "), category=category,
                    input_schema={"type": "object", "properties": props})
    spec.annotations.read_only_hint = read_only
    return spec


S = {"type": "string"}
TOOLS = [
    _tool("hotels", "search_hotels", {"city": S, "check_in": S, "check_out": S}, "travel", read_only=True),
    _tool("hotels", "book_hotel", {"hotel_id": S, "check_in": S, "check_out": S}, "travel"),
    _tool("foreman", "list_time_cards", {}, read_only=True),
    _tool("board", "list_cards", {}, read_only=True),
    _tool("board", "get_card", {"card_id": S}, read_only=True),
    _tool("board", "update_card", {"card_id": S, "dueDate": S, "start": S}, "task_board"),
    _tool("mail", "send_email", {"to": S, "subject": S, "body": S}, "email"),
    _tool("drive", "upload_file", {"name": S, "content": S}, "file_system"),
    _tool("papers", "search_papers", {"query": S}, "research_papers", read_only=True),
    _tool("notes", "create_note", {"title": S, "text": S}, "documents"),
]
UNIVERSE = ToolUniverse(tools={t.id: t for t in TOOLS}, graph=nx.DiGraph())
TODAY = "2026-03-10T09:00:00"


def _codes(query: str, *steps: PlanStep) -> set[str]:
    draft = Draft(query=query, tools=sorted({s.tool for s in steps}), gold_plan=list(steps),
                  scenario=Scenario(today=TODAY))
    report = CheckReport()
    check_arguments(draft, UNIVERSE, report)
    assert all(i.message for i in report.issues)
    return {i.code for i in report.issues}


def test_date_ranges_are_ordered() -> None:
    ok = PlanStep(id="s1", tool="hotels/search_hotels",
                  arguments={"city": "Lisbon", "check_in": "2026-05-07", "check_out": "2026-05-21"})
    bad = PlanStep(id="s1", tool="hotels/search_hotels",
                   arguments={"city": "Lisbon", "check_in": "2026-05-21", "check_out": "2026-05-07"})
    assert "date_order" not in _codes("A hotel in Lisbon.", ok)
    assert "date_order" in _codes("A hotel in Lisbon.", bad)


def test_a_due_date_is_not_before_the_start() -> None:
    """A card's start and due date are a range too (`update_card_details(dueDate, start)`), and the drafter
    fills a range's start first whatever order the schema lists them in."""
    from cworld.synth.argument_checks import ends_range

    ok = PlanStep(id="s1", tool="board/update_card", arguments={"card_id": "c1", "start": "2026-04-21",
                                                                "dueDate": "2026-04-23"})
    bad = PlanStep(id="s1", tool="board/update_card", arguments={"card_id": "c1", "dueDate": "2026-04-21",
                                                                 "start": "2026-04-23"})
    assert "date_order" not in _codes("Plan the card.", ok)
    assert "date_order" in _codes("Plan the card.", bad)
    assert sorted(["dueDate", "start"], key=ends_range) == ["start", "dueDate"]


def test_bookings_are_in_the_worlds_future() -> None:
    ok = PlanStep(id="s1", tool="hotels/book_hotel",
                  arguments={"hotel_id": "htl_001", "check_in": "2026-04-01", "check_out": "2026-04-03"})
    bad = PlanStep(id="s1", tool="hotels/book_hotel",
                   arguments={"hotel_id": "htl_001", "check_in": "2026-02-01", "check_out": "2026-02-03"})
    assert "date_order" not in _codes("Book it.", ok)
    assert "date_order" in _codes("Book it.", bad)


def test_an_id_is_of_the_kind_the_tool_takes() -> None:
    cards = PlanStep(id="s1", tool="board/list_cards")
    times = PlanStep(id="s1", tool="foreman/list_time_cards")
    ok = PlanStep(id="s2", tool="board/get_card", arguments={"card_id": "{{s1.cards[title=Fix login].id}}"})
    bad = PlanStep(id="s2", tool="board/get_card", arguments={"card_id": "{{s1.items[title=Fix login].id}}"})
    assert "id_kind" not in _codes("Pull up the card 'Fix login'.", cards, ok)
    assert "id_kind" in _codes("Pull up the card 'Fix login'.", times, bad)


def test_a_message_has_its_recipient() -> None:
    ok = PlanStep(id="s1", tool="mail/send_email",
                  arguments={"to": "ana@corp.test", "subject": "Offsite", "body": "Booked."})
    none = PlanStep(id="s1", tool="mail/send_email", arguments={"subject": "Offsite", "body": "Booked."})
    unsaid = PlanStep(id="s1", tool="mail/send_email",
                      arguments={"to": "bo@corp.test", "subject": "Offsite", "body": "Booked."})
    assert "recipient" not in _codes("Email ana@corp.test about the offsite.", ok)
    assert "recipient" in _codes("Send an email about it from my email.", none)
    assert "recipient" in _codes("Email ana@corp.test about the offsite.", unsaid)


def test_an_upload_has_content() -> None:
    ok = PlanStep(id="s1", tool="drive/upload_file", arguments={"name": "notes.txt", "content": "Agenda: budget"})
    bad = PlanStep(id="s1", tool="drive/upload_file", arguments={"name": "notes.txt"})
    assert "upload_content" not in _codes("Upload the notes.", ok)
    assert "upload_content" in _codes("Upload the notes.", bad)


@pytest.mark.parametrize("query,passes", [("Sparse retrieval at scale", True), ("machine learning", False)])
def test_a_search_finds_what_it_searched_for(query: str, passes: bool) -> None:
    search = PlanStep(id="s1", tool="papers/search_papers", arguments={"query": query})
    note = PlanStep(id="s2", tool="notes/create_note",
                    arguments={"title": "{{s1.papers[title=Sparse retrieval at scale].title}}", "text": "Read it."})
    codes = _codes("Find the paper 'Sparse retrieval at scale' and note it.", search, note)
    assert ("search_finds" not in codes) is passes


def test_a_plain_coordinate_is_a_place_on_the_globe() -> None:
    """A weather lookup's `latitude`/`longitude` drawn for a plan lie on the globe (a real place's), where a plain
    number drawn from 1-100 gave latitudes the engine refuses (`engine/rules/arguments.coordinate_checks`)."""
    import random
    from datetime import date

    from cworld.synth.offline.goal_roles import plain_value

    rng, today, number = random.Random(7), date(2026, 8, 1), {"type": "number"}
    lats = [plain_value(k, number, rng, today) for k in ("latitude", "lat", "origin_lat") for _ in range(200)]
    lons = [plain_value(k, number, rng, today) for k in ("longitude", "lng", "center_lon") for _ in range(200)]
    assert all(-90 <= v <= 90 for v in lats) and all(-180 <= v <= 180 for v in lons)
    assert any(v < 0 for v in lons) and any(abs(v) > 100 for v in lons)  # drawn over the globe, not from 1-100
    assert plain_value("count", number, random.Random(7), today) == plain_value("count", number, random.Random(7), today)
