"""What a harvested tool can do in a goal shape, read off the world engine (`offline/action_space.py`; issue
34, "draw across the pool"): a list scoped to a parent record takes that record as the request names it; a
world numbered for tools that take integers fits them; a kind held only by name can be looked at but not
changed; a change keeps only the text arguments its rule writes; an argument named as the field the world
keys a kind by names that kind (a page's `url`); every tool left out says why."""

from __future__ import annotations

from typing import Any

import pytest

from cworld.environment import Environment, Workspace
from cworld.synth.offline.action_space import ActionSpace, key_value
from cworld.synth.offline.goal_roles import Roles

SERVERS = ("airtable-mcp-server", "figma-console-mcp", "30book-mcp", "linear-mcp-server", "fetcher-mcp",
           "mcp-yahoo-finance", "jina-mcp-tools", "mongodb-mcp-server", "aaronsb-jira-cloud-mcp", "puppeteer-mcp-server",
           "browsermcp-mcp")


@pytest.fixture(scope="module")
def space(tmp_path_factory: pytest.TempPathFactory, shared_worlds: Any) -> ActionSpace:
    from cworld.synth import api
    from cworld.synth.toolset import load_universe

    env = Environment.resolve()
    ws = shared_worlds(Workspace.resolve(tmp_path_factory.mktemp("space") / "ws"))
    universe = load_universe(env, ws, need_search=False, harvested=True)
    engine = api._engine(env, ws, universe)
    tools = [t for t in universe.tools.values() if t.server in SERVERS]
    return ActionSpace(engine, tools, Roles(engine))


def test_a_scoped_list_finds_records_within_a_named_parent(space: ActionSpace) -> None:
    unit = space.units["airtable-mcp-server/list_tables"]
    assert unit.use == "find" and unit.kind == "table" and unit.refs == {"baseId": "base"}


def test_a_change_carries_only_the_text_its_rule_keeps(space: ActionSpace) -> None:
    """`figma_update_variable(variableId, description, value)` sets the variable's value: a note put in its
    description would be lost, so the unit carries no text (a reconcile cannot note on it)."""
    unit = space.units["figma-console-mcp/figma_update_variable"]
    assert unit.use == "change" and unit.texts == ()


def test_a_numbered_world_fits_tools_that_take_integers(space: ActionSpace) -> None:
    unit = space.units["30book-mcp/sb_book"]
    assert unit.use == "look" and unit.target == "book_id"
    assert key_value({"7": {"id": 7, "name": "x"}}, "7") == 7
    assert key_value({"bk_7": {"id": "bk_7"}}, "bk_7") == "bk_7"
    assert key_value({"7": {"id": True}}, "7") == "7"


def test_a_kind_held_only_by_name_is_looked_at_never_changed(space: ActionSpace) -> None:
    assert space.units["30book-mcp/sb_author"].thin
    assert space.left_out["linear-mcp-server/linear_update_issue"] == "thin_kind"
    assert not any(u.thin and u.use not in ("look", "find") for u in space.units.values())


def test_an_argument_the_world_keys_a_kind_by_names_that_kind(space: ActionSpace) -> None:
    """`fetch_url(url)`: the world keys its pages by their `url`, so the argument names a page though its name
    says no kind; a bare `id` says nothing of which kind it is."""
    unit = space.units["fetcher-mcp/fetch_url"]
    assert unit.use == "look" and unit.target == "url" and unit.kind == "page"
    assert space._keyed_by("fetcher-mcp", "page", "url")
    assert not space._keyed_by("fetcher-mcp", "page", "id")
    assert not space._keyed_by("fetcher-mcp", "page", "title")


