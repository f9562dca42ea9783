"""The tool dependency graph: declared prerequisites, edges inferred from schemas, the precision rules,
`prerequisites()` and `search(..., with_prereqs=True)`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cworld.data_model.tools import ToolAnnotations, ToolSpec
from cworld.errors import UsageError
from cworld.registry.graph import (
    build_graph,
    consumed_keys,
    infer_links,
    load_graph,
    prerequisites,
    produced_keys,
    save_graph,
)
from cworld.registry.index import HashEmbedder
from cworld.registry.search import SearchService, build_search_index, surfaced_tools
from cworld.sandbox.framework.app import Prerequisite

REAL_TOOLS = Path(__file__).resolve().parents[1] / "registry" / "recorded" / "real_tools.json"


def spec(server: str, name: str, params: dict[str, Any] | None = None, output: dict[str, Any] | None = None,
         read_only: bool | None = None, description: str = "") -> ToolSpec:
    props = {p: {"type": "string", "description": d} for p, d in (params or {}).items()}
    return ToolSpec(server=server, name=name, description=description or name.replace("_", " "),
                    input_schema={"type": "object", "properties": props}, output_schema=output,
                    annotations=ToolAnnotations(read_only_hint=read_only))


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


STR = {"type": "string"}
LIST_MESSAGES = spec("mail", "list_messages", {"folder": "inbox or archive"},
                     obj(messages={"type": "array", "items": obj(id=STR, subject=STR, thread_id=STR)}), read_only=True)
GET_MESSAGE = spec("mail", "get_message", {"message_id": "the message"}, obj(message_id=STR, body=STR), read_only=True)
DELETE_MESSAGE = spec("mail", "delete_message", {"message_id": "the message"}, obj(message_id=STR, deleted=STR))


def edges(graph) -> set[tuple[str, str]]:
    return set(graph.edges())


def test_declared_prerequisites_become_edges_and_unknown_ends_are_listed() -> None:
    declared = [Prerequisite("mail/list_messages", "mail/get_message", "produces", via="message_id", note="ids"),
                Prerequisite("mail/login", "mail/get_message", "requires"),
                Prerequisite("mail/nowhere", "mail/get_message")]
    graph = build_graph([LIST_MESSAGES, GET_MESSAGE, spec("mail", "login")], declared)
    data = graph.edges["mail/list_messages", "mail/get_message"]
    assert data == {"kind": "produces", "via": "message_id", "origin": "declared", "note": "ids"}
    assert graph.edges["mail/login", "mail/get_message"]["kind"] == "requires"
    assert graph.graph["skipped"] == ["mail/nowhere -> mail/get_message"]


def test_an_id_inside_a_list_of_entities_feeds_the_tool_that_takes_that_entity_id() -> None:
    assert "message_id" in produced_keys(LIST_MESSAGES) and "thread_id" in produced_keys(LIST_MESSAGES)
    assert consumed_keys(GET_MESSAGE) == {"message_id": "message_id"}
    links = infer_links([LIST_MESSAGES, GET_MESSAGE, DELETE_MESSAGE])
    assert {(link.before, link.after) for link in links} == {("mail/list_messages", "mail/get_message"),
                                                            ("mail/list_messages", "mail/delete_message")}
    assert all(link.origin == "schema" and link.via == "message_id" for link in links)


def test_refs_camel_case_and_bare_ids_are_normalised() -> None:
    listing = ToolSpec(server="crm", name="search_people", input_schema=obj(query=STR), output_schema={
        "$defs": {"Person": obj(id=STR, name=STR)}, **obj(results={"type": "array", "items": {"$ref": "#/$defs/Person"}})})
    camel = spec("crm", "add_note", {"personId": "whom the note is about", "text": "the note"})
    bare = spec("crm", "get_person", {"id": "the person"})
    assert produced_keys(listing) >= {"person_id", "person_name"}
    assert consumed_keys(camel) == {"person_id": "personId"} and consumed_keys(bare) == {"person_id": "id"}
    assert edges(build_graph([listing, camel, bare])) == {("crm/search_people", "crm/add_note"),
                                                          ("crm/search_people", "crm/get_person")}


def test_a_tool_that_only_echoes_an_id_is_not_its_producer() -> None:
    assert "message_id" not in produced_keys(GET_MESSAGE)
    assert edges(build_graph([GET_MESSAGE, DELETE_MESSAGE])) == set()


def test_read_only_lookups_are_preferred_over_writes_that_return_the_same_key() -> None:
    star = spec("mail", "star_message", {"message_id": "m"}, obj(thread_id=STR), read_only=False)
    get_thread = spec("mail", "get_thread", {"thread_id": "the conversation"}, read_only=True)
    assert edges(build_graph([LIST_MESSAGES, star, get_thread])) >= {("mail/list_messages", "mail/get_thread")}
    assert ("mail/star_message", "mail/get_thread") not in edges(build_graph([LIST_MESSAGES, star, get_thread]))
    assert ("mail/star_message", "mail/get_thread") in edges(build_graph([star, get_thread]))


def test_creating_tools_take_new_values_not_references() -> None:
    people = spec("travel", "list_travellers", {}, obj(travellers={"type": "array", "items": obj(
        traveller_id=STR, first_name=STR, passport_number=STR)}), read_only=True)
    add = spec("travel", "add_traveller", {"first_name": "given name", "passport_number": "passport"})
    book = spec("travel", "book_hotel", {"traveller_id": "who stays", "hotel_name": "hotel"})
    assert consumed_keys(add) == {} and consumed_keys(book) == {"traveller_id": "traveller_id", "hotel_name": "hotel_name"}
    assert edges(build_graph([people, add, book])) == {("travel/list_travellers", "travel/book_hotel")}


def test_generic_keys_stay_inside_a_server_and_specific_ones_may_cross() -> None:
    orders = spec("shop", "list_orders", {}, obj(orders={"type": "array", "items": obj(order_id=STR)}), read_only=True)
    refund = spec("bank", "refund_order", {"order_id": "an order"})
    events = spec("cal", "list_events", {}, obj(calendar_event_id=STR), read_only=True)
    notify = spec("notes", "attach_note", {"calendar_event_id": "the event"})
    assert edges(build_graph([orders, refund, events, notify])) == {("cal/list_events", "notes/attach_note")}


def test_real_memory_server_links_entity_creation_to_tools_that_need_the_entity() -> None:
    real = [ToolSpec.model_validate(t) for t in json.loads(REAL_TOOLS.read_text())]
    graph = build_graph(real)
    assert {("memory/create_entities", "memory/add_observations"),
            ("memory/create_entities", "memory/delete_observations")} <= edges(graph)
    assert not [e for e in graph.edges() if e[0].split("/")[0] != e[1].split("/")[0]]  # nothing crosses servers


def test_prerequisites_come_nearest_first_requires_before_produces_and_bounded() -> None:
    declared = [Prerequisite("s/login", "s/list_messages", "produces", via="token"),
                Prerequisite("s/open_app", "s/get_message", "requires")]
    tools = [spec("s", "login"), spec("s", "open_app"), LIST_MESSAGES.model_copy(update={"server": "s"}),
             GET_MESSAGE.model_copy(update={"server": "s"})]
    graph = build_graph(tools, declared)
    found = prerequisites(graph, "s/get_message")
    assert [(p.tool_id, p.kind, p.depth) for p in found] == [
        ("s/open_app", "requires", 1), ("s/list_messages", "produces", 1), ("s/login", "produces", 2)]
    assert found[1].via == "message_id" and found[1].origin == "schema" and found[2].needed_by == "s/list_messages"
    assert [p.tool_id for p in prerequisites(graph, "s/get_message", depth=1)] == ["s/open_app", "s/list_messages"]
    assert len(prerequisites(graph, "s/get_message", limit=1)) == 1
    assert prerequisites(graph, "s/unknown") == []


def test_only_the_preferred_producer_of_a_value_is_followed_further_back() -> None:
    orders = spec("shop", "list_orders", {}, obj(orders={"type": "array", "items": obj(order_id=STR)}), read_only=True)
    checkout = spec("shop", "checkout", {"address_id": "where to"}, obj(order_id=STR))
    cancel = spec("shop", "cancel_order", {"order_id": "the order"})
    declared = [Prerequisite("shop/add_to_cart", "shop/checkout", "requires"),
                Prerequisite("shop/checkout", "shop/cancel_order", "produces", via="order_id"),
                Prerequisite("shop/login", "shop/list_orders", "requires")]
    graph = build_graph([orders, checkout, cancel, spec("shop", "add_to_cart"), spec("shop", "login")], declared)
    assert {("shop/list_orders", "shop/cancel_order"), ("shop/checkout", "shop/cancel_order")} <= edges(graph)
    found = [(p.tool_id, p.depth) for p in prerequisites(graph, "shop/cancel_order")]
    assert found == [("shop/list_orders", 1), ("shop/checkout", 1), ("shop/login", 2)]  # not checkout's add_to_cart


def test_graph_round_trips_as_node_link_json(tmp_path: Path) -> None:
    graph = build_graph([LIST_MESSAGES, GET_MESSAGE], [Prerequisite("mail/x", "mail/get_message")])
    save_graph(graph, tmp_path / "graph.json")
    data = json.loads((tmp_path / "graph.json").read_text())
    assert "nodes" in data and "edges" in data
    again = load_graph(tmp_path / "graph.json")
    assert edges(again) == edges(graph) and again.graph["skipped"] == graph.graph["skipped"]
    assert again.edges["mail/list_messages", "mail/get_message"] == graph.edges["mail/list_messages", "mail/get_message"]


def test_search_with_prereqs_attaches_what_similarity_alone_misses(tmp_path: Path) -> None:
    login = spec("mail", "login", {"password": "secret"}, obj(token=STR), description="Start a session.")
    tools = [LIST_MESSAGES, GET_MESSAGE, DELETE_MESSAGE, login,
             spec("mail", "send_email", {"to": "who"}, description="Send a new email.")]
    declared = [Prerequisite("mail/login", "mail/delete_message", "requires")]
    build_search_index(tools, tmp_path, embedder=HashEmbedder(64), declared=declared)
    service = SearchService.load(tmp_path, HashEmbedder(64))
    plain = service.search("delete a message for good", k=1, method="bm25")
    assert [h.tool_id for h in plain] == ["mail/delete_message"] and plain[0].prerequisites == []
    hits = service.search("delete a message for good", k=1, method="bm25", with_prereqs=True)
    assert [p.tool_id for p in hits[0].prerequisites] == ["mail/login", "mail/list_messages"]
    assert surfaced_tools(hits) == ["mail/delete_message", "mail/login", "mail/list_messages"]
    with pytest.raises(UsageError, match="empty"):
        service.search("   ")
    (tmp_path / "graph.json").unlink()  # without a saved graph the schema edges are inferred on load
    inferred = SearchService.load(tmp_path, HashEmbedder(64)).search("delete a message", 1, "bm25", True)
    assert [p.tool_id for p in inferred[0].prerequisites] == ["mail/list_messages"]
