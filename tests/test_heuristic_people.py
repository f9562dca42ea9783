"""The heuristic agents address the person the request names: a people search looks for that name, an id of a
person is copied only from a record that names them, a role is read as a person says it, nobody is copied in
unasked (the steps they skipped on `make demo`'s sandbox tasks: docs/task-synthesis.md)."""

from __future__ import annotations

from typing import Any

from cworld.agents.fill import FillContext, Record, fill, id_like
from cworld.agents.intents import facts_of, intents_of
from cworld.data_model import ToolSpec


def _spec(server: str, name: str, description: str, props: dict[str, Any], needed: list[str]) -> ToolSpec:
    schema = {"type": "object", "properties": props, "required": needed}
    return ToolSpec(server=server, name=name, description=description, input_schema=schema)


DM = _spec("chat", "send_direct_message", "Send a private message to one person.",
           {"token": {"type": "string", "description": "session token from login"},
            "user_id": {"type": "string", "description": "user id from search_users"},
            "text": {"type": "string", "description": "message text"}}, ["token", "user_id", "text"])
USERS = _spec("chat", "search_users", "Find people to get their user ids.",
              {"query": {"type": "string", "description": "words from a name, handle or title"}}, [])
SHARE = _spec("docs", "share_document", "Share a document with someone.",
              {"document_id": {"type": "string", "description": "document id"},
               "person_id": {"type": "string", "description": "person id from find_people"},
               "role": {"type": "string", "enum": ["viewer", "editor"]}}, ["document_id", "person_id", "role"])
MAIL = _spec("mail", "send_email", "Send a new email to contacts.",
             {"to": {"type": "array", "description": "contact ids (from search_contacts)"},
              "cc": {"type": "array", "description": "contact ids to copy"},
              "subject": {"type": "string"}, "body": {"type": "string"}}, ["to", "subject", "body"])
QUERY = 'Ping Nikos Kowalski privately on chat, saying "Hi Nikos! The card moved."'
ME = Record("chat/login", {"token": "xoxs_1", "user_id": "U_0001", "name": "Catherine Chen"})


def _ctx(query: str, *memory: Record) -> FillContext:
    return FillContext(list(memory), facts_of(query), True)


def test_a_search_for_people_looks_for_the_person_named() -> None:
    assert not id_like("query", {"description": "words from a name, handle or title"})
    intent = intents_of("Share the 'Q3 plan' document with Natalie Santos as a viewer.")[0]
    args, _ = fill(USERS, intent, _ctx(intent.text))
    assert args == {"query": "Natalie Santos"}


def test_a_person_id_comes_from_the_record_that_names_them() -> None:
    intent = intents_of(QUERY)[0]
    args, missing = fill(DM, intent, _ctx(QUERY, ME))
    assert "user_id" in missing and args["token"] == "xoxs_1"  # not my own id: look Nikos up first
    found = Record("chat/search_users", {"users": [{"user_id": "U_0027", "name": "Nikos Kowalski"}]})
    args, missing = fill(DM, intent, _ctx(QUERY, ME, found))
    assert not missing and args["user_id"] == "U_0027" and args["text"] == "Hi Nikos! The card moved."


def test_a_role_is_read_as_a_person_says_it() -> None:
    for said, role in (("(can edit)", "editor"), ("(read only)", "viewer"), ("as a viewer", "viewer")):
        intent = intents_of(f"Share it with Harper Nair {said}.")[0]
        assert fill(SHARE, intent, _ctx(intent.text))[0]["role"] == role, said


def test_nobody_is_copied_in_unasked() -> None:
    contacts = Record("mail/search_contacts", {"contacts": [{"contact_id": "ct_7", "name": "Liam Garcia"}]})
    asked = 'Email Liam Garcia, titled "Update" and saying "It moved."'
    args, _ = fill(MAIL, intents_of(asked)[0], _ctx(asked, contacts))
    assert args["to"] == ["ct_7"] and "cc" not in args
    copied = 'Email Liam Garcia and copy Liam Garcia in, titled "Update" and saying "It moved."'
    assert fill(MAIL, intents_of(copied)[0], _ctx(copied, contacts))[0].get("cc") == ["ct_7"]


