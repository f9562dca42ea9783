"""Who may change a record (issue 33, card families written for the category): only a document's owner deletes
it (the documents card), only an event's organizer changes it (the calendar card), only a message's author edits or
deletes it (the messaging card), where the world points at
the signed-in user (`me`). The check comes right after the record is found, before what it holds is checked
(a permission before "not an attendee"). The services here are written for the test."""

from __future__ import annotations

from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR = {"type": "string"}


def tool(server: str, name: str, props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(server=server, name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": list(props)})


def test_only_the_owner_deletes_a_document() -> None:
    docs = {"doc_1": {"title": "Mine", "owner": "u_1", "content": "a"}, "doc_2": {"title": "Theirs", "owner": "u_2"}}
    tools = [tool("team-docs", "delete_document", {"document_id": STR}), tool("team-docs", "get_document", {"document_id": STR})]
    call = rules_caller("team-docs", "documents", {"me": "u_1", "people": {"u_1": {"name": "A"}, "u_2": {"name": "B"}},
                                             "documents": docs}, {"document": "documents", "person": "people"}, tools)
    assert call("delete_document", document_id="doc_2").error_class == "business"  # permission denied
    assert not call("get_document", document_id="doc_2").is_error
    assert not call("delete_document", document_id="doc_1").is_error
    assert '"trashed": true' in call("get_document", document_id="doc_1").text  # the store keeps a trash


def test_only_the_organizer_changes_an_event_and_that_is_checked_first() -> None:
    events = {"evt_1": {"title": "Mine", "start": "2026-08-03T09:00:00Z", "end": "2026-08-03T10:00:00Z",
                        "organizer": "p_1", "attendees": ["p_1"]},
              "evt_2": {"title": "Theirs", "start": "2026-08-04T09:00:00Z", "end": "2026-08-04T10:00:00Z",
                        "organizer": "p_2", "attendees": ["p_2"]}}
    tools = [tool("work-calendar", "update_event", {"event_id": STR, "title": STR}),
             tool("work-calendar", "remove_attendee", {"event_id": STR, "person_id": STR}),
             tool("work-calendar", "add_attendees", {"event_id": STR, "person_ids": {"type": "array", "items": STR}})
             .model_copy(update={"output_schema": {"type": "object", "properties": {
                 "event_id": STR, "calendar_id": STR, "title": STR, "organizer": STR}}})]
    call = rules_caller("work-calendar", "calendar", {"me": "p_1", "people": {"p_1": {"name": "A"}, "p_2": {"name": "B"}},
                                           "events": events, "calendars": {"cal_1": {"name": "Work", "owner": "p_1"}}},
                        {"event": "events", "person": "people", "calendar": "calendars"}, tools)
    assert call("update_event", event_id="evt_2", title="New").error_class == "business"
    assert not call("update_event", event_id="evt_1", title="New").is_error
    assert call("remove_attendee", event_id="evt_2", person_id="p_1").error_class == "business"  # not "not among"
    assert call("remove_attendee", event_id="evt_1", person_id="p_2").error_class == "not_found"
    # its answer's first ids point at a calendar, but the record it finds is an event: the guard reads the
    # event's fields
    assert call("add_attendees", event_id="evt_2", person_ids=["p_1"]).error_class == "business"
    assert not call("add_attendees", event_id="evt_1", person_ids=["p_2"]).is_error


def test_only_the_author_edits_or_deletes_a_message_whether_me_is_an_id_or_a_user_record() -> None:
    messages = {"m_1": {"conversation_id": "C_1", "author": "U_1", "text": "mine"},
                "m_2": {"conversation_id": "C_1", "author": "U_2", "text": "theirs"}}
    tools = [tool("team-chat", "edit_message", {"message_id": STR, "text": STR}),
             tool("team-chat", "delete_message", {"message_id": STR}),
             tool("team-chat", "get_message", {"message_id": STR})]
    for me in ("U_1", {"id": "U_1", "name": "A"}):
        call = rules_caller("team-chat", "messaging", {"me": me, "users": {"U_1": {"name": "A"}, "U_2": {"name": "B"}},
                                                     "messages": dict(messages)}, {"message": "messages", "user": "users"},
                            tools)
        refused = call("edit_message", message_id="m_2", text="changed")
        assert refused.error_class == "business" and "only change your own messages" in refused.text
        assert call("delete_message", message_id="m_2").error_class == "business"
        assert call("get_message", message_id="m_2").structured_content["text"] == "theirs"  # type: ignore[index]
        assert not call("edit_message", message_id="m_1", text="changed").is_error
        assert not call("delete_message", message_id="m_1").is_error
    no_one = rules_caller("team-chat", "messaging", {"messages": dict(messages)}, {"message": "messages"}, tools)
    assert not no_one("edit_message", message_id="m_2", text="changed").is_error  # the world names no signed-in user


def test_an_update_made_on_an_old_version_is_a_conflict_and_a_change_is_the_next_version() -> None:
    docs = {"doc_1": {"title": "Plan", "owner": "u_1", "content": "a", "version": 2}}
    tools = [tool("team-docs", "update_document", {"document_id": STR, "content": STR, "expected_version": {"type": "integer"}}),
             tool("team-docs", "get_document", {"document_id": STR})]
    call = rules_caller("team-docs", "documents", {"documents": docs}, {"document": "documents"}, tools)
    assert call("update_document", document_id="doc_1", content="b", expected_version=1).error_class == "business"
    assert not call("update_document", document_id="doc_1", content="b", expected_version=2).is_error
    assert call("get_document", document_id="doc_1").structured_content["version"] == 3  # type: ignore[index]
    assert call("update_document", document_id="doc_1", content="c", expected_version=2).error_class == "business"


def test_a_board_observer_changes_nothing_and_only_an_admin_sets_roles() -> None:
    """The task-board card's role guards, where a board keeps its members' roles: an observer's writes on the
    board's cards and lists are refused, reads are not; changing a role needs the admin role; a board that keeps
    no roles refuses nothing."""
    boards = {"brd_1": {"name": "Ops", "roles": {"u_1": "observer", "u_2": "admin"}},
              "brd_2": {"name": "Home", "roles": {"u_1": "admin"}}, "brd_3": {"name": "Open"}}
    cards = {f"crd_{b}": {"board_id": f"brd_{b}", "list_id": f"lst_{b}", "title": f"Card {b}"} for b in (1, 2, 3)}
    lists = {f"lst_{b}": {"board_id": f"brd_{b}", "name": "To do"} for b in (1, 2, 3)}
    tools = [tool("team-board", "move_card", {"card_id": STR, "list_id": STR}),
             tool("team-board", "create_list", {"board_id": STR, "title": STR}),
             tool("team-board", "get_card", {"card_id": STR}),
             tool("team-board", "set_member_role", {"board_id": STR, "member_id": STR, "role": STR})]
    call = rules_caller("team-board", "task_board",
                        {"me": "u_1", "people": {"u_1": {"name": "A"}, "u_2": {"name": "B"}}, "boards": boards,
                         "cards": cards, "lists": lists},
                        {"board": "boards", "card": "cards", "list": "lists", "member": "people"}, tools)
    refused = call("move_card", card_id="crd_1", list_id="lst_1")
    assert refused.error_class == "business" and "observer" in refused.text
    assert call("create_list", board_id="brd_1", title="Later").error_class == "business"
    assert not call("get_card", card_id="crd_1").is_error
    assert call("set_member_role", board_id="brd_1", member_id="u_2", role="normal").error_class == "business"
    assert not call("move_card", card_id="crd_2", list_id="lst_2").is_error
    assert not call("set_member_role", board_id="brd_2", member_id="u_1", role="admin").is_error
    assert not call("create_list", board_id="brd_3", title="Later").is_error


def test_an_event_i_create_is_mine_to_change_and_not_mine_to_answer() -> None:
    """A create fills who made the record (`organizer`) with the signed-in user; the calendar card's answer to an
    invitation comes only from an invitee, never from the organizer."""
    events = {"evt_1": {"title": "Theirs", "start": "2026-08-04T09:00:00Z", "end": "2026-08-04T10:00:00Z",
                        "organizer": "p_2", "attendees": ["p_2", "p_1"]},
              "evt_2": {"title": "Private", "start": "2026-08-05T09:00:00Z", "end": "2026-08-05T10:00:00Z",
                        "organizer": "p_2", "attendees": ["p_2"]}}
    tools = [tool("work-cal", "create_event", {"title": STR, "start": STR, "end": STR}),
             tool("work-cal", "update_event", {"event_id": STR, "title": STR}),
             tool("work-cal", "respond_to_invitation", {"event_id": STR, "response": STR})]
    call = rules_caller("work-cal", "calendar", {"me": {"id": "p_1", "name": "A"}, "people": {"p_1": {"name": "A"},
                                                  "p_2": {"name": "B"}}, "events": events},
                        {"event": "events", "person": "people"}, tools)
    made = call("create_event", title="Mine", start="2026-08-06T09:00:00Z", end="2026-08-06T10:00:00Z")
    assert not made.is_error and (made.structured_content or {}).get("organizer") == "p_1", made.text
    new_id = next(k for k in ("event_id", "id") if k in (made.structured_content or {}))
    mine = (made.structured_content or {})[new_id]
    assert not call("update_event", event_id=mine, title="Mine, moved").is_error
    assert call("respond_to_invitation", event_id=mine, response="accepted").error_class == "invalid_args"
    assert not call("respond_to_invitation", event_id="evt_1", response="accepted").is_error
    refused = call("respond_to_invitation", event_id="evt_2", response="accepted")
    assert refused.error_class == "business" and "not invited" in refused.text
