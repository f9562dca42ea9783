"""Records nested in a tool's arguments (issue 33, `engine/rules/batches.py`), on a graph memory written for the
test in camelCase: a batch of objects makes what is new, items naming a record add to or take from its list
(an unknown name is refused), names delete their records, objects delete the records they match."""

from __future__ import annotations

import json
from typing import Any

import pytest
from engine_helpers import rules_caller, tool_spec

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.world.base import ServerWorld
from cworld.engine.world.build import load_records_file
from cworld.environment import Environment
from cworld.errors import UsageError

STR = {"type": "string"}
STRS = {"type": "array", "items": STR}


def objects(**props: Any) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "object", "properties": props, "required": list(props)}}


def tool(name: str, props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(server="mind-map", name=name, description=name,
                    input_schema={"type": "object", "properties": props, "required": list(props)})


TOOLS = [tool("addEntities", {"entities": objects(name=STR, entityType=STR, observations=STRS)}),
         tool("appendObservations", {"observations": objects(entityName=STR, contents=STRS)}),
         tool("dropObservations", {"deletions": objects(entityName=STR, observations=STRS)}),
         tool("removeEntities", {"entityNames": STRS}),
         tool("addRelations", {"relations": objects(**{"from": STR, "to": STR, "relationType": STR})}),
         tool("removeRelations", {"relations": objects(**{"from": STR, "to": STR, "relationType": STR})})]


def graph() -> tuple[Any, dict[str, Any]]:
    state: dict[str, Any] = {"entities": {"Ada": {"name": "Ada", "entityType": "person", "observations": ["math"]}},
                             "relations": {}}
    return rules_caller("mind-map", "knowledge_graph", state, {"entity": "entities", "relation": "relations"},
                        TOOLS), state


def test_a_batch_makes_what_is_new_and_keeps_what_is_there() -> None:
    call, _ = graph()
    made = call("addEntities", entities=[{"name": "Bo", "entityType": "person", "observations": []},
                                         {"name": "Ada", "entityType": "robot", "observations": []}])
    assert not made.is_error, made.text
    added = call("appendObservations", observations=[{"entityName": "Ada", "contents": ["poetry", "math"]},
                                                     {"entityName": "Bo", "contents": ["chess"]}])
    results = {r["entityName"]: r["observations"] for r in json.loads(added.text)["results"]}
    assert results == {"Ada": ["math", "poetry"], "Bo": ["chess"]}  # Ada kept her type; no value twice


def test_an_item_naming_no_record_is_refused_and_nothing_changes() -> None:
    call, _ = graph()
    refused = call("appendObservations", observations=[{"entityName": "Ada", "contents": ["x"]},
                                                       {"entityName": "Zed", "contents": ["y"]}])
    assert refused.error_class == "not_found" and "Zed" in refused.text
    taken = call("dropObservations", deletions=[{"entityName": "Ada", "observations": ["math"]}])
    assert json.loads(taken.text)["results"] == [{"entityName": "Ada", "observations": []}]


def test_names_and_matching_objects_delete_their_records() -> None:
    call, _ = graph()
    call("addEntities", entities=[{"name": "Bo", "entityType": "person", "observations": []}])
    call("addRelations", relations=[{"from": "Ada", "to": "Bo", "relationType": "knows"},
                                    {"from": "Bo", "to": "Ada", "relationType": "knows"}])
    assert not call("removeRelations", relations=[{"from": "Ada", "to": "Bo", "relationType": "knows"}]).is_error
    assert not call("removeEntities", entityNames=["Bo", "Nobody"]).is_error
    left = call("appendObservations", observations=[{"entityName": "Bo", "contents": ["x"]}])
    assert left.error_class == "not_found"


def test_a_world_keying_relations_by_what_they_hold_gets_each_once_and_a_delete_detaches() -> None:
    tools = [*TOOLS, tool("deleteEntities", {"entityNames": STRS}), tool("readGraph", {})]
    state: dict[str, Any] = {"entities": {"Ada": {"name": "Ada", "entityType": "person", "observations": []},
                                          "Bo": {"name": "Bo", "entityType": "person", "observations": []}},
                             "relations": {}}
    call = rules_caller("mind-map", "knowledge_graph", state, {"entity": "entities", "relation": "relations"},
                        tools, keys={"relations": ["from", "relationType", "to"]})
    knows = {"from": "Ada", "to": "Bo", "relationType": "knows"}
    made = json.loads(call("addRelations", relations=[knows, knows]).text)
    assert made["relations"] == [knows, knows]
    assert not call("deleteEntities", entityNames=["Bo"]).is_error
    graph = call("readGraph").text
    assert "knows" not in graph and "Bo" not in graph  # no relation outlives its ends


def test_a_world_files_keys_must_name_fields() -> None:
    data = {"server": "mind-map", "state": {"relations": {}}, "keys": {"relations": "from"}}
    with pytest.raises(UsageError, match="'keys' must map a collection"):
        ServerWorld.from_json(data)
    data["keys"] = {"relations": ["from", "relationType", "to"]}
    assert ServerWorld.from_json(data).to_json()["keys"] == {"relations": ["from", "relationType", "to"]}


def test_a_loaded_world_keys_relations_by_what_they_hold(tmp_path: Any) -> None:
    card = load_cards(Environment.resolve().category_cards)["knowledge_graph"]
    path = tmp_path / "graph.yaml"
    path.write_text("entities: [{name: Ada, entityType: person, observations: []}]\n"
                    "relations: [{from: Ada, to: Ada, relationType: knows}]\n"
                    "keys: {relation: [from, relationType, to]}\n", encoding="utf-8")
    world = load_records_file("mind-map", path, card)
    assert list(world.collection("relation") or {}) == ["Ada|knows|Ada"]
    assert world.keys == {world.kinds["relation"]: ["from", "relationType", "to"]}
    path.write_text("relations: []\nkeys: {relation: [from, weight]}\n", encoding="utf-8")
    with pytest.raises(UsageError, match="must list fields of a relation"):
        load_records_file("mind-map", path, card)


# --- a batch of the tool's own records, each named by its id (a to-do service written for the test) --------------

TO_DO_TOOLS = [
    ToolSpec(server="to-do", name=name, description=name, input_schema={"type": "object", "properties": props,
                                                                          "required": list(props)})
    for name, props in (
        ("update_cards", {"items": {"type": "array", "items": {"type": "object", "properties": {
            "card_id": STR, "card_name": STR, "title": STR, "list_id": STR}, "required": ["card_id"]}}}),
        ("read_cards", {"inputs": {"type": "array", "items": {"type": "object", "properties": {"id": STR}}}}),
        ("delete_cards", {"items": {"type": "array", "items": {"type": "object", "properties": {"id": STR}}}}),
        ("update_card_checklist", {"cardId": STR, "items": {"type": "array", "items": {
            "type": "object", "properties": {"id": STR, "done": {"type": "boolean"}}}}}),
        ("create_cards", {"items": {"type": "array", "items": {"type": "object", "properties": {
            "title": STR, "list_id": STR}, "required": ["title"]}}}),
    )]


def todo() -> Any:
    state = {"cards": {f"card_{n}": {"title": f"Task {n}", "list_id": "list_1"} for n in (1, 2, 3)},
             "lists": {"list_1": {"name": "Doing"}, "list_2": {"name": "Done"}}}
    return rules_caller("to-do", "task_board", state, {"card": "cards", "list": "lists"}, TO_DO_TOOLS)


def test_a_batch_of_ids_changes_every_record_it_names_and_refuses_one_that_is_not_there() -> None:
    call = todo()
    changed = call("update_cards", items=[{"card_id": "card_1", "card_name": "Task 1", "title": "Write the memo"},
                                          {"card_id": "card_2", "list_id": "list_2"}])
    assert not changed.is_error, changed.text
    read = call("read_cards", inputs=[{"id": "card_1"}, {"id": "card_2"}])
    assert "Write the memo" in read.text and '"list_id": "list_2"' in read.text and "card_name" not in read.text
    refused = call("update_cards", items=[{"card_id": "card_3", "title": "Kept?"}, {"card_id": "card_9", "title": "x"}])
    assert refused.error_class == "not_found" and "card_9" in refused.text
    assert "Kept?" not in call("read_cards", inputs=[{"id": "card_3"}]).text  # a refused batch changes nothing
    assert call("read_cards", inputs=[{"id": "card_7"}]).error_class == "not_found"


def test_a_batch_of_ids_deletes_what_it_names() -> None:
    call = todo()
    assert not call("delete_cards", items=[{"id": "card_1"}, {"id": "card_3"}]).is_error
    assert call("read_cards", inputs=[{"id": "card_1"}]).error_class == "not_found"
    assert not call("read_cards", inputs=[{"id": "card_2"}]).is_error


def test_items_of_a_record_the_call_names_on_its_own_are_no_batch_of_that_kind() -> None:
    """`update_card_checklist(cardId, items=[{id, done}])` changes one card's checklist: the items' ids are the
    checklist's, not cards' (a batch rule would refuse every one of them as no card)."""
    call = todo()
    rule, _ = call.engine.rule_for(next(t for t in TO_DO_TOOLS if t.name == "update_card_checklist"))
    assert rule is None or "missing" not in str(rule.check)


def test_a_batch_of_new_records_makes_one_each_under_the_next_ids() -> None:
    call = todo()
    made = call("create_cards", items=[{"title": "Book the venue", "list_id": "list_1"}, {"title": "Send invites"}])
    assert not made.is_error, made.text
    ids = [r["id"] for r in json.loads(made.text)["items"]]
    assert len(ids) == 2 and not set(ids) & {"card_1", "card_2", "card_3"}
    assert "Send invites" in call("read_cards", inputs=[{"id": ids[1]}]).text
    refused = call("create_cards", items=[{"title": "Fine"}, {"title": "  "}])
    assert refused.error_class == "invalid_args" and "needs title" in refused.text
    assert "Fine" not in str(call.engine.end_state(call.log))  # nothing of the refused batch was made


ID_TOOLS = [tool_spec("tracker", "deleteCards", {"ids": STRS}), tool_spec("tracker", "get_cards_info", {"cardIds": STRS}),
            tool_spec("tracker", "read_card", {"card_ids": {"type": "string", "description": "comma-separated ids"}}),
            tool_spec("tracker", "remove_board_labels", {"board_id": STR, "label_ids": STRS})]


def tracker() -> tuple[Any, dict[str, Any]]:
    state: dict[str, Any] = {"cards": {"cd_1": {"title": "Login fails"}, "cd_2": {"title": "Slow search"}},
                             "boards": {"bd_1": {"name": "Web"}}, "labels": {"lb_1": {"name": "bug"}}}
    kinds = {"card": "cards", "board": "boards", "label": "labels"}
    return rules_caller("tracker", "task_board", state, kinds, ID_TOOLS), state


def test_ids_the_service_never_issued_are_refused_before_any_is_deleted() -> None:
    """Names no record has change nothing (the memory server); ids are refused, as a batch endpoint answers 404."""
    call, _ = tracker()
    assert call("deleteCards", ids=["cd_1", "cd_9"]).error_class == "not_found"
    assert not call("get_cards_info", cardIds=["cd_1", "cd_2"]).is_error  # nothing was deleted
    assert not call("deleteCards", ids=["cd_1"]).is_error
    assert call("get_cards_info", cardIds=["cd_1"]).error_class == "not_found"


def test_a_read_of_several_ids_answers_those_records_in_a_list_or_a_comma_separated_string() -> None:
    call, _ = tracker()
    both = call("get_cards_info", cardIds=["cd_2", "cd_1"])
    assert "Slow search" in both.text and "Login fails" in both.text, both.text
    assert call("get_cards_info", cardIds=["cd_1", "cd_7"]).error_class == "not_found"
    one = call("read_card", card_ids="cd_2")
    assert "Slow search" in one.text and "Login fails" not in one.text, one.text
    assert call("read_card", card_ids="cd_1, cd_8").error_class == "not_found"


def test_a_batch_under_a_record_needs_that_record() -> None:
    """`remove_estimate_items(estimate_id, item_ids)`: the estimate the items are taken from must exist."""
    call, _ = tracker()
    assert call("remove_board_labels", board_id="bd_9", label_ids=["lb_1"]).error_class == "not_found"
    assert not call("remove_board_labels", board_id="bd_1", label_ids=["lb_1"]).is_error