HOTELS = _spec("travel", "search_hotels", "Hotels in a city.",
               {"city": {"type": "string"}, "check_in": {"type": "string", "description": "date as YYYY-MM-DD"},
                "check_out": {"type": "string", "description": "date as YYYY-MM-DD"},
                "max_rate": {"type": "number", "description": "highest nightly rate"}}, ["city", "check_in", "check_out"])


def test_a_stay_is_searched_as_asked() -> None:
    """The city, both dates (the year from the request's own ISO dates) and the nightly cap of a constraint."""
    query = ('I need a hotel in Honolulu from Monday 6 April for 3 nights. Post in #trips saying "Back on '
             '2026-04-09." For the hotel, get the most stars you can without paying more than 243.10 a night. '
             'The whole stay must stay under 875.00.')
    args, missing = fill(HOTELS, intents_of(query)[0], _ctx(query))
    assert not missing
    assert args == {"city": "Honolulu", "check_in": "2026-04-06", "check_out": "2026-04-09", "max_rate": 243.1}
    stated = "Find me somewhere to stay in Seoul, checking in Sunday 16 August and out Thursday 20 August."
    args, _ = fill(HOTELS, intents_of(stated)[0], _ctx(stated, Record("x/y", {"at": "2026-08-01"})))
    assert (args["check_in"], args["check_out"]) == ("2026-08-16", "2026-08-20") and "max_rate" not in args


def test_a_second_write_in_one_sentence_is_its_own_clause() -> None:
    query = "move its due date to Tuesday 11 August at 12:00 UTC and leave a comment saying \"Moved it.\""
    first, second = intents_of(query)
    assert first.facts.dates and not first.facts.saying and second.facts.saying == ["Moved it."]


def test_a_password_told_in_a_message_is_read_from_it() -> None:
    unlock = _spec("docs", "unlock_document", "Unlock a password-protected document.",
                   {"document_id": {"type": "string", "description": "document id"},
                    "password": {"type": "string", "description": "the document's password"}},
                   ["document_id", "password"])
    query = "The 'Q3 plan' document is password-protected (the password is somewhere in my inbox). Unlock it."
    found = Record("docs/search_documents", {"documents": [{"document_id": "doc_1", "title": "Q3 plan"}]})
    intent = intents_of(query)[0]
    assert fill(unlock, intent, _ctx(query, found))[1] == ["password"]  # "somewhere" is no password
    mail = Record("mail/get_message", {"body": "Hi, I locked 'Q3 plan'. The password is maple-orbit-42 - thanks."})
    assert fill(unlock, intent, _ctx(query, found, mail))[0]["password"] == "maple-orbit-42"


def test_a_list_of_quoted_items_fills_a_list() -> None:
    checklist = _spec("taskboard", "add_checklist", "Add a checklist to a card.",
                      {"card_id": {"type": "string", "description": "card id"}, "name": {"type": "string"},
                       "items": {"type": "array", "items": {"type": "string"}}}, ["card_id", "name", "items"])
    query = "Give the card a checklist titled \"Steps\" with the items 'Confirm details', 'Share it', 'Close out'."
    card = Record("taskboard/create_card", {"card_id": "crd_9", "title": "Follow up"})
    args, missing = fill(checklist, intents_of(query)[0], _ctx(query, card))
    assert not missing and args["items"] == ["Confirm details", "Share it", "Close out"] and args["name"] == "Steps"


EVENT = _spec("calendar", "create_event", "Schedule a meeting you organize.",
              {"title": {"type": "string"}, "start": {"type": "string", "description": "UTC time, YYYY-MM-DDTHH:MM"},
               "end": {"type": "string", "description": "UTC time, YYYY-MM-DDTHH:MM"},
               "attendee_ids": {"type": "array", "description": "person ids to invite"},
               "room_id": {"type": "string", "description": "room id from list_rooms"}}, ["title", "start", "end"])
MEETING = ('Set up a 30-minute meeting with Nicholas Carter and Benjamin Suzuki on Friday 8 May, with a room with '
           'video, titled "Talk dry run". Post in #x saying "On 2026-05-08."')


