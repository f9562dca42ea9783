"""Every list tool of the stateful sandbox apps pages (issue 35): it takes `page` and `page_size`, says its
page size, and answers with page, page_size, total and has_more, so a world of 10,000 records answers a
page, not the collection."""

from __future__ import annotations

import re
from typing import Any

import pytest

from cworld.sandbox.catalog import all_apps, stateful_apps
from cworld.sandbox.framework.server import build_server, tool_specs
from cworld.sandbox.framework.session import SandboxSession

#: Lists bounded by construction, not by the world's size: a day holds at most 48 half-hour slots.
BOUNDED = {("calendar", "find_free_slots")}
#: Answers that carry a group whose size grows with the world: a board's lists, a card's checklists, a thread.
PAGED_GROUPS = ("read_authenticator", "get_itinerary", "get_board", "get_card", "get_thread")
PAGE_FIELDS = {"page", "page_size", "total", "has_more"}


def list_tools() -> list[tuple[str, Any]]:
    return [(app.name, spec) for app in stateful_apps() for spec in tool_specs(app)
            if spec.name.startswith(("list_", "find_", "search_")) or spec.name in PAGED_GROUPS]


@pytest.mark.parametrize(("app", "spec"), list_tools(), ids=lambda v: getattr(v, "name", v))
def test_every_list_tool_takes_a_page_and_answers_its_page_fields(app: str, spec: Any) -> None:
    if (app, spec.name) in BOUNDED:
        return
    takes = spec.input_schema["properties"]
    assert {"page", "page_size"} <= set(takes), f"{app}/{spec.name} does not page"
    assert takes["page_size"].get("maximum") == 50
    assert set(spec.output_schema["properties"]) >= PAGE_FIELDS, f"{app}/{spec.name} answers no page fields"
    default = takes["page_size"].get("default")
    stated = re.search(r"(\d+) a page by default", " ".join(spec.description.split()))
    if stated is not None:
        assert int(stated.group(1)) == default, f"{app}/{spec.name} states {stated.group(1)}, defaults to {default}"


def call(app: str, tool: str, **arguments: Any) -> dict[str, Any]:
    server = build_server(SESSION, app)
    result = server.call_tool_sync(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content or {}


SESSION = SandboxSession(0, all_apps())


def test_paging_through_a_list_one_record_at_a_time_gives_the_whole_list() -> None:
    whole = call("docs", "list_folders", page_size=50)
    assert whole["total"] == len(whole["folders"]) and whole["has_more"] is False
    seen, page = [], 1
    while True:
        one = call("docs", "list_folders", page=page, page_size=1)
        seen += one["folders"]
        assert one["total"] == whole["total"]
        if not one["has_more"]:
            break
        page += 1
    assert seen == whole["folders"]


def test_a_page_past_the_end_is_empty_and_says_so() -> None:
    past = call("travel", "list_travellers", page=99, page_size=20)
    assert past["travellers"] == [] and past["has_more"] is False and past["total"] > 0
