"""The heuristic agents read what a request dictates, decides and picks (issue 34: a non-privileged agent
solves goal-shape tasks from the request alone): a record's dictated title and text, named values, a
condition to check before choosing a branch, a rule that picks one record among those listed."""

from __future__ import annotations

import json
from typing import Any

from cworld.agents import make_agent
from cworld.agents.base import Observation
from cworld.agents.fill import FillContext, Record, dictation, fill, ruled
from cworld.agents.intents import Rule, intents_of
from cworld.agents.toolbox import Toolbox
from cworld.data_model import Task, ToolCall, ToolResult, ToolSpec
from cworld.data_model.tools import ToolAnnotations

CONDITIONAL = ("I'm following up on an open item. Look at the activity 'Call with Thomas' in our CRM: when its kind "
               "is 'call', add a note to the event 'Interview' in my calendar; if not, open a new item in our ledger "
               "about it. (rate '92', titled \"Follow-up: Call with Thomas\", saying \"Follow-up on Call with Thomas: "
               "its kind is note. Done; checked.\")")


def tool(server: str, name: str, props: dict[str, Any], required: list[str], *, read: bool = False) -> ToolSpec:
    return ToolSpec(server=server, name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": required},
                    annotations=ToolAnnotations(read_only_hint=read))


def test_a_dictated_text_is_one_clause_and_a_trailing_dictation_goes_to_the_write_before_it():
    intents = intents_of(CONDITIONAL)
    assert [i.text.split()[0] for i in intents] == ["Look", "when", "if"]  # the purpose sentence is background
    last = intents[-1]
    assert last.facts.titled == ["Follow-up: Call with Thomas"]
    assert last.facts.saying == ["Follow-up on Call with Thomas: its kind is note. Done; checked."]
    assert last.facts.fields["rate"] == "92" and "Follow-up" not in " ".join(last.facts.quoted)
    report = intents_of("Count the course records whose state is 'ACTIVE', then post the count in our documents as a "
                        "doc, and tell me the number. (titled \"Course count\", saying \"5 courses.\")")
    assert report[-1].text.startswith("post the count") and report[-1].facts.saying == ["5 courses."]


def test_conditions_and_rules_are_read_off_the_clauses():
    when, otherwise = intents_of(CONDITIONAL)[1:]
    assert (when.condition.field, when.condition.value, when.condition.otherwise) == ("kind", "call", False)
    assert otherwise.condition.otherwise and when.facts.saying == otherwise.facts.saying  # either branch writes it
    cleanup = intents_of("Clean up my inbox: delete the thread with the earliest last date, then let people know "
                         "with a post in our social account.")
    assert cleanup[0].text.startswith("Clean up my inbox: delete") and cleanup[0].rule == Rule("last date", False)
    budget = intents_of("I can spend at most 26.99 (price). Pick the product in the store that fits.")
    assert budget[0].rule == Rule("price", False, 26.99)


def test_dictated_values_fill_the_write_even_where_optional():
    write = tool("ledger", "create_item", {"name": {"type": "string"}, "description": {"type": "string"},
                                           "rate": {"type": "integer"}, "due_date": {"type": "string"}}, ["name"])
    intent = intents_of("Open a new item in our ledger about it. (due date 2026-07-18, rate '92', titled \"Follow-up\", "
                        "saying \"Noted.\")")[0]
    assert dictation(write, intent.facts) == {"name": "Follow-up", "description": "Noted.", "rate": "92",
                                              "due_date": "2026-07-18"}
    args, missing = fill(write, intent, FillContext([], intent.facts))
    assert args == {"name": "Follow-up", "description": "Noted.", "rate": 92, "due_date": "2026-07-18"} and not missing


def test_a_stated_rule_picks_the_record():
    items = [{"id": "a", "created_at": "2026-03-02", "priority": 2, "price": 30.0},
             {"id": "b", "created_at": "2026-01-09", "priority": 5, "price": 19.5},
             {"id": "c", "created_at": "2026-02-11", "priority": 1, "price": 12.0}]
    assert ruled(items, Rule("created at", False)) == 1
    assert ruled(items, Rule("priority", True)) == 1
    assert ruled(items, Rule("price", False, 20.0)) == 1  # the dearest within the limit
    assert ruled(items, Rule("rating", True)) is None


