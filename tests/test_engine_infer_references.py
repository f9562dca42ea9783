"""References inference reads beyond `<kind>_id` (issue 33): an argument named by the key field only one kind has
(a CAD entity's `handle`, `target_handle`, `handles`), a required text argument named as another kind the world
holds (`database`, `collection`), a copy whose key argument names what it copies, the ids a browser family does
not read itself, and what "checks something" counts."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller, tool_spec

from cworld.data_model import ToolSpec
from cworld.engine.rules.spec import Check, Rule

STR = {"type": "string"}
NUM = {"type": "number"}

tool = tool_spec


CAD = [tool("drafting", "hatch_edit", {"handle": STR, "color": NUM}, ["handle"]),
       tool("drafting", "block_create_from_entities", {"handles": {"type": "array", "items": STR}, "name": STR}),
       tool("drafting", "entity_copy", {"handle": STR, "dx": NUM, "dy": NUM}),
       tool("drafting", "entity_get", {"handle": STR})]


def drafting_state() -> dict[str, Any]:
    entities = {"1A2B": {"handle": "1A2B", "type": "HATCH", "layer": "A-WALL", "color": 7},
                "3C4D": {"handle": "3C4D", "type": "LINE", "layer": "A-WALL", "color": 1}}
    return {"entities": entities, "layers": {"A-WALL": {"name": "A-WALL", "color": 7}}, "blocks": {}}


def drafting() -> Any:
    return rules_caller("drafting", "cad_drawing", drafting_state(),
                        {"entity": "entities", "layer": "layers", "block": "blocks"}, CAD)


def test_a_kinds_own_key_field_names_its_records_in_any_argument_form() -> None:
    call = drafting()
    assert call("hatch_edit", handle="FFFF", color=3).error_class == "not_found"
    edited = call("hatch_edit", handle="1A2B", color=3)
    assert not edited.is_error, edited.text
    assert json.loads(call("entity_get", handle="1A2B").text)["color"] == 3  # the edit is the entity's
    assert call("block_create_from_entities", handles=["1A2B", "FFFF"], name="door").error_class == "not_found"


def test_a_copy_names_what_it_copies_by_its_key_field() -> None:
    call = drafting()
    copied = call("entity_copy", handle="3C4D", dx=1.0, dy=0.0)
    assert not copied.is_error, copied.text  # not "already exists": the handle is the original's
    assert call("entity_copy", handle="FFFF", dx=1.0, dy=0.0).error_class == "not_found"


DOCS = [tool("docstore", "list_tables", {"database": STR})]


def docstore() -> Any:
    state = {"databases": {"database_0001": {"id": "database_0001", "name": "shop"}},
             "tables": {"orders": {"name": "orders", "database": "shop", "columns": ["id", "total"]}}}
    kinds = {"database": "databases", "table": "tables"}
    named = [{"name": "database", "id_prefix": "database", "fields": {"name": "title"}}]
    return rules_caller("docstore", "sql_database", state, kinds, DOCS, named_kinds=named)


def test_an_argument_named_as_a_kind_names_one_of_its_records_by_name() -> None:
    call = docstore()
    assert not call("list_tables", database="shop").is_error
    missing = call("list_tables", database="warehouse")
    assert missing.error_class == "not_found" and "warehouse" in missing.text


BROWSER = [tool("sessions-browser", "browser_go_back", {"sessionId": STR}, []),
           tool("sessions-browser", "browser_click", {"sessionId": STR, "selector": STR}, ["selector"])]


def test_a_browser_family_still_checks_the_ids_it_does_not_read_itself() -> None:
    state = {"sessions": {"ses_0001": {"id": "ses_0001"}},
             "tabs": {"0": {"id": "0", "url": "https://a.example/", "active": True, "history": ["about:blank"]}},
             "elements": {"e1": {"ref": "e1", "role": "button", "name": "Go", "selector": "#go"}}}
    call = rules_caller("sessions-browser", "browser_automation", state,
                        {"session": "sessions", "tab": "tabs", "element": "elements"}, BROWSER,
                        named_kinds=[{"name": "session", "id_prefix": "ses", "fields": {"name": "title"}}])
    assert call("browser_go_back", sessionId="ses_0404").error_class == "not_found"
    assert not call("browser_go_back", sessionId="ses_0001").is_error
    assert call("browser_click", sessionId="ses_0404", selector="#go").error_class == "not_found"
    assert not call("browser_click", sessionId="ses_0001", selector="#go").is_error


def test_a_rule_that_only_binds_values_checks_nothing() -> None:
    assert not Rule(check=[Check(let={"front": "1"})]).refuses
    assert Rule(check=[Check(let={"a": "1"}), Check(fail="a > 0", error="invalid", message="no")]).refuses
    assert Rule(check=[Check(find="target", in_="items", key="args['id']")]).refuses


WRAPPED = [tool("chat-api", "get_room", {"path": {"type": "object", "properties": {"room_id": STR}, "required": ["room_id"]}}),
           tool("chat-api", "update_room", {"path": {"type": "object", "properties": {"room_id": STR}},
                                            "body": {"type": "object", "properties": {"name": STR}}}, ["path"]),
           ToolSpec(server="chat-api", name="get_task", description="get task",
                    input_schema={"type": "object", "required": ["params"], "properties": {"params": {"$ref": "#/$defs/P"}},
                                  "$defs": {"P": {"type": "object", "properties": {"task_id": STR}, "required": ["task_id"]}}})]


def test_arguments_wrapped_in_one_object_are_read_as_the_tools_own() -> None:
    state = {"rooms": {"room_0001": {"id": "room_0001", "name": "Ops"}},
             "tasks": {"task_0001": {"id": "task_0001", "title": "Rotate keys", "room_id": "room_0001"}}}
    call = rules_caller("chat-api", "messaging", state, {"room": "rooms", "task": "tasks"}, WRAPPED,
                        named_kinds=[{"name": "room", "id_prefix": "room", "fields": {"name": "title"}},
                                     {"name": "task", "id_prefix": "task", "fields": {"title": "title"}}])
    assert call("get_room", path={"room_id": "room_0404"}).error_class == "not_found"
    assert "Ops" in call("get_room", path={"room_id": "room_0001"}).text
    assert call("get_task", params={"task_id": "task_0404"}).error_class == "not_found"
    assert "Rotate keys" in call("get_task", params={"task_id": "task_0001"}).text
    assert call("get_room", path={}).error_class == "invalid_args"  # the tool's own schema still decides first


def test_a_body_beside_a_path_parameter_is_read_as_the_tools_own_and_never_as_an_id() -> None:
    """`create_ad(roomId, request={taskId, note})`: the body's `taskId` must name a task; the body itself,
    described as "create by task id request body", is no task id."""
    body = {"type": "object", "description": "Create note by task id request body",
            "properties": {"task_id": STR, "note": STR}}
    spec = tool("chat-api", "create_note", {"room_id": STR, "request": body})
    state = {"rooms": {"room_0001": {"id": "room_0001", "name": "Ops"}},
             "tasks": {"task_0001": {"id": "task_0001", "title": "Rotate keys"}}, "notes": {}}
    call = rules_caller("chat-api", "messaging", state, {"room": "rooms", "task": "tasks", "note": "notes"}, [spec],
                        named_kinds=[{"name": "room", "id_prefix": "room", "fields": {"name": "title"}},
                                     {"name": "task", "id_prefix": "task", "fields": {"title": "title"}},
                                     {"name": "note", "id_prefix": "note", "fields": {"note": "text"}}])
    made = call("create_note", room_id="room_0001", request={"task_id": "task_0001", "note": "done"})
    assert not made.is_error, made.text
    assert call("create_note", room_id="room_0001", request={"task_id": "task_0404", "note": "x"}).error_class == "not_found"


def test_a_record_given_whole_in_an_object_named_for_it_is_read_as_the_tools_own_fields() -> None:
    """`create-workout(workout={title, start_time, end_time})` and WooCommerce's `productData`: the object is the
    record, so its times are checked as a create's own (an end before its start is refused) and it reads back."""
    workout = {"type": "object", "required": ["title"],
               "properties": {"title": STR, "start_time": STR, "end_time": STR}}
    specs = [tool("gym", "create-workout", {"workout": workout}, ["workout"]),
             tool("gym", "list_workouts", {})]
    call = rules_caller("gym", "health_records", {"workouts": {}}, {"workout": "workouts"}, specs,
                        named_kinds=[{"name": "workout", "id_prefix": "wkt",
                                      "fields": {"title": "title", "start_time": "datetime", "end_time": "datetime"}}])
    backwards = call("create-workout", workout={"title": "Legs", "start_time": "2026-08-01T10:00:00Z",
                                                "end_time": "2026-08-01T09:00:00Z"})
    assert backwards.error_class in ("invalid", "invalid_args") and "before" in backwards.text, backwards.text
    made = call("create-workout", workout={"title": "Legs", "start_time": "2026-08-01T09:00:00Z",
                                           "end_time": "2026-08-01T10:00:00Z"})
    assert not made.is_error, made.text
    assert "Legs" in call("list_workouts").text


