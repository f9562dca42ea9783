"""Kinds a server's tools name that its card lacks (issue 33, `engine/world/named.py`): the world holds them, so
an unknown organization is `not_found` as the service says, a card kind the tools take as numbers is numbered,
and a get that checks a reference answers its own record. The service is written for the test: a small
build server on the devops card, which has no organizations."""

from __future__ import annotations

from typing import Any

import pytest

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards.card import CategoryCard, load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.rules import RulesEngine
from cworld.engine.world.base import ServerWorld, World
from cworld.engine.world.build import generated_world, world_now
from cworld.engine.world.named import named_kinds
from cworld.environment import Environment

SERVER = "build-hub"


def tool(name: str, props: dict[str, Any], required: list[str] | None = None) -> ToolSpec:
    return ToolSpec(server=SERVER, name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": required or list(props)})


TOOLS = [
    tool("get_pipeline", {"organizationId": {"type": "string"}, "pipelineId": {"type": "string"}}),
    tool("get_organization", {"organizationId": {"type": "string"}}),
    tool("list_builds", {"top": {"type": "integer"}, "skip": {"type": "integer"}}, []),
    tool("list_build_logs", {"limit": {"type": "integer"}, "from": {"type": "integer"}}, []),
    tool("create_activity", {"against_type": {"type": "string"}, "against_id": {"type": "string"},
                             "subject": {"type": "string"}}),
    tool("link_work_items", {"workItemId": {"type": "integer"}, "relatedWorkItemId": {"type": "integer"}}),
    tool("create_incident", {"title": {"type": "string"}, "severity": {"type": "string"}}, ["title"]),
    tool("list_incidents", {"start_date": {"type": "string"}, "end_date": {"type": "string"}}, []),
    tool("list_incident_updates", {"incidentId": {"type": "string"}}),
    tool("incident-delete", {"UUID": {"type": "string"}}),
]


@pytest.fixture(scope="module")
def cards() -> dict[str, CategoryCard]:
    return load_cards(Environment.resolve().category_cards)


@pytest.fixture(scope="module")
def engine(cards: dict[str, CategoryCard]) -> RulesEngine:
    built = generated_world(SERVER, cards["devops"], 0, size=30, tools=TOOLS)
    return RulesEngine(cards, TOOLS, world=World(seed=0, now="2026-08-01T09:00:00Z", servers={SERVER: built}))


def call(engine: RulesEngine, name: str, **args: Any) -> ToolResult:
    spec = next(t for t in TOOLS if t.name == name)
    return engine.respond_sync(spec, args, SessionLog(seed=0))


def test_the_world_holds_the_kinds_the_tools_name_and_no_generic_or_polymorphic_ones(cards: dict[str, Any]) -> None:
    kinds = {k.name: k for k in named_kinds(cards["devops"], TOOLS)}
    assert "organization" in kinds and "pipeline" in kinds
    assert "against" not in kinds  # `against_id` beside `against_type` names a record of any kind
    assert "related_work_item" not in kinds and kinds["work_item"].id_format == "{n}"  # integers, one kind


def test_an_unknown_organization_is_not_found_and_a_held_one_is_answered(engine: RulesEngine) -> None:
    world = engine.world(0).server(SERVER)
    assert world is not None and world.named_kinds
    org = next(iter(world.state["organizations"]))
    assert call(engine, "get_organization", organizationId="zzqxv-nonexistent").error_class == "not_found"
    found = call(engine, "get_organization", organizationId=org)
    assert not found.is_error and found.structured_content["organization_id"] == org  # type: ignore[index]
    assert engine.rule_for(TOOLS[1])[0].check  # type: ignore[union-attr]


def test_a_get_that_checks_a_reference_answers_its_own_record(engine: RulesEngine) -> None:
    world = engine.world(0).server(SERVER)
    assert world is not None
    org, pipeline = next(iter(world.state["organizations"])), next(iter(world.state["pipelines"]))
    assert call(engine, "get_pipeline", organizationId="zzqxv", pipelineId=pipeline).error_class == "not_found"
    found = call(engine, "get_pipeline", organizationId=org, pipelineId=pipeline).structured_content
    assert found is not None and found["pipeline_id"] == pipeline


def test_integer_ids_name_numbered_records(engine: RulesEngine) -> None:
    world = engine.world(0).server(SERVER)
    assert world is not None
    keys = list(world.state["work_items"])
    assert all(str(k).isdigit() for k in keys)
    assert not call(engine, "link_work_items", workItemId=int(keys[0]), relatedWorkItemId=int(keys[1])).is_error
    assert call(engine, "link_work_items", workItemId=int(keys[0]), relatedWorkItemId=987654).error_class == "not_found"


@pytest.mark.parametrize(("name", "size", "offset"), [("list_builds", "top", "skip"), ("list_build_logs", "limit", "from")])
def test_top_and_from_page_as_a_size_and_an_offset(engine: RulesEngine, name: str, size: str, offset: str) -> None:
    first = call(engine, name, **{size: 5, offset: 0}).structured_content
    second = call(engine, name, **{size: 5, offset: 5}).structured_content
    assert first is not None and second is not None
    one, two = (next(v for v in page.values() if isinstance(v, list)) for page in (first, second))
    assert len(one) == 5 and len(two) == 5 and not {str(i) for i in one} & {str(i) for i in two}


def test_a_world_without_named_kinds_reads_the_card_alone(cards: dict[str, CategoryCard]) -> None:
    world = World(seed=0, now="2026-08-01T09:00:00Z",
                  servers={SERVER: ServerWorld(SERVER, {"pipelines": {}}, kinds={"pipeline": "pipelines"}, card="devops")})
    engine = RulesEngine(cards, TOOLS, world=world)
    assert engine.card_of(TOOLS[0]) is cards["devops"]


def test_values_services_refuse_whatever_their_rules(engine: RulesEngine) -> None:
    """A required title given empty, a filter range that ends before it starts, a list anchored at a record of
    its own kind that does not exist: each refused, each once a plain answer."""
    assert call(engine, "create_incident", title="  ").error_class == "invalid_args"
    assert not call(engine, "create_incident", title="Checkout down").is_error
    assert call(engine, "list_incidents", start_date="2026-08-10", end_date="2026-08-01").error_class == "invalid_args"
    assert call(engine, "list_incidents", start_date="someday").error_class == "invalid_args"
    assert not call(engine, "list_incidents", start_date="2026-08-01", end_date="2026-08-10").is_error
    assert call(engine, "list_incident_updates", incidentId="zzqxv").error_class == "not_found"
    world = engine.world(0).server(SERVER)
    assert world is not None
    assert not call(engine, "list_incident_updates", incidentId=next(iter(world.state["incidents"]))).is_error


MAIL = [ToolSpec(server="post-desk", name="create_draft", description="create draft",
                 input_schema={"type": "object", "properties": {"subject": {"type": "string"}}, "required": ["subject"]}),
        ToolSpec(server="post-desk", name="list_messages", description="list messages",
                 input_schema={"type": "object", "properties": {"maxResults": {"type": "integer"}}})]


def test_a_new_record_is_stamped_with_what_its_lists_sort_by(cards: dict[str, CategoryCard]) -> None:
    """Made things are listed newest first by their date: a new draft carries the time it was made, so it
    stands among them by that time instead of sorting last for want of a date."""
    built = generated_world("post-desk", cards["email"], 0, size=60, tools=MAIL)
    engine = RulesEngine(cards, MAIL, world=World(seed=0, now=world_now(0), servers={"post-desk": built}))
    log = SessionLog(seed=0)
    made = engine.respond_sync(MAIL[0], {"subject": "cwmark"}, log)
    log.record(MAIL[0].id, {"subject": "cwmark"}, made)
    assert made.structured_content is not None
    stamp = str(made.structured_content.get("date"))
    newer = sum(str(m.get("date")) > stamp for m in built.state["messages"].values())
    page = engine.respond_sync(MAIL[1], {"maxResults": newer + 1}, log).structured_content
    assert page is not None and next(v for v in page.values() if isinstance(v, list))[-1].get("subject") == "cwmark"


def test_a_family_about_a_parent_held_only_by_name_gives_way_to_inference(cards: dict[str, CategoryCard]) -> None:
    """The task board's comment family writes `card_id`; a comment on a task (a kind its tools name that the
    card lacks) is stored under `task_id`, so the list of the task's comments finds it."""
    tools = [ToolSpec(server="todo-hub", name="add_comment", description="add comment", input_schema={
                 "type": "object", "properties": {"task_id": {"type": "string"}, "text": {"type": "string"}},
                 "required": ["task_id", "text"]}),
             ToolSpec(server="todo-hub", name="list_comments", description="list comments", input_schema={
                 "type": "object", "properties": {"task_id": {"type": "string"}}, "required": ["task_id"]})]
    built = generated_world("todo-hub", cards["task_board"], 0, size=20, tools=tools)
    engine = RulesEngine(cards, tools, world=World(seed=0, now="2026-08-01T09:00:00Z", servers={"todo-hub": built}))
    assert engine.rule_for(tools[0])[1] == "inferred"
    task = next(iter(built.state["tasks"]))
    log = SessionLog(seed=0)
    made = engine.respond_sync(tools[0], {"task_id": task, "text": "cwmark"}, log)
    log.record(tools[0].id, {"task_id": task, "text": "cwmark"}, made)
    assert "cwmark" in engine.respond_sync(tools[1], {"task_id": task}, log).text


def test_a_uuid_argument_names_the_record_of_the_tools_kind(engine: RulesEngine) -> None:
    world = engine.world(0).server(SERVER)
    assert world is not None
    assert call(engine, "incident-delete", UUID="zzqxv-nonexistent").error_class == "not_found"
    assert not call(engine, "incident-delete", UUID=next(iter(world.state["incidents"]))).is_error


def test_a_card_kind_whose_ids_a_tool_refuses_by_pattern_is_numbered(cards: dict[str, CategoryCard]) -> None:
    """`service_ids: [string, pattern ^[0-9]+$]` refuses the card's `svc_0001`: the salon's services are
    numbered, so the ids its list shows are ids its booking accepts."""
    salon = [ToolSpec(server="salon", name="create_appointment", input_schema={"type": "object", "properties": {
                 "service_ids": {"type": "array", "items": {"type": "string", "pattern": "^[0-9]+$"}},
                 "client_id": {"type": "string"}}, "required": ["service_ids"]}),
             ToolSpec(server="salon", name="get_service", input_schema={"type": "object", "properties": {
                 "service_id": {"type": "string"}}, "required": ["service_id"]})]
    kinds = {k.name: k for k in named_kinds(cards["service_bookings"], salon)}
    assert kinds["service"].id_format == "{n}"
    assert "client" not in kinds  # a plain string takes the card's own ids: they stay


def test_a_list_read_under_a_parent_shows_that_parents_records(cards: dict[str, CategoryCard]) -> None:
    """`list_channels(teamId)` on a messaging card whose channels name no team, and `get_channel_pins(channelId)`,
    a get whose plural name makes it a list: each channel is some team's and each pin some channel's, so a
    team's list shows its channels (before, none: the filter read a field no record held) and no other's."""
    def chat(name: str, arg: str) -> ToolSpec:
        return ToolSpec(server="team-chat", name=name, description=name.replace("_", " "),
                        input_schema={"type": "object", "properties": {arg: {"type": "string"}}, "required": [arg]})

    tools = [chat("list_channels", "teamId"), chat("get_team", "teamId"), chat("get_channel_pins", "channelId"),
             chat("get_pin", "pinId")]
    built = generated_world("team-chat", cards["messaging"], 0, size=12, tools=tools)
    assert all("team_id" in c for c in built.state["channels"].values())
    assert all("channel_id" in p for p in built.state["pins"].values())
    engine = RulesEngine(cards, tools, world=World(seed=0, now="2026-08-01T09:00:00Z", servers={"team-chat": built}))
    listed: list[str] = []
    for team in built.state["teams"]:
        answer = engine.respond_sync(tools[0], {"teamId": team}, SessionLog(seed=0)).structured_content
        items = next(v for v in (answer or {}).values() if isinstance(v, list))
        assert all(str(c["team_id"]) == str(team) for c in items)
        listed += [str(c["channel_id"]) for c in items]
    assert sorted(listed) == sorted(str(k) for k in built.state["channels"])
    channel = next(str(p["channel_id"]) for p in built.state["pins"].values())
    pins = engine.respond_sync(tools[2], {"channelId": channel}, SessionLog(seed=0)).structured_content
    assert pins and any(isinstance(v, list) and v for v in pins.values())


def test_a_record_under_two_parents_agrees_with_its_parents_own(cards: dict[str, CategoryCard]) -> None:
    """`list_messages(teamId, channelId)`: a message names its channel and a team, and the channel names its
    team; the message's team is its channel's, so the list of a channel in its own team shows its messages
    (drawn apart, a channel's messages named other teams and the list read under both showed none)."""
    def chat(name: str, *args: str) -> ToolSpec:
        props = {a: {"type": "string"} for a in args}
        return ToolSpec(server="team-chat", name=name, description=name.replace("_", " "),
                        input_schema={"type": "object", "properties": props, "required": list(args)})

    tools = [chat("list_channels", "teamId"), chat("get_team", "teamId"), chat("list_messages", "teamId", "channelId")]
    built = generated_world("team-chat", cards["messaging"], 0, size=15, tools=tools)
    channels = built.state["channels"]
    messages = [m for m in built.state["messages"].values() if m.get("channel_id") is not None]
    assert messages and all("team_id" in m for m in messages)
    assert all(str(m["team_id"]) == str(channels[str(m["channel_id"])]["team_id"]) for m in messages)


def test_a_list_named_by_two_words_is_read_under_its_parent(cards: dict[str, CategoryCard]) -> None:
    """`getProjectUpdates(projectId)` lists project updates, not updates: the kind its last two words name
    holds a reference to the project, so the list of one project shows its updates."""
    def hub(name: str, arg: str) -> ToolSpec:
        return ToolSpec(server="build-hub", name=name, input_schema={
            "type": "object", "properties": {arg: {"type": "string"}}, "required": [arg]})

    tools = [hub("get_project", "projectId"), hub("get_project_update", "projectUpdateId"),
             hub("getProjectUpdates", "projectId")]
    kinds = {k.name: k for k in named_kinds(cards["devops"], tools)}
    assert "project_id" in kinds["project_update"].fields
