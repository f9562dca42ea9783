"""The browser card's families on a browser written for the test (issue 33): the page in front moves on a load and
back again, an element is one the page holds, a field takes text only where it is one, a key is one a keyboard
has, tabs are picked by their place, and a screenshot of a missing element is refused."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR = {"type": "string"}
NUM = {"type": "number"}


def tool(name: str, props: dict[str, Any], required: list[str] | None = None) -> ToolSpec:
    return ToolSpec(server="a-browser", name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props,
                                  "required": list(props) if required is None else required})


TOOLS = [tool("browser_navigate", {"url": STR}), tool("browser_navigate_back", {}),
         tool("browser_navigate_forward", {}),
         tool("browser_click", {"element": STR, "target": STR}, ["target"]),
         tool("browser_type", {"element": STR, "target": STR, "text": STR}, ["target", "text"]),
         tool("browser_select_option", {"target": STR, "values": {"type": "array", "items": STR}}),
         tool("browser_press_key", {"key": STR}), tool("browser_tab_select", {"index": NUM}),
         tool("browser_tab_close", {"index": NUM}, []),
         tool("puppeteer_fill", {"selector": STR, "value": STR}),
         tool("browser_take_screenshot", {"target": STR, "type": STR, "filename": STR}, []),
         tool("browser_tab_list", {}), tool("browser_snapshot", {"target": STR}, []),
         tool("browser_drag", {"startTarget": STR, "endTarget": STR})]


def browser() -> Any:
    tabs = {"0": {"id": "0", "url": "https://shop.example/cart", "title": "Cart", "active": True,
                  "opened_at": "2026-07-01T09:00:00Z"},
            "1": {"id": "1", "url": "https://mail.example/inbox", "title": "Inbox", "active": False,
                  "opened_at": "2026-07-01T08:00:00Z"}}
    elements = {"e1": {"ref": "e1", "role": "textbox", "name": "Search", "selector": "#q"},
                "e2": {"ref": "e2", "role": "button", "name": "Checkout", "selector": "button.checkout"},
                "e3": {"ref": "e3", "role": "combobox", "name": "Country", "selector": "select#country"}}
    pages = {"https://docs.example/": {"url": "https://docs.example/", "title": "Docs home"}}
    state = {"tabs": tabs, "elements": elements, "pages": pages, "screenshots": {}}
    kinds = {"tab": "tabs", "element": "elements", "page": "pages", "screenshot": "screenshots"}
    return rules_caller("a-browser", "browser_automation", state, kinds, TOOLS)


def front(call: Any) -> dict[str, Any]:
    return next(t for t in tabs(call) if t.get("active"))


def tabs(call: Any) -> list[dict[str, Any]]:
    listed = call("browser_tab_list")
    assert not listed.is_error, listed.text
    return list(json.loads(listed.text)["items"])


def test_a_load_moves_the_tab_on_and_back_returns_to_where_it_was() -> None:
    call = browser()
    loaded = call("browser_navigate", url="https://docs.example/")
    assert json.loads(loaded.text)["tab"]["title"] == "Docs home"  # the page the world holds
    assert call("browser_navigate", url="docs.example").error_class == "invalid_args"
    call("browser_navigate_back")
    assert front(call)["url"] == "https://shop.example/cart"
    call("browser_navigate_forward")
    assert front(call)["url"] == "https://docs.example/"


def test_an_element_is_one_the_page_holds_by_ref_selector_or_name() -> None:
    call = browser()
    assert not call("browser_click", target="e2").is_error
    assert not call("browser_click", target="Checkout").is_error
    assert not call("puppeteer_fill", selector="#q", value="lamp").is_error
    missing = call("browser_click", target="e9")
    assert missing.error_class == "not_found" and "snapshot" in missing.text


def test_a_field_takes_text_and_a_select_an_option_only_where_they_are_one() -> None:
    call = browser()
    assert call("browser_type", target="e2", text="hi").error_class == "business"
    typed = call("browser_type", target="e1", text="desk lamp")
    assert json.loads(typed.text)["element"]["value"] == "desk lamp"
    assert call("browser_select_option", target="e1", values=["PT"]).error_class == "business"
    assert not call("browser_select_option", target="e3", values=["PT"]).is_error


def test_a_key_is_one_a_keyboard_has() -> None:
    call = browser()
    for key in ("Enter", "a", "Control+A", "ArrowDown", "F5", "Shift+Tab"):
        assert not call("browser_press_key", key=key).is_error, key
    assert call("browser_press_key", key="Entr").error_class == "invalid_args"


def test_tabs_are_picked_by_their_place_and_a_missing_one_is_refused() -> None:
    call = browser()
    assert not call("browser_tab_select", index=1).is_error
    assert front(call)["url"] == "https://mail.example/inbox"
    assert call("browser_tab_select", index=5).error_class == "not_found"
    assert not call("browser_tab_close", index=0).is_error
    assert [t["url"] for t in tabs(call)] == ["https://mail.example/inbox"]


def test_a_screenshot_is_kept_and_one_of_a_missing_element_refused() -> None:
    call = browser()
    shot = call("browser_take_screenshot", filename="cart", type="jpeg")
    assert json.loads(shot.text)["screenshot"]["path"] == "cart.jpeg"
    assert call("browser_take_screenshot", target="e42").error_class == "not_found"


def test_the_refs_a_snapshot_shows_are_the_ones_a_click_finds() -> None:
    call = browser()
    shown = json.loads(call("browser_snapshot").text)
    assert shown["url"] == "https://shop.example/cart"
    refs = [e["ref"] for e in shown["elements"]]
    assert refs == ["e1", "e2", "e3"]
    assert all(not call("browser_click", target=ref).is_error for ref in refs)
    assert call("browser_snapshot", target="e7").error_class == "not_found"
    assert call("browser_drag", startTarget="e2", endTarget="e8").error_class == "not_found"


def test_a_generated_browser_holds_a_few_tabs() -> None:
    """A kind's `max_records` caps what a generated world holds (a browser has a few tabs open, not 77)."""
    from cworld.engine.cards.card import load_cards
    from cworld.engine.world.build import generated_world
    from cworld.environment import Environment

    card = load_cards(Environment.resolve().category_cards)["browser_automation"]
    world = generated_world("a-browser", card, seed=3, tools=TOOLS)
    assert 1 <= len(world.state[world.kinds["tab"]]) <= 4
    assert len(world.state[world.kinds["element"]]) > 4  # the cap is the tab's alone
