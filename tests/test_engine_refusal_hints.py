"""Refusals and records as one service has them (issue 33): a card's not-found hint names only the server's own
tools, and a record its tools name by a field the card lacks (an item's SKU) holds that field, so a get by it
finds the record a list shows."""

from __future__ import annotations

from engine_helpers import rules_caller, tool_spec

from cworld.engine.cards.card import load_cards
from cworld.engine.world.named import named_kinds
from cworld.environment import Environment

STR = {"type": "string"}


def test_a_not_found_hint_names_only_tools_the_server_has() -> None:
    orders = {"ord_0001": {"status": "placed", "total": 12.5}}
    alone = rules_caller("orders-only", "ecommerce", {"orders": orders}, {"order": "orders"},
                         [tool_spec("orders-only", "get_order", {"order_id": STR}, ["order_id"])])
    refused = alone("get_order", order_id="ord_0099")
    assert refused.error_class == "not_found" and "give" not in refused.text, refused.text
    listed = rules_caller("orders-listed", "ecommerce", {"orders": orders}, {"order": "orders"},
                          [tool_spec("orders-listed", "get_order", {"order_id": STR}, ["order_id"]),
                           tool_spec("orders-listed", "list_orders", {}, [])])
    text = listed("get_order", order_id="ord_0099").text
    assert "list_orders gives ids" in text and "search_products" not in text, text


def test_a_kind_its_tools_name_by_sku_holds_one() -> None:
    card = load_cards(Environment.resolve().category_cards)["ecommerce"]
    tools = [tool_spec("seller", "get_product", {"sku": STR}, ["sku"]),
             tool_spec("seller", "delete_product", {"sku": STR}, ["sku"])]
    kinds = {k.name: k for k in named_kinds(card, tools)}
    assert kinds["product"].fields.get("sku") == "code"
    products = {"prd_0001": {"name": "Walnut desk", "sku": "WD-1042-STD", "price": 420.0}}
    call = rules_caller("seller", "ecommerce", {"products": products}, {"product": "products"}, tools,
                        named_kinds=[k.model_dump() for k in kinds.values()])
    found = call("get_product", sku="wd-1042-std")
    assert not found.is_error and "Walnut desk" in found.text, found.text
    assert call("get_product", sku="XX-0000-STD").error_class == "not_found"


def test_a_read_of_several_records_by_their_names_answers_those_and_leaves_an_unknown_one_out() -> None:
    """`get_stock_quotes(tickers)` answers the stocks named, not the whole market; an unknown ticker is left out,
    as batch reads answer what they find."""
    stocks = {f"stk_{n}": {"ticker": t, "name": f"{t} Corp", "price": 10.0 + n} for n, t in enumerate(["ACME", "BOLT", "CRUX"])}
    call = rules_caller("quotes", "finance", {"stocks": stocks}, {"stock": "stocks"},
                        [tool_spec("quotes", "get_stock_quotes", {"tickers": {"type": "array", "items": STR}},
                                   ["tickers"])],
                        named_kinds=[{"name": "stock", "id_prefix": "stk", "key_field": "id",
                                      "fields": {"ticker": "code", "name": "string", "price": "money"}}])
    two = call("get_stock_quotes", tickers=["acme", "CRUX"])
    assert not two.is_error and "ACME" in two.text and "CRUX" in two.text and "BOLT" not in two.text, two.text
    one = call("get_stock_quotes", tickers=["ACME", "ZZZZ"])
    assert not one.is_error and "ACME" in one.text and "BOLT" not in one.text, one.text


