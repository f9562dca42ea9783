"""The CAD card's named tables (issue 33): layouts, dimension and text styles, linetypes and UCSs, as AutoCAD
and ezdxf keep them. Setting one current or deleting one needs it there; model space and the last sheet are
never deleted; a linetype loads from acad.lin; a UCS is saved under any name but `World`, with axes at right
angles, and `World` is always restored."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller, tool_spec

NUM = {"type": "number"}
STR = {"type": "string"}
POINT = {"type": "array", "items": NUM}

TOOLS = [tool_spec("cad", "layout_delete", {"name": STR}),
         tool_spec("cad", "textstyle_set_current", {"name": STR}),
         tool_spec("cad", "linetype_load", {"name": STR, "file": STR}, ["name"]),
         tool_spec("cad", "linetype_list", {}),
         tool_spec("cad", "ucs_set", {"name": STR, "origin": POINT, "x_axis": POINT, "y_axis": POINT}),
         tool_spec("cad", "ucs_restore", {"name": STR})]


def drawing(sheets: tuple[str, ...] = ("A1 Sheet", "Details")) -> Any:
    state = {"layers": {}, "entities": {}, "blocks": {},
             "layouts": {n: {"name": n} for n in ("Model", *sheets)},
             "textstyles": {"Standard": {"name": "Standard", "font": "txt.shx"}},
             "linetypes": {"Continuous": {"name": "Continuous"}},
             "ucs": {"Front": {"name": "Front"}}}
    kinds = {"layer": "layers", "entity": "entities", "block": "blocks", "layout": "layouts",
             "textstyle": "textstyles", "linetype": "linetypes", "ucs": "ucs"}
    return rules_caller("cad", "cad_drawing", state, kinds, TOOLS)


def test_a_layout_is_deleted_but_never_model_space_nor_the_last_sheet() -> None:
    call = drawing()
    assert call("layout_delete", name="Nope").error_class == "not_found"
    assert call("layout_delete", name="Model").error_class == "business"
    assert not call("layout_delete", name="Details").is_error
    last = call("layout_delete", name="A1 Sheet")
    assert last.error_class == "business" and "last" in last.text, last.text


def test_a_style_made_current_must_be_held() -> None:
    call = drawing()
    assert call("textstyle_set_current", name="ROMANS").error_class == "not_found"
    assert not call("textstyle_set_current", name="Standard").is_error


def test_a_linetype_loads_from_acad_lin_once_and_an_unknown_name_is_refused() -> None:
    call = drawing()
    assert call("linetype_load", name="WIGGLY").error_class == "not_found"
    assert not call("linetype_load", name="HIDDEN2").is_error
    assert not call("linetype_load", name="HIDDEN2").is_error  # loaded already: it stays
    assert not call("linetype_load", name="WIGGLY", file="C:/lin/custom.lin").is_error  # another file's names
    names = [it["name"] for it in json.loads(call("linetype_list").text)["items"]]
    assert sorted(names) == ["Continuous", "HIDDEN2", "WIGGLY"], names


def test_a_ucs_is_saved_with_right_angled_axes_and_world_is_always_restored() -> None:
    call = drawing()
    axes = {"origin": [0, 0, 0], "x_axis": [1, 0, 0]}
    assert call("ucs_set", name="World", y_axis=[0, 1, 0], **axes).error_class in ("invalid", "invalid_args")
    assert call("ucs_set", name="Skew", y_axis=[1, 1, 0], **axes).error_class in ("invalid", "invalid_args")
    assert call("ucs_set", name="Flat", y_axis=[0, 0, 0], **axes).error_class in ("invalid", "invalid_args")
    assert call("ucs_restore", name="Grid B").error_class == "not_found"
    assert not call("ucs_set", name="Grid B", y_axis=[0, 3, 0], **axes).is_error
    assert not call("ucs_restore", name="Grid B").is_error
    assert not call("ucs_restore", name="world").is_error
