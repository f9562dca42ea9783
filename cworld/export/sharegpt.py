"""The `sharegpt` format, as LLaMA-Factory reads it (`formatting: sharegpt` with a `tools` column).

    {"conversations": [{"from": "human", "value": "..."},
                       {"from": "function_call",
                        "value": "{\\"name\\": \\"mail__search_messages\\", \\"arguments\\": {...}}"},
                       {"from": "observation", "value": "..."},
                       {"from": "gpt", "value": "final answer"}],
     "system": "...", "tools": "[{\\"name\\": ..., \\"description\\": ..., \\"parameters\\": {...}}]"}

LLaMA-Factory drops an example whose turns do not alternate (human/observation at odd places,
gpt/function_call at even ones) or whose count is odd. So: consecutive user messages are joined; a user
message that arrives right after a tool result is appended to that observation (`[user] ...`); a call
turn carries no thought (a function_call value is the call only); trailing human/observation turns are
dropped. `check_sharegpt_record` checks exactly those rules.

dataset_info.json entry for the file:
    {"file_name": "FILE.jsonl", "formatting": "sharegpt",
     "columns": {"messages": "conversations", "system": "system", "tools": "tools"}}
"""

from __future__ import annotations

import json
from typing import Any

from cworld.data_model.tool_names import FUNCTION_NAME
from cworld.export.conversation import Conversation, Turn

ODD = ("human", "observation")
EVEN = ("gpt", "function_call")
DATASET_INFO = {
    "formatting": "sharegpt",
    "columns": {"messages": "conversations", "system": "system", "tools": "tools"},
}


def sharegpt_record(conversation: Conversation) -> dict[str, Any]:
    system = next((t.content for t in conversation.turns if t.role == "system"), "")
    turns: list[dict[str, str]] = []
    for turn in conversation.turns:
        if turn.role != "system":
            _append(turns, turn)
    while turns and turns[-1]["from"] in ODD:
        turns.pop()
    return {
        "conversations": turns,
        "system": system,
        "tools": json.dumps(conversation.tools, ensure_ascii=False),
    }


def _append(turns: list[dict[str, str]], turn: Turn) -> None:
    last = turns[-1]["from"] if turns else None
    if turn.role == "user":
        if last == "human":
            turns[-1]["value"] += "\n\n" + turn.content
        elif last == "observation":
            turns[-1]["value"] += f"\n\n[user] {turn.content}"
        else:
            turns.append({"from": "human", "value": turn.content})
    elif turn.role == "tool":
        if last == "observation":  # answers to one turn's several calls share one observation
            turns[-1]["value"] += "\n\n" + turn.content
        else:
            turns.append({"from": "observation", "value": turn.content})
    elif turn.calls:
        calls = [{"name": c.name, "arguments": c.arguments} for c in turn.calls]
        value = calls[0] if len(calls) == 1 else calls
        turns.append({"from": "function_call", "value": json.dumps(value, ensure_ascii=False)})
    else:
        turns.append({"from": "gpt", "value": turn.content})


def check_sharegpt_record(record: Any) -> list[str]:
    """What LLaMA-Factory would reject (or misread) in one example; [] when it is fine."""
    if not isinstance(record, dict) or not isinstance(record.get("conversations"), list):
        return ["an example must be an object with a 'conversations' list"]
    names, problems = _tool_names(record.get("tools"))
    if not isinstance(record.get("system", ""), str):
        problems.append("'system' must be a string")
    turns = record["conversations"]
    if not turns or len(turns) % 2:
        problems.append(f"{len(turns)} turns: LLaMA-Factory needs an even, non-zero count")
    for i, turn in enumerate(turns):
        problems += [f"conversations[{i}]: {p}" for p in _check_turn(turn, i, names)]
        nxt = turns[i + 1] if i + 1 < len(turns) else None
        if (
            isinstance(turn, dict)
            and turn.get("from") == "function_call"
            and nxt is not None
            and nxt.get("from") != "observation"
        ):
            problems.append(f"conversations[{i}]: a function_call must be answered by an observation")
    return problems


def _tool_names(tools: Any) -> tuple[set[str], list[str]]:
    try:
        parsed = json.loads(tools) if isinstance(tools, str) else None
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, list):
        return set(), ["'tools' must be a JSON string holding a list of functions"]
    problems = [
        f"tools[{i}]: needs name, description and parameters"
        for i, f in enumerate(parsed)
        if not (
            isinstance(f, dict)
            and isinstance(f.get("name"), str)
            and "parameters" in f
            and isinstance(f.get("description"), str)
        )
    ]
    return {f["name"] for f in parsed if isinstance(f, dict) and isinstance(f.get("name"), str)}, problems


def _check_turn(turn: Any, index: int, names: set[str]) -> list[str]:
    if not isinstance(turn, dict) or not isinstance(turn.get("value"), str):
        return ["a turn must be {from, value: string}"]
    expected = ODD if index % 2 == 0 else EVEN
    if turn.get("from") not in expected:
        return [f"'{turn.get('from')}' where LLaMA-Factory expects {' or '.join(expected)}"]
    if turn["from"] != "function_call":
        return []
    try:
        value = json.loads(turn["value"])
    except json.JSONDecodeError:
        return ["function_call value is not JSON"]
    problems: list[str] = []
    for call in value if isinstance(value, list) else [value]:
        if not isinstance(call, dict) or not isinstance(call.get("arguments"), dict):
            problems.append("function_call value must be {name, arguments: object} (or a list of them)")
            continue
        name = call.get("name")
        if not isinstance(name, str) or not FUNCTION_NAME.match(name) or name not in names:
            problems.append(f"function {name!r} is not a declared tool")
    return problems