def test_a_required_kind_name_argument_names_a_kind_the_world_then_holds() -> None:
    from cworld.engine.cards.card import load_cards
    from cworld.engine.world.named import named_kinds
    from cworld.environment import Environment

    card = load_cards(Environment.resolve().category_cards)["cloud_infrastructure"]
    history = tool("alarms", "get_alarm_history", {"alarm_name": STR, "profile_name": STR}, ["alarm_name"])
    made = {k.name: k for k in named_kinds(card, [history])}
    assert "alarm" in made and "profile" not in made  # a login's profile is no kind of the service
    state = {"alarms": {"alarm_0001": {"id": "alarm_0001", "name": "High CPU"}}}
    call = rules_caller("alarms", "cloud_infrastructure", state, {"alarm": "alarms"}, [history],
                        named_kinds=[made["alarm"].model_dump()])
    assert not call("get_alarm_history", alarm_name="High CPU").is_error
    assert call("get_alarm_history", alarm_name="Disk full").error_class == "not_found"


CAD_ACTS = [tool("drafting", "entity_fillet", {"handle1": STR, "handle2": STR, "radius": NUM}, ["handle1", "handle2"]),
            tool("drafting", "entity_create_line", {"x1": NUM, "y1": NUM, "x2": NUM, "y2": NUM, "layer": STR},
                 ["x1", "y1", "x2", "y2"])]


