"""Inference on a brokerage written for the test (issue 33): `add_to_watchlist(watchlist_id, symbol)` names the
watchlist it changes, so it adds the symbol to the list its value argument names (`symbols`), where it had made a
new watchlist; a watchlist that is not there is `not_found`."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR = {"type": "string"}


def tool(name: str, props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(server="pocket-broker", name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": list(props)})


def test_adding_to_a_named_list_changes_that_record() -> None:
    tools = [tool("add_to_watchlist", {"watchlist_id": STR, "symbol": STR}),
             tool("remove_from_watchlist", {"watchlist_id": STR, "symbol": STR})]
    state = {"watchlists": {"wl_1": {"name": "Tech", "symbols": ["AAPL"]}},
             "accounts": {"acct_1": {"name": "Brokerage", "balance": 100.0}}}
    call = rules_caller("pocket-broker", "finance", state, {"watchlist": "watchlists", "account": "accounts"}, tools)
    added = json.loads(call("add_to_watchlist", watchlist_id="wl_1", symbol="MSFT").text)
    assert added["symbols"] == ["AAPL", "MSFT"]
    assert call("add_to_watchlist", watchlist_id="wl_9", symbol="MSFT").error_class == "not_found"
    assert call("remove_from_watchlist", watchlist_id="wl_1", symbol="TSLA").error_class == "not_found"


def test_a_member_of_a_kind_the_world_keeps_no_records_of_is_added_to_the_record() -> None:
    """`add_label(card_id, label_id)`: labels are not records of this world (a board keeps them), yet the card's
    `labels` list shows their ids, so a label id of another form is refused and one of that form is added."""
    tools = [ToolSpec(server="team-board", name="add_label", description="add a label to a card",
                      input_schema={"type": "object", "properties": {"card_id": STR, "label_id": STR},
                                    "required": ["card_id", "label_id"]})]
    state = {"cards": {"crd_1": {"title": "Fix login", "labels": ["lbl_0001"]}}}
    call = rules_caller("team-board", "task_board", state, {"card": "cards"}, tools)
    assert json.loads(call("add_label", card_id="crd_1", label_id="lbl_0002").text)["labels"] == ["lbl_0001", "lbl_0002"]
    assert call("add_label", card_id="crd_1", label_id="urgent").error_class == "not_found"


def test_a_page_token_the_service_never_gave_is_refused() -> None:
    tools = [ToolSpec(server="pocket-broker", name="list_watchlists", description="list watchlists",
                      input_schema={"type": "object", "properties": {"page_token": STR, "page_size": {"type": "integer"}}})]
    state = {"watchlists": {f"wl_{i}": {"name": f"List {i}", "symbols": []} for i in range(1, 6)}}
    call = rules_caller("pocket-broker", "finance", state, {"watchlist": "watchlists"}, tools)
    first = json.loads(call("list_watchlists", page_size=2).text)
    assert first["next_cursor"] and not call("list_watchlists", page_token=first["next_cursor"], page_size=2).is_error
    assert call("list_watchlists", page_token="eyJwYWdlIjogMn0", page_size=2).error_class == "invalid_args"
