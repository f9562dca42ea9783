"""The engine holds any server's world (issue 33): family rules fitted to any tool's naming style (a cancel
sets the status, it does not delete), a shown id is the stored id, a list of strings shows the world's
records, a loaded singleton (the signed-in user) answers `getMyProfile`, an `action` argument picks the
operation, and a record named by a field is found. The service is written for the test: a small travel desk
whose tools use camelCase, on the travel card."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.rules import RulesEngine
from cworld.engine.world.base import ServerWorld, World
from cworld.engine.world.build import load_records_file
from cworld.environment import Environment
from cworld.errors import UsageError

SERVER = "trip-desk"
CARDS = load_cards(Environment.resolve().category_cards)
BOOKINGS = {f"bk_{n:04d}": {"booking_id": f"bk_{n:04d}", "kind": "hotel", "status": "confirmed", "total": 120.0 * n,
                            "travellers": ["trv_0001"]} for n in range(1, 6)}
TRAVELLERS = {"trv_0001": {"traveller_id": "trv_0001", "first_name": "Ana", "last_name": "Lima"},
              "trv_0002": {"traveller_id": "trv_0002", "first_name": "Bo", "last_name": "Berg"}}
HOTELS = {"htl_001": {"name": "Casa do Rio", "city": "Lisbon", "stars": 4, "price_per_night": 140.0, "rooms_left": 3}}


def tool(name: str, props: dict[str, Any], required: list[str] | None = None,
         output: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(server=SERVER, name=name, description=name, output_schema=output,
                    input_schema={"type": "object", "properties": props, "required": required or []})


STR = {"type": "string"}
TOOLS = {t.name: t for t in [
    tool("getBooking", {"bookingId": STR}, ["bookingId"]),
    tool("cancelBooking", {"bookingId": STR}, ["bookingId"]),
    tool("updateBooking", {"bookingId": STR, "travellerId": STR, "total": {"type": "number"}}, ["bookingId"]),
    tool("createTraveller", {"firstName": STR, "lastName": STR}, ["firstName", "lastName"],
         output={"type": "object", "required": ["id"], "properties": {"id": STR, "firstName": STR}}),
    tool("getTraveller", {"travellerId": STR}, ["travellerId"]),
    tool("listHotelNames", {}, output={"type": "object", "properties": {"hotels": {"type": "array", "items": STR}}}),
    tool("getMyProfile", {}),
    tool("manageBookings", {"action": {"type": "string", "enum": ["list", "get", "cancel"]}, "bookingId": STR},
         ["action"]),
    tool("getHotel", {"name": STR}, ["name"]),
    tool("setBookingTotal", {"total": {"type": "number"}, "bookingId": STR}),
    tool("removeBooking", {"bookingId": STR}),
]}


def world_of(state: dict[str, Any]) -> World:
    kinds = {"booking": "bookings", "traveller": "travellers", "hotel": "hotels"}
    return World(seed=0, now="2026-08-01T09:00:00Z", servers={
        SERVER: ServerWorld(SERVER, state, kinds={k: v for k, v in kinds.items() if v in state}, card="travel")})


@pytest.fixture()
def call() -> Any:
    engine = RulesEngine(CARDS, TOOLS.values(), world=world_of(
        {"bookings": BOOKINGS, "travellers": TRAVELLERS, "hotels": HOTELS}))
    log = SessionLog(seed=0)

    def run(tool_name: str, /, **args: Any) -> ToolResult:
        result = engine.respond_sync(TOOLS[tool_name], args, log)
        log.record(TOOLS[tool_name].id, args, result)
        return result
    run.engine = engine  # type: ignore[attr-defined]
    return run


def test_a_camel_case_id_names_a_record_that_must_exist(call: Any) -> None:
    assert call("getBooking", bookingId="bk_9999").error_class == "not_found"
    assert call("updateBooking", bookingId="bk_0001", travellerId="trv_9999").error_class == "not_found"
    assert not call("updateBooking", bookingId="bk_0001", travellerId="trv_0002", total=99.0).is_error
    assert call("getBooking", bookingId="bk_0001").structured_content["total"] == 99.0


def test_a_cancel_sets_the_status_and_keeps_the_record(call: Any) -> None:
    assert call.engine.rule_for(TOOLS["cancelBooking"])[1] == "family"
    done = call("cancelBooking", bookingId="bk_0002")
    assert not done.is_error and done.structured_content["status"] == "cancelled"
    again = call("getBooking", bookingId="bk_0002")
    assert not again.is_error and again.structured_content["status"] == "cancelled"
    twice = call("cancelBooking", bookingId="bk_0002")
    assert twice.is_error and twice.error_class == "business" and "already cancelled" in twice.text


def test_a_created_record_is_shown_under_its_stored_id(call: Any) -> None:
    made = call("createTraveller", firstName="Cy", lastName="Dahl")
    shown = made.structured_content["id"]
    assert shown not in TRAVELLERS
    found = call("getTraveller", travellerId=shown)
    assert not found.is_error and found.structured_content["first_name"] == "Cy"


def test_a_list_of_strings_shows_the_worlds_records(call: Any) -> None:
    listed = call("listHotelNames")
    assert listed.structured_content["hotels"] == ["Casa do Rio"]


def test_an_action_argument_picks_the_operation(call: Any) -> None:
    assert call("manageBookings", action="get", bookingId="bk_9999").error_class == "not_found"
    listed = call("manageBookings", action="list")
    assert not listed.is_error and len(next(v for v in listed.structured_content.values() if isinstance(v, list))) == 5
    cancelled = call("manageBookings", action="cancel", bookingId="bk_0003")
    assert not cancelled.is_error and call("getBooking", bookingId="bk_0003").structured_content["status"] == "cancelled"


def test_a_record_named_by_a_field_is_found_or_not_found(call: Any) -> None:
    assert call("getHotel", name="casa do rio").structured_content["city"] == "Lisbon"
    missing = call("getHotel", name="Hotel Nowhere")
    assert missing.error_class == "not_found" and "Hotel Nowhere" in missing.text


def test_a_loaded_signed_in_user_is_who_get_my_profile_answers(tmp_path: Path) -> None:
    path = tmp_path / "trip-desk.yaml"
    path.write_text("travellers:\n  - {traveller_id: trv_0001, first_name: Ana, last_name: Lima}\n"
                    "  - {traveller_id: trv_0002, first_name: Bo, last_name: Berg}\nstate:\n  me: trv_0002\n")
    loaded = load_records_file(SERVER, path, CARDS["travel"])
    assert loaded.state["me"] == "trv_0002"
    engine = RulesEngine(CARDS, TOOLS.values(), world=World(seed=0, now="2026-08-01T09:00:00Z",
                                                            servers={SERVER: loaded}))
    me = engine.respond_sync(TOOLS["getMyProfile"], {}, SessionLog(seed=0))
    assert not me.is_error and me.structured_content["first_name"] == "Bo"


def test_a_loaded_value_of_the_wrong_type_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "hotels.json"
    path.write_text('{"hotels": [{"id": "htl_001", "name": "Casa", "stars": "five"}]}')
    with pytest.raises(UsageError, match="field 'stars' is 'five'.*declares it int"):
        load_records_file(SERVER, path, CARDS["travel"])


def test_card_families_comment_on_a_parent_and_transfer_within_the_balance() -> None:
    """A category's own families: a comment is added to the card its id names (which must exist), and a
    transfer between two accounts, never more than the balance, moves the money once it is confirmed."""
    board = ServerWorld("tiny-board", {"cards": {"crd_0001": {"title": "Fix login", "list_id": "lst_0001"}},
                                       "comments": {}, "lists": {"lst_0001": {"name": "Doing"}}},
                        kinds={"card": "cards", "comment": "comments", "list": "lists"}, card="task_board")
    bank = ServerWorld("tiny-bank", {"accounts": {"acc_0001": {"name": "Checking", "balance": 100.0},
                                                  "acc_0002": {"name": "Savings", "balance": 5.0}}, "transfers": {}},
                       kinds={"account": "accounts", "transfer": "transfers"}, card="finance")
    comment = ToolSpec(server="tiny-board", name="addCardComment", description="comment", input_schema={
        "type": "object", "properties": {"cardId": STR, "text": STR}, "required": ["cardId", "text"]})
    send = ToolSpec(server="tiny-bank", name="transferFunds", description="transfer", input_schema={
        "type": "object", "properties": {"fromAccountId": STR, "toAccountId": STR, "amount": {"type": "number"}},
        "required": ["fromAccountId", "toAccountId", "amount"]})
    confirm = ToolSpec(server="tiny-bank", name="confirmTransfer", description="confirm", input_schema={
        "type": "object", "properties": {"transferId": STR, "code": STR}, "required": ["transferId", "code"]})
    engine = RulesEngine(CARDS, [comment, send, confirm], world=World(seed=0, now="2026-08-01T09:00:00Z",
                                                             servers={"tiny-board": board, "tiny-bank": bank}))
    log = SessionLog(seed=0)
    assert engine.respond_sync(comment, {"cardId": "crd_0404", "text": "hi"}, log).error_class == "not_found"
    made = engine.respond_sync(comment, {"cardId": "crd_0001", "text": "Looks good"}, log)
    assert not made.is_error and made.structured_content["card_id"] == "crd_0001"
    assert engine.rule_for(send)[1] == "family"
    too_much = engine.respond_sync(send, {"fromAccountId": "acc_0002", "toAccountId": "acc_0001", "amount": 50}, log)
    assert too_much.is_error and "insufficient funds" in too_much.text
    moved = engine.respond_sync(send, {"fromAccountId": "acc_0001", "toAccountId": "acc_0002", "amount": 40}, log)
    assert not moved.is_error and moved.structured_content["amount"] == 40
    log.record(send.id, {"fromAccountId": "acc_0001", "toAccountId": "acc_0002", "amount": 40}, moved)
    assert "account" not in {c.kind for c in engine.world_changes(log)}  # it waits for its confirmation
    code = {"transferId": moved.structured_content["transfer_id"], "code": "123456"}
    assert not engine.respond_sync(confirm, code, log).is_error
    log.record(confirm.id, code, moved)
    changes = {c.kind: c for c in engine.world_changes(log)}
    assert changes["account"].updated["acc_0001"]["balance"] == 60.0
    assert changes["account"].updated["acc_0002"]["balance"] == 45.0


def test_a_write_whose_only_id_is_optional_and_not_given_changes_nothing(call: Any) -> None:
    """The record a write names by an optional id argument: found when given, nothing touched (no crash) when not."""
    assert not call("setBookingTotal", total=5.0).is_error
    assert not call("removeBooking").is_error
    assert call("setBookingTotal", bookingId="bk_9999", total=5.0).error_class == "not_found"
    assert not call("setBookingTotal", bookingId="bk_0004", total=5.0).is_error
    assert call("getBooking", bookingId="bk_0004").structured_content["total"] == 5.0
    assert call("getBooking", bookingId="bk_0005").structured_content["total"] == 600.0


def test_a_thread_reads_as_its_messages_oldest_first_a_page_at_a_time() -> None:
    """The email card's thread family, on a mailbox written for the test whose threads are a field of its
    messages (no thread records): the thread's messages in date order, paged; an id no message carries is
    not found."""
    from engine_helpers import rules_caller

    mails = {f"m_{n}": {"thread_id": "t_1" if n % 2 else "t_2", "subject": f"Budget {n}", "folder": "inbox",
                        "date": f"2026-07-{10 - n:02d}T09:00:00Z"} for n in range(1, 8)}
    tools = [ToolSpec(server="mailbox", name="get_thread", description="read a conversation",
                      input_schema={"type": "object", "properties": {"thread_id": STR, "page": {"type": "integer"},
                                                                     "page_size": {"type": "integer"}},
                                    "required": ["thread_id"]})]
    call = rules_caller("mailbox", "email", {"messages": mails}, {"message": "messages"}, tools)
    first = call("get_thread", thread_id="t_1", page_size=3)
    assert not first.is_error and first.meta.get("rule") == "family", first.text
    content = first.structured_content or {}
    assert [m["subject"] for m in content["messages"]] == ["Budget 7", "Budget 5", "Budget 3"]
    assert content["total"] == 4 and content["has_more"] is True
    rest = call("get_thread", thread_id="t_1", page=2, page_size=3).structured_content or {}
    assert [m["subject"] for m in rest["messages"]] == ["Budget 1"]
    assert call("get_thread", thread_id="t_9").error_class == "not_found"


def test_a_locked_document_opens_with_its_password_only() -> None:
    """The documents card's unlock: on a record that keeps a password, a wrong one is refused (`auth`) and the
    document stays locked; where the record keeps none, any password is taken."""
    from engine_helpers import rules_caller

    docs = {"doc_1": {"title": "Board minutes", "locked": True, "password": "tide-42"},
            "doc_2": {"title": "Roadmap", "locked": True}}
    tools = [ToolSpec(server="team-docs", name="unlock_document", description="unlock a document",
                      input_schema={"type": "object", "properties": {"document_id": STR, "password": STR},
                                    "required": ["document_id", "password"]})]
    call = rules_caller("team-docs", "documents", {"documents": docs}, {"document": "documents"}, tools)
    wrong = call("unlock_document", document_id="doc_1", password="guess")
    assert wrong.error_class == "auth" and "wrong password" in wrong.text
    assert not call("unlock_document", document_id="doc_1", password="tide-42").is_error
    assert call("unlock_document", document_id="doc_1", password="tide-42").error_class == "business"  # not locked
    assert not call("unlock_document", document_id="doc_2", password="anything").is_error


def test_a_tool_no_rule_covers_still_refuses_an_id_the_world_does_not_hold() -> None:
    """`create_label(board_id, color)` on a task board whose world holds boards but no labels: no rule covers it,
    so the schema engine makes up its answer, but only after the board it names is found."""
    from engine_helpers import rules_caller

    tools = [ToolSpec(server="team-board", name="create_label", description="make a label on a board",
                      input_schema={"type": "object", "properties": {"board_id": STR, "color": STR},
                                    "required": ["board_id", "color"]})]
    call = rules_caller("team-board", "task_board", {"boards": {"brd_1": {"name": "Ops"}}}, {"board": "boards"}, tools)
    missing = call("create_label", board_id="brd_9", color="red")
    assert missing.error_class == "not_found" and missing.meta.get("rule") == "inferred", missing.text
    found = call("create_label", board_id="brd_1", color="red")
    assert found.meta.get("simulated") is True  # on to the schema engine (this engine has none: `unavailable`)


def test_a_tool_no_rule_covers_checks_the_people_it_names_too() -> None:
    """`get_working_location(person_ids, date)`: no rule reads where people work, but every person it names must
    be one the world holds, even of the kind the tool is about (free/busy has the calendar card's family now)."""
    from engine_helpers import rules_caller

    tools = [ToolSpec(server="work-cal", name="get_working_location", description="where people work on a day",
                      input_schema={"type": "object", "properties": {"person_ids": {"type": "array", "items": STR},
                                                                     "date": STR}, "required": ["person_ids", "date"]})]
    call = rules_caller("work-cal", "calendar", {"people": {"p_1": {"name": "Ana"}}, "events": {}},
                        {"person": "people", "event": "events"}, tools)
    assert call("get_working_location", person_ids=["p_1", "p_9"], date="2026-08-03").error_class == "not_found"
    assert call("get_working_location", person_ids=["p_1"], date="2026-08-03").meta.get("simulated") is True


def test_a_due_date_is_marked_complete_only_once_a_card_has_one() -> None:
    from engine_helpers import rules_caller

    cards = {"crd_1": {"title": "Ship it", "due": "2026-08-10T12:00:00Z", "due_complete": False},
             "crd_2": {"title": "Someday", "due": None, "due_complete": False}}
    tools = [ToolSpec(server="team-board", name="mark_due_complete", description="tick a card's due date",
                      input_schema={"type": "object", "properties": {"card_id": STR, "complete": {"type": "boolean"}},
                                    "required": ["card_id"]})]
    call = rules_caller("team-board", "task_board", {"cards": cards}, {"card": "cards"}, tools)
    assert call("mark_due_complete", card_id="crd_2").error_class == "business"  # no due date yet
    assert (call("mark_due_complete", card_id="crd_1").structured_content or {}).get("due_complete") is True
    undone = call("mark_due_complete", card_id="crd_1", complete=False)
    assert (undone.structured_content or {}).get("due_complete") is False