def test_an_id_the_schema_lists_and_a_kind_name_the_schema_defaults_to_are_the_services_own() -> None:
    """eBay's `marketplaceId: EBAY_US | EBAY_AT` is checked by its enum, not looked up among the world's records;
    a tax `class` that defaults to `standard` names a class the service always has, and another one must be held.
    A webhook's `label` in a create is the webhook's own text, not a label record."""
    market = {"type": "string", "enum": ["EBAY_US", "EBAY_AT"]}
    tools = [tool_spec("shop", "create_policy", {"name": STR, "marketplaceId": market}, ["name"]),
             tool_spec("shop", "check_tax_class", {"rate": STR, "class": {"type": "string", "default": "standard"}},
                       ["rate"]),
             tool_spec("shop", "create_webhook", {"url": STR, "label": STR}, ["url"])]
    state = {"marketplaces": {"marketplace_0001": {"name": "Main"}}, "classes": {"cls_1": {"name": "reduced"}},
             "labels": {"lbl_1": {"name": "urgent"}}, "policies": {}, "webhooks": {}}
    kinds = {"marketplace": "marketplaces", "class": "classes", "label": "labels", "policy": "policies",
             "webhook": "webhooks"}
    call = rules_caller("shop", "ecommerce", state, kinds, tools, named_kinds=[
        {"name": n, "id_prefix": n[:3], "fields": {"name": "string"}} for n in kinds])
    assert not call("create_policy", name="Returns", marketplaceId="EBAY_AT").is_error
    assert call("check_tax_class", rate="7", **{"class": "standard"}).error_class != "not_found"  # the schema engine answers
    assert call("check_tax_class", rate="7", **{"class": "luxury"}).error_class == "not_found"
    assert not call("create_webhook", url="https://example.com/hook", label="deploys").is_error


def test_a_count_is_the_number_of_records_its_list_shows() -> None:
    """`get_products_count(query)` was made up from the schema (537 products in a store of three)."""
    products = {f"prd_{n}": {"name": name, "price": 10.0} for n, name in enumerate(["Oak desk", "Oak shelf", "Lamp"])}
    tools = [tool_spec("store", "get_products_count", {"query": STR}, []),
             tool_spec("store", "list_products", {"query": STR}, [])]
    call = rules_caller("store", "ecommerce", {"products": products}, {"product": "products"}, tools)
    assert (call("get_products_count").structured_content or {}).get("count") == 3
    assert (call("get_products_count", query="oak").structured_content or {}).get("count") == 2


def test_a_kind_its_tools_read_several_of_by_usernames_holds_one_each() -> None:
    """GitLab's `get_users(usernames)`: the users it names, each by a username the world's users hold."""
    card = load_cards(Environment.resolve().category_cards)["code_hosting"]
    tools = [tool_spec("lab", "get_users", {"usernames": {"type": "array", "items": STR}}, ["usernames"]),
             tool_spec("lab", "get_user", {"user_id": STR}, ["user_id"])]
    kinds = {k.name: k for k in named_kinds(card, tools)}
    assert kinds["user"].fields.get("username") == "string"
    users = {"usr_1": {"name": "Ana Ruiz", "username": "aruiz"}, "usr_2": {"name": "Bo Chen", "username": "bchen"}}
    call = rules_caller("lab", "code_hosting", {"users": users}, {"user": "users"}, tools,
                        named_kinds=[k.model_dump() for k in kinds.values()])
    found = call("get_users", usernames=["bchen"])
    assert not found.is_error and "Bo Chen" in found.text and "Ana Ruiz" not in found.text, found.text


def test_a_missing_record_is_not_given_the_message_of_another_kind() -> None:
    """The SQL card's not-found message is about a table: a missing row is not reported as "no such table", and
    a kind the card's failure names keeps that failure."""
    from cworld.engine.cards.card import load_cards
    from cworld.environment import Environment

    sql = load_cards(Environment.resolve().category_cards)["sql_database"]
    row = sql.failure("not_found", "row")
    assert row is None or "table" not in row.message, row
    table = sql.failure("not_found", "table")
    assert table is not None and "no such table" in table.message


def test_a_document_its_tools_name_by_file_name_is_kept_in_a_file_named_as_its_title() -> None:
    """office-word's `get_document_text(filename)`: the world's documents have files named as their titles
    (`Q3 budget review.docx`), a get finds one with or without the suffix the service adds, and an unknown file is
    `not_found`."""
    from cworld.engine.world.build import generated_world

    card = load_cards(Environment.resolve().category_cards)["documents"]
    tools = [tool_spec("word", "get_document_text", {"filename": STR}, ["filename"])]
    world = generated_world("word", card, seed=5, size=6, tools=tools)
    docs = world.state[world.kinds["document"]]
    assert all(d["filename"] == f"{d['title']}.docx" for d in docs.values()), list(docs.values())[:2]
    title = next(iter(docs.values()))["title"]
    call = rules_caller("word", "documents", world.state, world.kinds, tools, named_kinds=world.named_kinds)
    assert title in call("get_document_text", filename=f"{title}.docx").text
    assert title in call("get_document_text", filename=title.lower()).text
    assert call("get_document_text", filename="Not there.docx").error_class == "not_found"
