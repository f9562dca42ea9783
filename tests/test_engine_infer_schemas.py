"""Inference that reads real schemas (issue 33): ids named in any style (`ticketId`, `ticket-id`), paging by a
1- or 0-based page, an item offset or a cursor the previous page answered, and a login wherever the world keeps
a session token. The service here is written for the test: a small ticket desk on the task-board card."""

from __future__ import annotations

from typing import Any

import pytest

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.rules import RulesEngine
from cworld.engine.world.base import ServerWorld, World
from cworld.environment import Environment

SERVER = "ticket-desk"
TICKETS = {f"card_{n:04d}": {"title": f"Ticket {n}", "status": "open" if n % 3 else "done"} for n in range(1, 26)}


def tool(name: str, props: dict[str, Any], required: list[str] | None = None) -> ToolSpec:
    return ToolSpec(server=SERVER, name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": required or []})


TOOLS = [
    tool("getCard", {"cardId": {"type": "string"}, "token": {"type": "string"}}, ["cardId"]),
    tool("archive-card", {"card-id": {"type": "string"}, "token": {"type": "string"}}, ["card-id"]),
    tool("listCards", {"pageNumber": {"type": "integer", "minimum": 0}, "pageSize": {"type": "integer", "default": 10},
                       "token": {"type": "string"}}),
    tool("list_cards_from", {"offset": {"type": "integer"}, "limit": {"type": "integer", "default": 10},
                             "token": {"type": "string"}}),
    tool("list_cards_after", {"cursor": {"type": "string"}, "limit": {"type": "integer", "default": 10},
                              "token": {"type": "string"}}),
    tool("login", {"username": {"type": "string"}, "password": {"type": "string"}}, ["username", "password"]),
    tool("get_cards", {"first": {"type": "integer", "minimum": 1, "default": 10}, "after": {"type": "string"},
                       "token": {"type": "string"}}),
    tool("list_card_events", {"after": {"type": "string", "description": "events after this date (YYYY-MM-DD)"},
                              "token": {"type": "string"}}),
    tool("get_card_record", {"recordId": {"type": "string"}, "token": {"type": "string"}}, ["recordId"]),
    tool("createCard", {"title": {"type": "string"}, "dueDate": {"type": "string"}, "token": {"type": "string"}},
         ["title"]).model_copy(update={"output_schema": {
             "type": "object", "required": ["id", "title"], "additionalProperties": False,
             "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "dueDate": {"type": "string"}}}}),
    tool("searchCards", {"searchText": {"type": "string"}, "token": {"type": "string"}},
         ["searchText"]).model_copy(update={"output_schema": {
             "type": "object", "required": ["cards", "total_count", "total_pages"], "properties": {
                 "cards": {"type": "array", "items": {"type": "object"}}, "total_count": {"type": "integer"},
                 "total_pages": {"type": "integer"}}}}),
    tool("add_card_to_sprint", {"cardId": {"type": "string"}, "sprint_name": {"type": "string"},
                                "token": {"type": "string"}}, ["cardId", "sprint_name"]),
    tool("create-card-quick", {"title": {"type": "string"}, "token": {"type": "string"}},
         ["title"]).model_copy(update={"output_schema": {
             "type": "object", "required": ["success", "message"], "additionalProperties": False,
             "properties": {"success": {"type": "boolean"}, "message": {"type": "string"}}}}),
]


@pytest.fixture(scope="module")
def engine() -> RulesEngine:
    cards = load_cards(Environment.resolve().category_cards)
    state = {"cards": TICKETS, "me": {"username": "rosa", "password": "s3cret-desk", "name": "Rosa"},
             "auth": {}}
    world = World(seed=0, now="2026-08-01T09:00:00Z",
                  servers={SERVER: ServerWorld(SERVER, state, kinds={"card": "cards"}, card="task_board")})
    return RulesEngine(cards, TOOLS, world=world)


class Session:
    def __init__(self, engine: RulesEngine) -> None:
        self.engine, self.log = engine, SessionLog(seed=0)
        self.specs = {t.name: t for t in TOOLS}

    def __call__(self, name: str, **args: Any) -> ToolResult:
        result = self.engine.respond_sync(self.specs[name], args, self.log)
        self.log.record(self.specs[name].id, args, result)
        return result

    def token(self) -> str:
        return str(self("login", username="rosa", password="s3cret-desk").structured_content["token"])  # type: ignore[index]


def ids(result: ToolResult) -> list[str]:
    items = next(v for v in (result.structured_content or {}).values() if isinstance(v, list))
    return [i["card_id"] for i in items]


def test_a_login_gives_a_token_every_later_call_accepts_and_refuses_wrong_credentials(engine: RulesEngine) -> None:
    call = Session(engine)
    assert call("login", username="rosa", password="wrong").error_class == "auth"
    assert call("getCard", cardId="card_0001", token="made-up").error_class == "auth"
    token = call.token()
    found = call("getCard", cardId="card_0001", token=token)
    assert not found.is_error and found.structured_content["card_id"] == "card_0001"  # type: ignore[index]
    assert engine.rule_for(call.specs["login"])[1] == "inferred"


def test_ids_named_in_any_style_are_looked_up(engine: RulesEngine) -> None:
    call = Session(engine)
    token = call.token()
    assert call("getCard", cardId="card_9999", token=token).error_class == "not_found"
    assert call("archive-card", **{"card-id": "card_9999", "token": token}).error_class == "not_found"


def test_a_zero_based_page_an_offset_and_a_cursor_page_without_overlap(engine: RulesEngine) -> None:
    call = Session(engine)
    token = call.token()
    first, second = call("listCards", pageNumber=0, token=token), call("listCards", pageNumber=1, token=token)
    assert len(ids(first)) == 10 and not set(ids(first)) & set(ids(second))
    assert ids(call("listCards", pageNumber=0, token=token)) == ids(first)  # page 0 again is page 0
    assert first.structured_content["page"] == 0  # type: ignore[index]
    assert ids(call("list_cards_from", offset=10, token=token)) == ids(second)
    page = call("list_cards_after", token=token)
    seen = list(ids(page))
    while page.structured_content.get("next_cursor"):  # type: ignore[union-attr]
        page = call("list_cards_after", cursor=page.structured_content["next_cursor"], token=token)  # type: ignore[index]
        seen += ids(page)
    assert seen == sorted(TICKETS)  # every card once, in order, then no cursor


def test_a_relay_after_beside_first_is_a_cursor_the_service_gave_and_a_dated_after_is_none(engine: RulesEngine) -> None:
    """Shopify's `get_products(first, after)`: `after` takes the cursor the last page answered, and one it never
    gave is refused ("Invalid cursor"), where it had read as the first page. GitLab's `after: YYYY-MM-DD` is a
    time, never read as a cursor."""
    call = Session(engine)
    token = call.token()
    assert call("get_cards", after="bogus", token=token).error_class in ("invalid", "invalid_args")
    page = call("get_cards", token=token)
    later = call("get_cards", after=page.structured_content["next_cursor"], token=token)  # type: ignore[index]
    assert not later.is_error and not set(ids(page)) & set(ids(later))
    dated, _ = engine.rule_for(call.specs["list_card_events"])
    assert dated is not None and dated.list_ is not None and dated.list_.cursor is None
    assert not call("list_card_events", after="2026-07-01", token=token).is_error


def test_a_create_answers_the_stored_key_under_the_schemas_names(engine: RulesEngine) -> None:
    call = Session(engine)
    token = call.token()
    made = call("createCard", title="Fix the printer", dueDate="2026-08-09", token=token)
    assert not made.is_error and set(made.structured_content) == {"id", "title", "dueDate"}  # type: ignore[arg-type]
    key = made.structured_content["id"]  # type: ignore[index]
    assert made.structured_content["dueDate"] == "2026-08-09"  # type: ignore[index]
    assert key not in TICKETS and "shaped" not in made.meta  # nothing made up
    found = call("getCard", cardId=key, token=token)
    assert not found.is_error and found.structured_content["title"] == "Fix the printer"  # type: ignore[index]


def test_an_answer_that_holds_only_its_outcome_says_it_succeeded(engine: RulesEngine) -> None:
    """`{success, message}` holds nothing of the record made: its flag is the call's outcome, never a draw."""
    call = Session(engine)
    token = call.token()
    for n in range(6):  # a made-up flag would be false on some of these
        made = call("create-card-quick", title=f"Restock paper {n}", token=token)
        assert not made.is_error and made.structured_content["success"] is True  # type: ignore[index]


def test_a_search_by_search_text_finds_what_it_names_and_nothing_counts_zero(engine: RulesEngine) -> None:
    """`searchText` is the query (Azure DevOps' name for it): nonsense finds nothing, and the answer's counts
    say so rather than a made-up total beside an empty list."""
    call = Session(engine)
    token = call.token()
    found = call("searchCards", searchText="Ticket 12", token=token).structured_content
    assert found is not None and [c["title"] for c in found["cards"]] == ["Ticket 12"]
    assert (found["total_count"], found["total_pages"]) == (1, 1)
    nothing = call("searchCards", searchText="zzqxv nonexistent", token=token).structured_content
    assert nothing == {"cards": [], "total_count": 0, "total_pages": 0}


def test_adding_an_existing_card_somewhere_makes_no_new_card(engine: RulesEngine) -> None:
    """`add_card_to_sprint(cardId, sprint_name)` places a card that exists: an unknown one is `not_found`, and
    the board holds as many cards after as before (it made a copy of the card under a new key)."""
    call = Session(engine)
    token = call.token()
    count = lambda: call("list_cards_from", offset=0, limit=100, token=token).structured_content  # noqa: E731
    before = count()
    placed = call("add_card_to_sprint", cardId="card_0003", sprint_name="Sprint 9", token=token)
    assert not placed.is_error and placed.structured_content["title"] == "Ticket 3"  # type: ignore[index]
    assert call("add_card_to_sprint", cardId="card_0999", sprint_name="Sprint 9", token=token).error_class == "not_found"
    assert count() == before


def test_a_tool_naming_its_record_by_another_id_still_finds_it_or_says_not_found(engine: RulesEngine) -> None:
    """`get_card_record(recordId)`: no argument is `card_id`, but the one required id names no other kind."""
    call = Session(engine)
    token = call.token()
    found = call("get_card_record", recordId="card_0003", token=token)
    assert not found.is_error and "Ticket 3" in found.text
    assert call("get_card_record", recordId="rec_4711", token=token).error_class == "not_found"


def test_the_same_read_asked_twice_gives_the_same_answer(engine: RulesEngine) -> None:
    call = Session(engine)
    token = call.token()
    first = call("listCards", pageNumber=1, token=token)
    call("getCard", cardId="card_0002", token=token)
    assert call("listCards", pageNumber=1, token=token).structured_content == first.structured_content


def test_a_login_by_the_signed_in_users_handle_gives_a_token(engine: RulesEngine) -> None:
    """A chat-style login names only the user (`handle`): it must be the signed-in user's (`me`)."""
    cards = load_cards(Environment.resolve().category_cards)
    login = ToolSpec(server="talk", name="login", input_schema={
        "type": "object", "properties": {"handle": {"type": "string"}}, "required": ["handle"]})
    state = {"me": "u_0002", "users": {"u_0001": {"handle": "ada"}, "u_0002": {"handle": "rosa"}}, "auth": {}}
    world = World(seed=0, now="2026-08-01T09:00:00Z", servers={"talk": ServerWorld("talk", state, card="messaging")})
    talk = RulesEngine(cards, [login], world=world)
    assert talk.respond_sync(login, {"handle": "ada"}, SessionLog(seed=0)).error_class == "auth"
    ok = talk.respond_sync(login, {"handle": "Rosa"}, SessionLog(seed=0))
    assert not ok.is_error and ok.structured_content["user_id"] == "u_0002"  # type: ignore[index]
    assert str(ok.structured_content["token"]).startswith("tok_")  # type: ignore[index]