def test_a_meeting_takes_the_earliest_free_slot_everyone_and_a_free_room_with_video() -> None:
    intent = intents_of(MEETING)[0]
    people = [Record("calendar/find_people", {"people": [{"person_id": p, "name": n}]})
              for p, n in (("p1", "Nicholas Carter"), ("p2", "Benjamin Suzuki"))]
    args, missing = fill(EVENT, intent, _ctx(MEETING, people[0]))
    assert {"start", "end", "room_id"} <= set(missing) and "attendee_ids" not in args  # one guest still unknown
    slots = Record("calendar/find_free_slots", {"slots": [["2026-05-07T14:00:00Z", "2026-05-07T14:30:00Z"],
                                                          ["2026-05-08T14:30:00Z", "2026-05-08T15:00:00Z"]]})
    rooms = Record("calendar/list_rooms", {"rooms": [
        {"room_id": "r1", "name": "Cedar", "capacity": 4, "video": False, "available": True},
        {"room_id": "r2", "name": "Maple", "capacity": 4, "video": True, "available": False},
        {"room_id": "r4", "name": "Iris", "capacity": 2, "video": True, "available": True},
        {"room_id": "r3", "name": "Kite", "capacity": 3, "video": True, "available": True}]})
    args, missing = fill(EVENT, intent, _ctx(MEETING, *people, slots, rooms))
    assert not missing and args["attendee_ids"] == ["p1", "p2"] and args["room_id"] == "r3"
    assert (args["start"], args["end"]) == ("2026-05-08T14:30", "2026-05-08T15:00")


def test_a_meeting_takes_the_smallest_free_room_that_seats_everyone_whatever_the_listing_order() -> None:
    """A person books the four-seater for three, not the boardroom the listing happens to show first."""
    intent = intents_of(MEETING)[0]
    people = [Record("calendar/find_people", {"people": [{"person_id": p, "name": n}]})
              for p, n in (("p1", "Nicholas Carter"), ("p2", "Benjamin Suzuki"))]
    slots = Record("calendar/find_free_slots", {"slots": [["2026-05-08T14:30:00Z", "2026-05-08T15:00:00Z"]]})
    rooms = Record("calendar/list_rooms", {"rooms": [
        {"room_id": "board", "name": "Board", "capacity": 20, "video": True, "available": True},
        {"room_id": "kite", "name": "Kite", "capacity": 4, "video": True, "available": True},
        {"room_id": "hall", "name": "Hall", "capacity": 8, "video": True, "available": True}]})
    args, missing = fill(EVENT, intent, _ctx(MEETING, *people, slots, rooms))
    assert not missing and args["room_id"] == "kite"


def test_an_id_of_a_kind_named_by_name_comes_from_the_record_of_that_name() -> None:
    create = _spec("docs", "create_document", "Create a document.",
                   {"title": {"type": "string"}, "folder_id": {"type": "string", "description": "folder id"}},
                   ["title", "folder_id"])
    query = 'Write it up in a document titled "Notes" in my Team folder.'
    opened = Record("docs/unlock_document", {"document_id": "doc_1", "folder_id": "fld_1", "title": "Plan"})
    assert fill(create, intents_of(query)[0], _ctx(query, opened))[1] == ["folder_id"]
    folders = Record("docs/list_folders", {"folders": [{"folder_id": "fld_1", "name": "Projects"},
                                                      {"folder_id": "fld_2", "name": "Team"}]})
    assert fill(create, intents_of(query)[0], _ctx(query, opened, folders))[0]["folder_id"] == "fld_2"


def test_a_payment_goes_to_the_payee_named_with_the_note_dictated() -> None:
    transfer = _spec("finance", "create_transfer", "Set up a transfer.",
                     {"to_id": {"type": "string", "description": "own account id (list_accounts) or payee id"},
                      "amount": {"type": "number"}, "memo": {"type": "string"}}, ["to_id", "amount"])
    query = 'Pay Emma Johansson 149.26 for the shared taxi, with the note "shared taxi" (PIN 5544).'
    payees = Record("finance/list_payees", {"payees": [{"payee_id": "pay_1", "name": "Landlord"},
                                                       {"payee_id": "pay_3", "name": "Emma Johansson"}]})
    args, missing = fill(transfer, intents_of(query)[0], _ctx(query, payees))
    assert not missing and args == {"to_id": "pay_3", "amount": 149.26, "memo": "shared taxi"}
