"""The format checkers must catch each rule they claim to check: a checker that passes everything proves
nothing."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cworld.export import check_openai_file, check_openai_record, check_sharegpt_record

GOOD: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Find the audit email."},
        {
            "role": "assistant",
            "content": "Searching.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "mail__search_messages", "arguments": '{"query": "audit"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"messages": []}'},
        {"role": "assistant", "content": "Nothing found.", "weight": 1},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "mail__search_messages",
                "description": "Search mail",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ],
}


def broken(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    record = copy.deepcopy(GOOD)
    change(record)
    return record


def test_a_valid_record_passes() -> None:
    assert check_openai_record(GOOD) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda r: r["messages"][1].update(role="human"), "role 'human'"),
        (lambda r: r["messages"].pop(3), "no tool message right after it"),
        (lambda r: r["messages"][3].update(tool_call_id="call_9"), "which no open assistant tool call has"),
        (
            lambda r: r["messages"][2]["tool_calls"][0]["function"].update(arguments={"query": "audit"}),
            "arguments must be a JSON string",
        ),
        (
            lambda r: r["messages"][2]["tool_calls"][0]["function"].update(arguments="{query: audit"),
            "not valid JSON",
        ),
        (
            lambda r: r["messages"][2]["tool_calls"][0]["function"].update(name="mail/search_messages"),
            "does not match",
        ),
        (
            lambda r: r["messages"][2]["tool_calls"][0]["function"].update(name="mail__send"),
            "not declared in tools",
        ),
        (lambda r: r["tools"][0]["function"].update(name="a" * 65), "does not match"),
        (lambda r: r["tools"].append(copy.deepcopy(r["tools"][0])), "declared twice"),
        (lambda r: r["messages"][4].update(weight=2), "weight must be 0 or 1"),
        (lambda r: r["messages"][1].update(weight=0), "key 'weight' not allowed"),
        (lambda r: r.update(messages=r["messages"][:2]), "no assistant message"),
        (
            lambda r: [m.update(weight=0) for m in r["messages"] if m["role"] == "assistant"],
            "nothing to train on",
        ),
        (lambda r: r["messages"][1].update(content=""), "non-empty string content"),
        (lambda r: r["messages"].insert(2, {"role": "system", "content": "late"}), "must come first"),
        (lambda r: r["messages"][4].pop("content"), "needs content or tool_calls"),
        (lambda r: r.update(extra=1), "unknown top-level key"),
        (lambda r: r["messages"].insert(4, copy.deepcopy(r["messages"][2])), "used twice"),
        (
            lambda r: r["messages"].insert(3, {"role": "user", "content": "wait"}),
            "no tool message right after it",
        ),
    ],
)
def test_each_openai_rule_is_enforced(change: Callable[[dict[str, Any]], None], expected: str) -> None:
    problems = check_openai_record(broken(change))
    assert any(expected in p for p in problems), problems


def test_file_checker_reports_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps(GOOD) + "\n{not json\n" + json.dumps({"messages": []}) + "\n")
    problems = check_openai_file(path)
    assert problems[0].startswith("line 2: not JSON")
    assert problems[1].startswith("line 3: missing or empty 'messages'")


SHAREGPT: dict[str, Any] = {
    "conversations": [
        {"from": "human", "value": "Find the audit email."},
        {
            "from": "function_call",
            "value": json.dumps({"name": "mail__search_messages", "arguments": {"query": "x"}}),
        },
        {"from": "observation", "value": "[]"},
        {"from": "gpt", "value": "Nothing found."},
    ],
    "system": "You are helpful.",
    "tools": json.dumps([{"name": "mail__search_messages", "description": "Search", "parameters": {}}]),
}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda r: r["conversations"].pop(), "even, non-zero count"),
        (
            lambda r: r["conversations"].insert(1, {"from": "gpt", "value": "thinking"}),
            "expects human or observation",
        ),
        (lambda r: r["conversations"][1].update(value="not json"), "not JSON"),
        (
            lambda r: r["conversations"][1].update(value=json.dumps({"name": "other", "arguments": {}})),
            "not a declared",
        ),
        (
            lambda r: r["conversations"][1].update(
                value=json.dumps({"name": "mail__search_messages", "arguments": "{}"})
            ),
            "arguments: object",
        ),
        (lambda r: r.update(tools=[{"name": "x"}]), "JSON string"),
        (lambda r: r["conversations"][2].update({"from": "human"}), "answered by an observation"),
    ],
)
def test_each_sharegpt_rule_is_enforced(change: Callable[[dict[str, Any]], None], expected: str) -> None:
    assert check_sharegpt_record(SHAREGPT) == []
    record = copy.deepcopy(SHAREGPT)
    change(record)
    problems = check_sharegpt_record(record)
    assert any(expected in p for p in problems), problems
