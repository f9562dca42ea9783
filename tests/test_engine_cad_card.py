"""The CAD card's families (issue 33): drawing puts an entity on an existing, unlocked layer, and a locked layer's
entities are not changed; written from AutoCAD's and ezdxf's behaviour, for any CAD server's tools."""

from __future__ import annotations

from typing import Any

from engine_helpers import rules_caller, tool_spec

NUM = {"type": "number"}
STR = {"type": "string"}

TOOLS = [tool_spec("cad", "entity_create_circle", {"cx": NUM, "cy": NUM, "radius": NUM, "layer": STR},
                   ["cx", "cy", "radius"]),
         tool_spec("cad", "dimension_linear", {"x1": NUM, "y1": NUM, "x2": NUM, "y2": NUM, "layer": STR},
                   ["x1", "y1", "x2", "y2"]),
         tool_spec("cad", "entity_move", {"handle": STR, "dx": NUM, "dy": NUM}, ["handle"]),
         tool_spec("cad", "entity_list", {"layer": STR}, [])]


def drawing() -> Any:
    layers = {"A-WALL": {"name": "A-WALL", "is_locked": False, "is_frozen": False},
              "A-ANNO": {"name": "A-ANNO", "is_locked": True, "is_frozen": False}}
    entities = {"1A2B": {"handle": "1A2B", "type": "LINE", "layer": "A-ANNO"},
                "3C4D": {"handle": "3C4D", "type": "LINE", "layer": "A-WALL"}}
    return rules_caller("cad", "cad_drawing", {"layers": layers, "entities": entities, "blocks": {}},
                        {"layer": "layers", "entity": "entities", "block": "blocks"}, TOOLS)


def test_a_drawn_entity_is_kept_with_its_type_on_the_layer_asked_for() -> None:
    call = drawing()
    made = call("entity_create_circle", cx=1, cy=2, radius=3, layer="a-wall")
    assert not made.is_error, made.text
    entity = (made.structured_content or {})["entity"]
    assert entity["type"] == "CIRCLE" and entity["radius"] == 3 and (entity["start_x"], entity["start_y"]) == (1, 2)
    assert entity["handle"] in call("entity_list").text
    dim = call("dimension_linear", x1=0, y1=0, x2=5, y2=0)
    assert (dim.structured_content or {})["entity"]["type"] == "DIMENSION", dim.text


def test_drawing_on_a_missing_or_locked_layer_is_refused_and_keeps_nothing() -> None:
    call = drawing()
    missing = call("entity_create_circle", cx=0, cy=0, radius=1, layer="NOPE")
    assert missing.error_class == "not_found" and "Layer 'NOPE'" in missing.text
    locked = call("entity_create_circle", cx=0, cy=0, radius=1, layer="A-ANNO")
    assert locked.error_class == "business", locked.text
    assert "ent_" not in call("entity_list").text


def test_an_entity_on_a_locked_layer_is_not_moved() -> None:
    call = drawing()
    assert call("entity_move", handle="1A2B", dx=5, dy=0).error_class == "business"
    moved = call("entity_move", handle="3C4D", dx=5, dy=0)
    assert not moved.is_error, moved.text
