"""Free/busy and free slots (the calendar card), overdue cards, a board's contents and a card's members (the
task-board card): category behaviour, tried on small services written for these tests, not on our apps."""

from __future__ import annotations

from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec
from cworld.engine.rules.spans import free_slots, past_due, work_hours

STR: dict[str, Any] = {"type": "string"}
IDS: dict[str, Any] = {"type": "array", "items": STR}


def _tool(server: str, name: str, props: dict[str, Any], required: list[str]) -> ToolSpec:
    return ToolSpec(server=server, name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": required})


# --- the functions -----------------------------------------------------------------------------------------
def test_working_hours_are_the_local_day_in_utc_and_none_on_a_weekend() -> None:
    assert work_hours("2026-08-03", "America/New_York") == ["2026-08-03T13:00:00Z", "2026-08-03T21:00:00Z"]
    assert work_hours("2026-08-03", "Nowhere/Atlantis") == ["2026-08-03T09:00:00Z", "2026-08-03T17:00:00Z"]
    assert work_hours("2026-08-01", "Europe/Lisbon") is None  # a Saturday
    assert work_hours("not a day", "UTC") is None


def test_free_slots_are_the_gaps_on_the_half_hour_inside_every_window() -> None:
    windows = [["2026-08-03T09:00:00Z", "2026-08-03T12:00:00Z"], ["2026-08-03T10:15:00Z", "2026-08-03T17:00:00Z"]]
    busy = [["2026-08-03T11:00:00Z", "2026-08-03T11:30:00Z"]]
    assert free_slots(busy, windows, 30) == [["2026-08-03T10:30:00Z", "2026-08-03T11:00:00Z"],
                                             ["2026-08-03T11:30:00Z", "2026-08-03T12:00:00Z"]]
    assert free_slots(busy, windows, 60) == []
    assert free_slots([], [windows[0]], 60, after="2026-08-03T10:00:00Z") == [["2026-08-03T10:30:00Z",
                                                                              "2026-08-03T11:30:00Z"],
                                                                             ["2026-08-03T11:00:00Z",
                                                                              "2026-08-03T12:00:00Z"]]
    assert free_slots([], [windows[0], None], 30) == []  # someone's day off


def test_a_due_time_passed_on_something_not_done_is_overdue() -> None:
    now = "2026-08-01T09:00:00Z"
    assert past_due("2026-07-31T12:00", False, now) is True
    assert past_due("2026-07-31T12:00:00Z", True, now) is False
    assert past_due("2026-08-02T12:00:00Z", False, now) is False
    assert past_due(None, False, now) is False


# --- the calendar card -------------------------------------------------------------------------------------
def _team_calendar() -> Any:
    """A team calendar service: me in Lisbon, Ana in New York, Bo in Tokyo (the clock: Saturday 1 August)."""
    people = {"u_me": {"name": "Me", "timezone": "Europe/Lisbon"},
              "u_ana": {"name": "Ana", "timezone": "America/New_York"},
              "u_bo": {"name": "Bo", "timezone": "Asia/Tokyo"}}
    meetings = {
        "m_1": {"title": "1:1", "start": "2026-08-03T13:00:00Z", "end": "2026-08-03T14:00:00Z", "status": "confirmed",
                "organizer": "u_ana", "attendees": {}},
        "m_2": {"title": "Review", "start": "2026-08-03T14:30:00Z", "end": "2026-08-03T15:00:00Z",
                "status": "confirmed", "organizer": "u_bo", "attendees": {"u_me": "accepted"}},
        "m_3": {"title": "Old", "start": "2026-08-03T15:00:00Z", "end": "2026-08-03T15:30:00Z", "status": "cancelled",
                "organizer": "u_me", "attendees": {}},
        "m_4": {"title": "Maybe", "start": "2026-08-03T15:30:00Z", "end": "2026-08-03T16:00:00Z",
                "status": "confirmed", "organizer": "u_bo", "attendees": {"u_ana": "declined"}},
    }
    tools = [_tool("team-cal", "suggest_meeting_times", {"attendee_ids": IDS, "day": STR,
                                                         "duration": {"type": "integer"}}, ["attendee_ids", "day"]),
             _tool("team-cal", "query_free_busy", {"attendee_ids": IDS, "day": STR}, ["attendee_ids", "day"])
             .model_copy(update={"output_schema": {"type": "object", "properties": {"date": STR, "people": {
                 "type": "array", "items": {"type": "object"}}}}})]
    state = {"me": "u_me", "people": people, "meetings": meetings,
             "busy": {"u_ana": [["2026-08-03T16:00:00Z", "2026-08-03T16:30:00Z"]]}}
    return rules_caller("team-cal", "calendar", state, {"person": "people", "event": "meetings"}, tools)


def test_suggested_meeting_times_avoid_everyones_meetings_inside_their_working_hours() -> None:
    call = _team_calendar()
    answer = call("suggest_meeting_times", attendee_ids=["u_ana"], day="2026-08-03", duration=30)
    assert answer.meta.get("rule") == "family", answer.text
    starts = [s[0][11:16] for s in (answer.structured_content or {})["slots"]]
    # me 08:00-16:00 UTC, Ana 13:00-21:00 UTC: 13:00-14:00 Ana's 1:1, 14:30 my review, 16:00 is past my day;
    # a cancelled meeting and one Ana declined keep nobody busy
    assert starts == ["14:00", "15:00", "15:30"]
    assert call("suggest_meeting_times", attendee_ids=["u_ana"], day="2026-08-01").structured_content == {"slots": []}
    assert call("suggest_meeting_times", attendee_ids=["u_zed"], day="2026-08-03").error_class == "not_found"


def test_a_meeting_made_in_the_session_makes_its_slot_busy() -> None:
    tools = [_tool("team-cal", "find_free_slots", {"person_ids": IDS, "date": STR}, ["person_ids", "date"]),
             _tool("team-cal", "create_meeting", {"title": STR, "start": STR, "end": STR, "attendee_ids": IDS},
                   ["title", "start", "end"])]
    state = {"me": "u_me", "people": {"u_me": {"name": "Me", "timezone": "UTC"}}, "meetings": {}}
    call = rules_caller("team-cal", "calendar", state, {"person": "people", "event": "meetings"}, tools)
    first = (call("find_free_slots", person_ids=[], date="2026-08-03").structured_content or {})["slots"][0]
    assert first == ["2026-08-03T09:00:00Z", "2026-08-03T09:30:00Z"]
    made = call("create_meeting", title="Standup", start=first[0], end=first[1])
    assert not made.is_error, made.text
    after = (call("find_free_slots", person_ids=[], date="2026-08-03").structured_content or {})["slots"][0]
    assert after == ["2026-08-03T09:30:00Z", "2026-08-03T10:00:00Z"]


def test_free_busy_shows_when_each_person_is_busy_that_day_and_their_working_hours() -> None:
    call = _team_calendar()
    answer = call("query_free_busy", attendee_ids=["u_ana", "u_bo"], day="2026-08-03")
    assert answer.meta.get("rule") == "family", answer.text
    people = {p["person_id"]: p for p in (answer.structured_content or {})["people"]}
    assert people["u_ana"]["busy"] == [["2026-08-03T13:00:00Z", "2026-08-03T14:00:00Z"],
                                       ["2026-08-03T16:00:00Z", "2026-08-03T16:30:00Z"]]
    assert people["u_bo"]["busy"] == [["2026-08-03T14:30:00Z", "2026-08-03T15:00:00Z"],
                                      ["2026-08-03T15:30:00Z", "2026-08-03T16:00:00Z"]]
    assert people["u_bo"]["working_hours"] == ["2026-08-03T00:00:00Z", "2026-08-03T08:00:00Z"]
    assert call("query_free_busy", attendee_ids=["u_zed"], day="2026-08-03").error_class == "not_found"


# --- the task-board card -----------------------------------------------------------------------------------
def _team_board(**extra_tools: tuple[dict[str, Any], list[str]]) -> Any:
    """A small kanban service: one board with two columns, three tasks; I am a normal member, Dee an observer."""
    boards = {"b_1": {"name": "Launch", "roles": {"u_me": "normal", "u_kim": "admin", "u_dee": "observer"},
                      "labels": {"l_1": {"name": "urgent", "color": "red"}}}}
    lists = {"c_2": {"board_id": "b_1", "name": "Doing", "position": 2},
             "c_1": {"board_id": "b_1", "name": "To do", "position": 1}}
    tasks = {
        "t_1": {"board_id": "b_1", "list_id": "c_1", "title": "Late", "due": "2026-07-30T12:00:00Z",
                "due_complete": False, "members": [], "archived": False},
        "t_2": {"board_id": "b_1", "list_id": "c_1", "title": "Late but done", "due": "2026-07-30T12:00:00Z",
                "due_complete": True, "members": ["u_kim"], "archived": False},
        "t_3": {"board_id": "b_1", "list_id": "c_2", "title": "Later", "due": "2026-08-20T12:00:00Z",
                "due_complete": False, "members": [], "archived": True},
    }
    people = {"u_me": {"name": "Me"}, "u_kim": {"name": "Kim"}, "u_dee": {"name": "Dee"}, "u_out": {"name": "Out"}}
    tools = [_tool("kanban", name, props, required) for name, (props, required) in {
        "find_cards": ({"text": STR, "overdue_only": {"type": "boolean"}}, []),
        "show_card": ({"card_id": STR}, ["card_id"]),
        "get_board": ({"board_id": STR}, ["board_id"]),
        "add_card_member": ({"card_id": STR, "member_id": STR}, ["card_id", "member_id"]),
        **extra_tools}.items()]
    state = {"me": "u_me", "boards": boards, "columns": lists, "tasks": tasks, "people": people, "checklists": {},
             "comments": {}}
    kinds = {"board": "boards", "list": "columns", "card": "tasks", "member": "people", "checklist": "checklists",
             "comment": "comments"}
    return rules_caller("kanban", "task_board", state, kinds, tools), state


def test_an_overdue_only_search_finds_cards_past_due_and_not_done_and_every_card_says_whether() -> None:
    call, _ = _team_board()
    found = (call("find_cards", overdue_only=True).structured_content or {})
    assert [c["card_id"] for c in found["items"]] == ["t_1"], found
    assert found["items"][0]["overdue"] is True and found["items"][0]["list_name"] == "To do"
    every = {c["card_id"]: c["overdue"] for c in (call("find_cards").structured_content or {})["items"]}
    assert every == {"t_1": True, "t_2": False, "t_3": False}
    shown = call("show_card", card_id="t_1").structured_content or {}
    assert shown["overdue"] is True and shown["list_name"] == "To do" and shown["card_id"] == "t_1"


def test_a_board_is_read_with_its_lists_in_order_its_labels_and_its_members() -> None:
    call, _ = _team_board()
    board = call("get_board", board_id="b_1").structured_content or {}
    assert [(x["list_id"], x["name"], x["open_cards"]) for x in board["lists"]] == [("c_1", "To do", 2),
                                                                                   ("c_2", "Doing", 0)]
    assert board["labels"] == [{"label_id": "l_1", "name": "urgent", "color": "red"}]
    assert {(m["member_id"], m["name"], m["role"]) for m in board["members"]} == {
        ("u_me", "Me", "normal"), ("u_kim", "Kim", "admin"), ("u_dee", "Dee", "observer")}
    assert board["your_role"] == "normal"
    assert call("get_board", board_id="b_9").error_class == "not_found"


def test_a_board_that_pages_its_lists_shows_one_page_at_a_time() -> None:
    """A board read with `page_size` shows that many of its lists in position order, and says more remain."""
    paged = {"get_board_page": ({"board_id": STR, "page": {"type": "integer", "default": 1},
                                 "page_size": {"type": "integer", "default": 1}}, ["board_id"])}
    call, _ = _team_board(**paged)
    first = call("get_board_page", board_id="b_1").structured_content or {}
    second = call("get_board_page", board_id="b_1", page=2).structured_content or {}
    assert [x["list_id"] for x in first["lists"]] == ["c_1"] and first["has_more"] and first["total"] == 2
    assert [(x["list_id"], x["open_cards"]) for x in second["lists"]] == [("c_2", 0)] and not second["has_more"]


def test_a_member_joins_a_card_once_and_only_from_its_board() -> None:
    call, _ = _team_board()
    joined = call("add_card_member", card_id="t_2", member_id="u_me")
    assert (joined.structured_content or {}).get("members") == ["u_kim", "u_me"], joined.text  # added, not replaced
    again = call("add_card_member", card_id="t_2", member_id="u_me")
    assert (again.structured_content or {}).get("members") == ["u_kim", "u_me"]
    assert call("add_card_member", card_id="t_2", member_id="u_out").error_class == "not_found"


def test_an_observer_adds_no_member() -> None:
    call, state = _team_board()
    state["boards"]["b_1"]["roles"]["u_me"] = "observer"
    assert call("add_card_member", card_id="t_1", member_id="u_kim").error_class == "business"


def test_a_card_made_on_a_list_takes_its_board_and_a_place_and_keeps_its_due_time_as_utc() -> None:
    made_props = {"list_id": STR, "title": STR, "due": STR, "position": {"type": "string", "enum": ["top", "bottom"]}}
    call, state = _team_board(create_card=(made_props, ["list_id", "title"]),
                              set_due_date=({"card_id": STR, "due": STR}, ["card_id", "due"]))
    state["tasks"]["t_1"]["position"], state["tasks"]["t_2"]["position"] = 1.0, 2.0
    bottom = call("create_card", list_id="c_1", title="Next", due="2026-08-17T17:00")
    assert not bottom.is_error, bottom.text
    top = call("create_card", list_id="c_1", title="First", position="top")
    empty = call("create_card", list_id="c_2", title="Alone")
    made = {r["title"]: r for r in (c.structured_content or {} for c in (bottom, top, empty))}
    assert (made["Next"]["board_id"], made["Next"]["position"], made["Next"]["due"]) == ("b_1", 3.0,
                                                                                        "2026-08-17T17:00:00Z")
    assert made["First"]["position"] == 0.0 and made["Alone"]["position"] == 1.0
    moved = call("set_due_date", card_id="t_1", due="2026-09-01T08:30")
    assert (moved.structured_content or {}).get("due") == "2026-09-01T08:30:00Z", moved.text
    assert call("set_due_date", card_id="t_1", due="soon").error_class == "invalid_args"


def test_a_checklists_items_are_kept_as_items_not_yet_done() -> None:
    call, state = _team_board(add_checklist=({"card_id": STR, "title": STR, "items": IDS}, ["card_id", "title"]))
    made = call("add_checklist", card_id="t_1", title="Steps", items=["Draft", "Send"])
    assert not made.is_error, made.text
    key = next(iter(state["checklists"]), None) or (made.structured_content or {}).get("checklist_id")
    assert (made.structured_content or {}).get("items") == [{"item_id": f"{key}.1", "text": "Draft", "done": False},
                                                            {"item_id": f"{key}.2", "text": "Send", "done": False}]


def test_on_a_board_an_observer_neither_makes_cards_nor_sets_due_dates() -> None:
    call, state = _team_board(create_card=({"list_id": STR, "title": STR}, ["list_id", "title"]),
                              mark_due_complete=({"card_id": STR}, ["card_id"]))
    state["boards"]["b_1"]["roles"]["u_me"] = "observer"
    assert call("create_card", list_id="c_1", title="No").error_class == "business"
    assert call("mark_due_complete", card_id="t_1").error_class == "business"


def test_only_the_organizer_cancels_an_event_and_a_read_only_calendar_takes_none() -> None:
    tools = [_tool("team-cal", "cancel_meeting", {"event_id": STR}, ["event_id"]),
             _tool("team-cal", "create_meeting", {"title": STR, "start": STR, "end": STR, "calendar_id": STR},
                   ["title", "start", "end"])]
    meetings = {"m_1": {"title": "Mine", "start": "2026-08-03T09:00:00Z", "end": "2026-08-03T10:00:00Z",
                        "status": "confirmed", "organizer": "u_me", "attendees": {}},
                "m_2": {"title": "Theirs", "start": "2026-08-03T11:00:00Z", "end": "2026-08-03T12:00:00Z",
                        "status": "confirmed", "organizer": "u_ana", "attendees": {"u_me": "accepted"}}}
    state = {"me": "u_me", "people": {"u_me": {"name": "Me"}, "u_ana": {"name": "Ana"}}, "meetings": meetings,
             "calendars": {"c_mine": {"name": "Mine", "writable": True}, "c_hol": {"name": "Holidays", "writable": False}}}
    call = rules_caller("team-cal", "calendar", state, {"person": "people", "event": "meetings", "calendar": "calendars"},
                        tools)
    assert call("cancel_meeting", event_id="m_2").error_class == "business"  # Ana organizes it
    assert (call("cancel_meeting", event_id="m_1").structured_content or {}).get("status") == "cancelled"
    assert call("cancel_meeting", event_id="m_1").error_class == "business"  # already cancelled
    assert call("create_meeting", title="Off", start="2026-08-04T09:00", end="2026-08-04T10:00",
                calendar_id="c_hol").error_class == "business"
    assert not call("create_meeting", title="On", start="2026-08-04T09:00", end="2026-08-04T10:00",
                    calendar_id="c_mine").is_error


def test_an_answer_is_kept_in_the_attendees_answers_and_a_new_invitee_has_not_answered() -> None:
    tools = [_tool("team-cal", "respond_to_invite", {"event_id": STR, "response": STR}, ["event_id", "response"]),
             _tool("team-cal", "invite_attendees", {"event_id": STR, "person_ids": IDS}, ["event_id", "person_ids"])]
    meetings = {"m_1": {"title": "Mine", "start": "2026-08-03T09:00:00Z", "end": "2026-08-03T10:00:00Z",
                        "status": "confirmed", "organizer": "u_me", "attendees": {"u_ana": "accepted"}},
                "m_2": {"title": "Theirs", "start": "2026-08-03T11:00:00Z", "end": "2026-08-03T12:00:00Z",
                        "status": "confirmed", "organizer": "u_ana", "attendees": {"u_me": "needsAction"}}}
    state = {"me": "u_me", "people": {"u_me": {"name": "Me"}, "u_ana": {"name": "Ana"}, "u_bo": {"name": "Bo"}},
             "meetings": meetings}
    call = rules_caller("team-cal", "calendar", state, {"person": "people", "event": "meetings"}, tools)
    invited = call("invite_attendees", event_id="m_1", person_ids=["u_bo"])  # spelled as the world spells it
    assert (invited.structured_content or {}).get("attendees") == {"u_ana": "accepted", "u_bo": "needsAction"}
    answered = call("respond_to_invite", event_id="m_2", response="yes")
    assert (answered.structured_content or {}).get("attendees") == {"u_me": "accepted"}, answered.text
    assert call("invite_attendees", event_id="m_2", person_ids=["u_bo"]).error_class == "business"  # Ana organizes


def test_an_event_moved_by_one_end_still_ends_after_it_starts() -> None:
    tools = [_tool("team-cal", "reschedule_meeting", {"event_id": STR, "start": STR, "end": STR}, ["event_id"])]
    meetings = {"m_1": {"title": "Mine", "start": "2026-08-03T09:00:00Z", "end": "2026-08-03T10:00:00Z",
                        "status": "confirmed", "organizer": "u_me", "attendees": {}}}
    state = {"me": "u_me", "people": {"u_me": {"name": "Me"}}, "meetings": meetings}
    call = rules_caller("team-cal", "calendar", state, {"person": "people", "event": "meetings"}, tools)
    assert call("reschedule_meeting", event_id="m_1", start="2026-08-03T11:00").error_class == "invalid_args"
    assert call("reschedule_meeting", event_id="m_1", end="2026-08-03T08:00").error_class == "invalid_args"
    moved = call("reschedule_meeting", event_id="m_1", end="2026-08-03T09:30:00Z")
    assert (moved.structured_content or {}).get("end") == "2026-08-03T09:30:00Z", moved.text


def test_a_value_outside_the_list_a_description_gives_is_refused() -> None:
    from cworld.engine.rules.formats import documented_values, format_error

    schema = {"properties": {"color": {"type": "string", "description": "one of red, orange or blue"}}}
    assert documented_values(schema["properties"]["color"]) == ["red", "orange", "blue"]
    assert format_error(schema, {"color": "Blue"}) is None
    assert "not one of red, orange, blue" in (format_error(schema, {"color": "teal"}) or "")
    assert documented_values({"description": "one of the ids list_boards gives"}) == []


def test_labels_are_made_on_their_board_and_go_on_its_cards_only() -> None:
    label_props = {"board_id": STR, "title": STR,
                   "color": {"type": "string", "default": "blue", "description": "one of red, green, blue"}}
    call, state = _team_board(create_label=(label_props, ["board_id", "title"]),
                              add_label=({"card_id": STR, "label_id": STR}, ["card_id", "label_id"]))
    made = call("create_label", board_id="b_1", title="backend")
    assert (made.structured_content or {}) == {"label_id": "l_2", "name": "backend", "color": "blue"}, made.text
    assert state["boards"]["b_1"]["labels"]["l_1"]["name"] == "urgent"  # the seed's world is not written
    assert call("create_label", board_id="b_1", title="Urgent").error_class == "business"  # names are unique
    assert call("create_label", board_id="b_1", title="x", color="teal").error_class == "invalid_args"
    labelled = call("add_label", card_id="t_1", label_id="l_2")
    assert (labelled.structured_content or {}).get("labels") == ["l_2"], labelled.text
    assert call("add_label", card_id="t_1", label_id="l_9").error_class == "not_found"


def test_a_list_is_added_at_the_right_end_and_a_card_moves_within_its_board() -> None:
    call, state = _team_board(create_list=({"board_id": STR, "title": STR}, ["board_id", "title"]),
                              move_card=({"card_id": STR, "list_id": STR}, ["card_id", "list_id"]))
    state["boards"]["b_2"] = {"name": "Other", "roles": {"u_me": "normal"}, "labels": {}}
    state["columns"]["c_9"] = {"board_id": "b_2", "name": "Elsewhere", "position": 1}
    state["tasks"]["t_1"]["position"], state["tasks"]["t_2"]["position"] = 1.0, 2.0
    made = call("create_list", board_id="b_1", title="Done")
    assert (made.structured_content or {}).get("position") == 3, made.text
    moved = call("move_card", card_id="t_2", list_id="c_2")
    assert (moved.structured_content or {}).get("list_id") == "c_2" and moved.structured_content["position"] == 1.0
    assert call("move_card", card_id="t_1", list_id="c_9").error_class == "invalid_args"


def test_a_checklist_item_is_ticked_on_its_own_card() -> None:
    call, state = _team_board(set_checklist_item=({"card_id": STR, "item_id": STR, "done": {"type": "boolean"}},
                                                  ["card_id", "item_id"]))
    state["checklists"]["k_1"] = {"card_id": "t_1", "name": "Steps",
                                  "items": [{"item_id": "k_1.1", "text": "Draft", "done": False}]}
    ticked = call("set_checklist_item", card_id="t_1", item_id="k_1.1")
    assert (ticked.structured_content or {}).get("items") == [{"item_id": "k_1.1", "text": "Draft", "done": True}]
    assert call("set_checklist_item", card_id="t_2", item_id="k_1.1").error_class == "not_found"  # another card's


def test_an_ids_schema_default_is_an_alias_and_an_enum_holds_no_ids() -> None:
    tools = [_tool("team-cal", "get_meeting", {"event_id": STR, "calendarId": {"type": "string", "default": "primary"},
                                               "detail": {"type": "string", "enum": ["short", "full"], "default": "full",
                                                          "description": "short: calendar ids only; full: all"}},
                   ["event_id"])]
    meetings = {"m_1": {"title": "Mine", "start": "2026-08-03T09:00:00Z", "end": "2026-08-03T10:00:00Z",
                        "status": "confirmed", "organizer": "u_me", "attendees": {}}}
    state = {"me": "u_me", "people": {"u_me": {"name": "Me"}}, "meetings": meetings, "calendars": {"c_1": {"name": "C"}}}
    call = rules_caller("team-cal", "calendar", state, {"person": "people", "event": "meetings", "calendar": "calendars"},
                        tools)
    found = call("get_meeting", event_id="m_1")
    assert not found.is_error, found.text  # neither 'primary' nor 'full' is looked up as a calendar
    assert call("get_meeting", event_id="m_1", calendarId="c_9").error_class == "not_found"


def test_people_invited_as_an_event_is_made_have_not_answered_yet() -> None:
    tools = [_tool("team-cal", "schedule_meeting", {"title": STR, "start": STR, "end": STR, "attendee_ids": IDS},
                   ["title", "start", "end"])]
    meetings = {"m_1": {"title": "Old", "start": "2026-08-03T09:00:00Z", "end": "2026-08-03T10:00:00Z",
                        "status": "confirmed", "organizer": "u_ana", "attendees": {"u_me": "needs_action"}}}
    state = {"me": "u_me", "people": {"u_me": {"name": "Me"}, "u_ana": {"name": "Ana"}}, "meetings": meetings,
             "calendars": {"c_1": {"name": "Mine", "writable": True}}}
    call = rules_caller("team-cal", "calendar", state, {"person": "people", "event": "meetings", "calendar": "calendars"},
                        tools)
    made = call("schedule_meeting", title="Plan", start="2026-08-04T09:00", end="2026-08-04T10:00",
                attendee_ids=["u_ana"])
    assert (made.structured_content or {}).get("attendees") == {"u_ana": "needs_action"}, made.text


def test_a_new_due_time_clears_the_mark_and_is_given_in_the_documented_form() -> None:
    due = {"anyOf": [{"type": "string", "description": "due time as YYYY-MM-DDTHH:MM (UTC)"}, {"type": "null"}],
           "description": "new due time; null removes it"}
    call, state = _team_board(set_due_date=({"card_id": STR, "due": due}, ["card_id", "due"]),
                              add_comment=({"card_id": STR, "text": STR}, ["card_id", "text"]))
    moved = call("set_due_date", card_id="t_2", due="2026-09-01T08:30")
    assert (moved.structured_content or {}).get("due_complete") is False, moved.text  # t_2 was done
    assert call("set_due_date", card_id="t_2", due="2026-09-01").error_class == "invalid_args"  # a date, no time
    state["boards"]["b_1"]["roles"]["u_me"] = "observer"
    assert call("add_comment", card_id="t_1", text="hi").error_class == "business"