async def play(query: str, tools: list[ToolSpec], answers: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Run heuristic:careful on a toy toolbox whose tools answer from `answers`; the calls it made."""
    task = Task(id="t", query=query, tools=[t.id for t in tools])
    box = Toolbox({t.id: t for t in tools}, task, "full", distractors=0)
    await box.prepare()
    agent = make_agent("heuristic:careful")
    await agent.reset(task, box, seed=0)
    calls: list[tuple[str, dict[str, Any]]] = []
    observation = Observation(turn=0)
    for turn in range(1, 20):
        action = await agent.act(observation)
        if action.kind == "final":
            return calls
        if action.kind != "tool" or action.tool is None:  # a search finds nothing more; a message waits
            answer = {"tools": []}
            observation = Observation(turn=turn, result=ToolResult(structured_content=answer))
            continue
        call = ToolCall(id=action.call_id, tool=action.tool, arguments=action.arguments)
        calls.append((call.tool, call.arguments))
        answer = answers.get(call.tool, {"ok": True})
        observation = Observation(turn=turn, call=call, result=ToolResult(
            content=[{"type": "text", "text": json.dumps(answer)}], structured_content=answer))
    return calls


async def test_a_conditional_request_takes_the_branch_the_record_calls_for():
    tools = [tool("crm", "list_activities", {}, [], read=True),
             tool("calendar", "add_event_note", {"event_id": {"type": "string"}, "note": {"type": "string"}},
                  ["event_id", "note"]),
             tool("ledger", "create_item", {"name": {"type": "string"}, "description": {"type": "string"},
                                            "rate": {"type": "integer"}}, ["name", "rate"])]
    listed = {"items": [{"id": "a1", "kind": "note", "summary": "Call with Thomas"},
                        {"id": "a2", "kind": "call", "summary": "Call with Robin"}]}
    calls = await play(CONDITIONAL, tools, {"crm/list_activities": listed})
    writes = [c for c in calls if c[0] != "crm/list_activities"]
    assert writes == [("ledger/create_item", {"name": "Follow-up: Call with Thomas", "rate": 92, "description":
                                              "Follow-up on Call with Thomas: its kind is note. Done; checked."})]


async def test_a_write_on_a_picked_record_lists_its_kind_first_and_takes_the_one_the_rule_picks():
    tools = [tool("mail", "list_threads", {}, []),  # no read-only hint, as many harvested servers declare none
             tool("mail", "delete_thread", {"thread_id": {"type": "string"}}, ["thread_id"])]
    listed = {"items": [{"thread_id": "t1", "subject": "Lunch", "last_date": "2026-04-02"},
                        {"thread_id": "t2", "subject": "Invoice", "last_date": "2026-01-20"}]}
    calls = await play("Clean up my email: delete the thread with the earliest last date.", tools,
                       {"mail/list_threads": listed})
    assert calls == [("mail/list_threads", {}), ("mail/delete_thread", {"thread_id": "t2"})]


async def test_a_report_counts_what_the_request_asks_about_and_writes_the_number_into_the_dictated_text():
    tools = [tool("cloud", "list_projects", {}, [], read=True),
             tool("docs", "create_doc", {"name": {"type": "string"}, "content": {"type": "string"}}, ["name"])]
    listed = {"items": [{"id": "p1", "name": "Portal", "state": "ACTIVE"}, {"id": "p2", "name": "App", "state": "DONE"},
                        {"id": "p3", "name": "Site", "state": "active"}]}
    query = ("How many project records in the cloud console have state 'ACTIVE'? Post the count in our documents as a "
             "doc, and tell me the number. (titled \"Project count\", saying \"N project record(s) are active.\", "
             "with N the number)")
    calls = await play(query, tools, {"cloud/list_projects": listed})
    assert calls[-1] == ("docs/create_doc", {"name": "Project count", "content": "2 project record(s) are active."})


async def test_a_listing_that_lacks_the_id_is_not_asked_again():
    tools = [tool("mail", "list_threads", {}, []),
             tool("mail", "delete_thread", {"thread_id": {"type": "string"}}, ["thread_id"])]
    calls = await play("Clean up my email: delete the thread with the earliest last date.", tools,
                       {"mail/list_threads": {"items": [{"subject": "Lunch", "last_date": "2026-04-02"}]}})
    assert [c[0] for c in calls].count("mail/list_threads") == 1


async def test_what_the_rule_picked_and_what_a_read_found_go_into_the_dictated_text():
    """The request says X for the record its rule picks and V for the value a condition reads (it never
    names them): the agent writes the name it picked and the value it read."""
    tools = [tool("mail", "list_threads", {}, [], read=True),
             tool("mail", "delete_thread", {"thread_id": {"type": "string"}}, ["thread_id"]),
             tool("chat", "send_message", {"text": {"type": "string"}}, ["text"])]
    listed = {"items": [{"thread_id": "t1", "subject": "Lunch", "last_date": "2026-04-02"},
                        {"thread_id": "t2", "subject": "Invoice", "last_date": "2026-01-20"}]}
    query = ("Clean up my email: delete the thread with the earliest last date, then let people know with a message "
             "in the team chat. (saying \"Removed from my email: X.\", with X the name of what the rule picks)")
    calls = await play(query, tools, {"mail/list_threads": listed})
    assert calls[-1] == ("chat/send_message", {"text": "Removed from my email: Invoice."})
    intent = intents_of("Note it. (saying \"Its state is V.\", with V the state you find)")[0]
    found = [Record("crm/get_deal", {"deal": {"id": "d1", "name": "Big", "state": "won"}})]
    write = tool("crm", "add_note", {"text": {"type": "string"}}, ["text"])
    assert fill(write, intent, FillContext(found, intent.facts))[0] == {"text": "Its state is won."}