def test_a_stock_without_a_name_is_named_by_its_symbol(space: ActionSpace) -> None:
    """People name a stock by its ticker: the world's stocks have a symbol and a company but no name, so the
    symbol is what a request says ('NWSC'), and `get_current_stock_price(symbol)` looks one up."""
    from cworld.synth.offline.goal_roles import label_field

    assert label_field({"symbol": "NWSC", "company": "Northwind Semiconductors", "price": 70.9}) == "symbol"
    assert label_field({"name": "Bitcoin", "symbol": "BTC"}) == "name"
    unit = space.units["mcp-yahoo-finance/get_current_stock_price"]
    assert unit.use == "look" and unit.target == "symbol" and unit.kind == "symbol"


def test_every_tool_left_out_says_why(space: ActionSpace) -> None:
    ids = {t for t in space.left_out} | set(space.units)
    assert not set(space.units) & set(space.left_out)
    assert {t.split("/")[0] for t in ids} == set(SERVERS)
    assert set(space.left_out.values()) <= {"simulated", "never", "list_no_kind", "list_not_kind", "thin_kind",
                                            "names_no_record", "id_not_kind", "needs_value", "make_no_text",
                                            "unnamed_or_keys", "keeps_nothing", "acts_on_matches"}


def test_a_name_with_its_verb_last_still_says_what_it_makes() -> None:
    from cworld.data_model import ToolSpec
    from cworld.synth.offline.action_space import noun_of

    assert noun_of(ToolSpec(server="boondmanager-mcp-server", name="boond_contacts_create"), None) == "contact"
    assert noun_of(ToolSpec(server="ahdev-dokploy-mcp", name="project-create"), None) == "project"
    assert noun_of(ToolSpec(server="x", name="create_voice_agent"), None) == "voice agent"
    assert noun_of(ToolSpec(server="x", name="create_voice_agent"), "agent") == "agent"
    assert noun_of(ToolSpec(server="agent-lease-mcp", name="send"), None) == "message"  # what a bare send sends


def test_a_search_whose_query_is_optional_searches_for_what_it_finds(space: ActionSpace) -> None:
    """`linear_search_issues(query?)` searches for the issue the plan names (the search_finds rule: a plan
    picks by name only from a search that asked for that name), rather than listing with an empty query."""
    from cworld.engine.cards.operations import verb_kind

    assert space.units["linear-mcp-server/linear_search_issues"].queries == ("query",)
    assert all(u.queries for u in space.units.values() if u.use == "find" and verb_kind(u.tool.name) == "search")


def test_an_action_whose_rule_only_reads_its_record_looks_at_it(space: ActionSpace) -> None:
    """`jina_reader(url)` is an action by its name, but its rule finds the page and changes nothing: a look."""
    unit = space.units["jina-mcp-tools/jina_reader"]
    assert unit.use == "look" and unit.target == "url"
    assert not any(u.use == "change" and space.engine.rule_for(u.tool)[0].read_only for u in space.units.values())


def test_a_write_whose_rule_changes_nothing_is_no_unit(space: ActionSpace) -> None:
    """`create_comment` on a base whose world holds no comments: its rule checks the record and keeps nothing,
    so a task whose one write it is would leave the world as it was (the verifier's `no_outcome`), and each
    such draft cost the tools drawn with it a try."""
    assert space.left_out["airtable-mcp-server/create_comment"] == "keeps_nothing"
    assert all(space.engine.rule_for(u.tool, u.fixed or None)[0].do for u in space.units.values()
               if u.use not in ("look", "find"))


def test_a_send_whose_address_is_optional_still_says_whom_it_goes_to() -> None:
    """`send_message(to?: [string], subject, body)`: the recipient rule refuses a message sent to no one, so
    the unit fills its address as a plain value (a one-address list where the schema takes a list) and the
    request states it; a tool that sends nothing gets no address."""
    import random
    from datetime import date

    from cworld.data_model import ToolSpec
    from cworld.synth.offline.action_space import _fill
    from cworld.synth.offline.goal_roles import plain_value

    props = {"to": {"type": "array", "items": {"type": "string"}}, "subject": {"type": "string"},
             "body": {"type": "string"}}
    send = ToolSpec(server="x", name="send_message", input_schema={"type": "object", "properties": props})
    filled = _fill(send, "make", set())
    assert filled is not None and filled[3] == ("to",)
    note = ToolSpec(server="x", name="create_note", input_schema={"type": "object", "properties": props})
    assert _fill(note, "make", set())[3] == ()  # type: ignore[index]
    value = plain_value("to", props["to"], random.Random(1), date(2026, 5, 1))
    assert isinstance(value, list) and len(value) == 1 and "@" in value[0]
    assert "@" in plain_value("to", {"type": "string"}, random.Random(1), date(2026, 5, 1))