def test_an_act_on_two_records_of_its_own_kind_needs_both() -> None:
    """`entity_fillet(handle1, handle2)` names two entities and neither is "its own": both must exist."""
    call = rules_caller("drafting", "cad_drawing", drafting_state(),
                        {"entity": "entities", "layer": "layers", "block": "blocks"}, CAD_ACTS)
    assert call("entity_fillet", handle1="1A2B", handle2="FFFF", radius=2).error_class == "not_found"
    assert call("entity_fillet", handle1="FFFF", handle2="3C4D", radius=2).error_class == "not_found"
    done = call("entity_fillet", handle1="1A2B", handle2="3C4D", radius=2)
    assert not done.is_error, done.text


def test_an_optional_argument_named_as_a_kind_names_one_of_its_records_when_given() -> None:
    """A line drawn on a layer the drawing lacks is refused, with the card's message for a layer (not its
    message for an entity handle); without a layer it is drawn."""
    call = rules_caller("drafting", "cad_drawing", drafting_state(),
                        {"entity": "entities", "layer": "layers", "block": "blocks"}, CAD_ACTS)
    missing = call("entity_create_line", x1=0, y1=0, x2=5, y2=5, layer="NOPE")
    assert missing.error_class == "not_found" and "Layer 'NOPE'" in missing.text, missing.text
    assert not call("entity_create_line", x1=0, y1=0, x2=5, y2=5, layer="a-wall").is_error
    assert not call("entity_create_line", x1=0, y1=0, x2=5, y2=5).is_error


BOARD = [tool("whiteboard", "create_connector", {"startNodeId": STR, "endNodeId": STR, "label": STR},
              ["startNodeId", "endNodeId"]),
         tool("whiteboard", "get_node", {"nodeId": STR}, ["nodeId"])]


def test_a_create_naming_records_of_its_own_kind_checks_them_and_keeps_its_own_key() -> None:
    """`create_connector(startNodeId, endNodeId)` makes a node between two nodes that must exist; the node it
    makes is read back by the key it answers, never keyed by the end node's id."""
    nodes = {"n_1": {"node_id": "n_1", "name": "Start"}, "n_2": {"node_id": "n_2", "name": "End"}}
    call = rules_caller("whiteboard", "ui_design", {"nodes": nodes}, {"node": "nodes"}, BOARD)
    assert call("create_connector", startNodeId="n_1", endNodeId="n_9", label="x").error_class == "not_found"
    made = call("create_connector", startNodeId="n_1", endNodeId="n_2", label="flows to")
    assert not made.is_error, made.text
    key = (made.structured_content or {}).get("node_id")
    assert key not in (None, "n_1", "n_2"), made.text
    again = call("get_node", nodeId=key)
    assert not again.is_error and (again.structured_content or {}).get("label") == "flows to", again.text


MAIL = [tool("mailbox", "send_draft", {"id": STR}, ["id"])]


def test_sending_a_draft_by_its_bare_id_sends_that_draft_and_makes_none() -> None:
    messages = {"m_1": {"subject": "Hi", "folder": "drafts", "to": ["a@example.com"]}}
    call = rules_caller("mailbox", "email", {"messages": messages}, {"message": "messages"}, MAIL)
    assert call("send_draft", id="m_9").error_class == "not_found"
    assert not call("send_draft", id="m_1").is_error
    assert "m_2" not in str(call.engine.end_state(call.log)) and "mail_" not in str(call.engine.end_state(call.log))