def test_a_required_page_asks_for_the_first_page() -> None:
    """`list-quotes(page: integer)` requires a page: the plan asks for the first one (1, or 0 where the schema
    counts from 0), not a page drawn at random that a short list does not have."""
    import random
    from datetime import date

    from cworld.synth.offline.goal_roles import plain_value

    today, rng = date(2026, 5, 1), random.Random(3)
    assert [plain_value("page", {"type": "integer"}, rng, today) for _ in range(5)] == [1] * 5
    assert plain_value("page", {"type": "integer", "minimum": 0}, rng, today) == 0
    assert plain_value("offset", {"type": "integer"}, rng, today) == 0
    assert plain_value("count", {"type": "integer"}, random.Random(3), today) != 0


def test_a_record_its_rule_finds_by_name_is_named_by_its_name(space: ActionSpace) -> None:
    """`list-collections(connectionId, database)`: the database is found by its name, so the plan says its name;
    `delete-many(connectionId, filter)` deletes what the filter matches, never a record a goal names."""
    unit = space.units["mongodb-mcp-server/list-collections"]
    assert unit.use == "find" and unit.refs == {"connectionId": "connection", "database": "database"}
    assert "name" in unit.by_name["database"]
    assert space.left_out["mongodb-mcp-server/delete-many"] == "acts_on_matches"


def test_a_multi_operation_tool_is_a_unit_per_operation_each_call_passing_it(space: ActionSpace) -> None:
    """`manage_jira_board(operation, boardId)` runs the rule of the operation it is given (`dispatch.py`): a
    unit per operation, whose calls pass it."""
    get = space.units["aaronsb-jira-cloud-mcp/manage_jira_board#get"]
    assert get.tool.id == "aaronsb-jira-cloud-mcp/manage_jira_board" and get.fixed == {"operation": "get"}
    assert get.use == "look" and get.kind == "board" and get.target == "boardId"
    assert "aaronsb-jira-cloud-mcp/manage_jira_board" not in space.units


def test_a_field_is_named_by_its_locator_and_takes_the_goals_text(space: ActionSpace) -> None:
    """A browser's fill finds the element its selector, ref or accessible name locates (`element_key`, the
    browser card's families): that argument names the element, and the value it writes carries the goal's
    text; an `element` argument beside the ref describes it in words, as the request names it."""
    fill = space.units["puppeteer-mcp-server/puppeteer_fill"]
    assert fill.use == "change" and fill.kind == "element" and fill.target == "selector" and fill.texts == ("value",)
    typed = space.units["browsermcp-mcp/browser_type"]
    assert typed.target == "ref" and typed.describes == ("element",) and typed.texts == ("text",)


def test_an_action_that_carries_something_out_is_never_a_look() -> None:
    """A call whose rule only reads its record looks at it where its name says it reads (`scrape`,
    `summarize_document`); `library_reserve_item` or `application-stop` carry out what the world does not
    keep: a plan that looked something up with them would reserve a book or stop an application."""
    from cworld.data_model import ToolSpec
    from cworld.synth.offline.action_space import _use

    def use(name: str) -> str | None:
        return _use(ToolSpec(server="x", name=name), "action", True, read_only=True)

    assert use("scrape") == use("summarize_document") == use("jina_reader") == "look"
    assert use("library_reserve_item") == use("application-stop") == use("power-off-droplet") == "change"
