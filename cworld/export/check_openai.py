"""A checker for chat fine-tuning files, written from OpenAI's published format rules.

Sources: the fine-tuning guide (chat format with `messages`, optional `tools`; function-calling
examples with `tool_calls` and `tool` messages; `weight` 0/1 on assistant messages), the cookbook's
data-preparation checks (a dict per line, a `messages` list, known roles and keys, textual content, at
least one assistant message) and the Chat Completions reference (function names match
`^[a-zA-Z0-9_-]{1,64}$`, `arguments` is a JSON string, each `tool` message answers a `tool_call_id`).
One rule is ours and stricter than the service: every called function must be declared in `tools`.

    problems = check_openai_file(path)    # [] when the file is valid; else "line N: what is wrong"
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cworld.data_model.tool_names import FUNCTION_NAME

ROLES = ("system", "user", "assistant", "tool")
KEYS: dict[str, set[str]] = {
    "system": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "weight", "refusal"},
    "tool": {"role", "content", "tool_call_id"},
}
TOP_KEYS = {"messages", "tools", "parallel_tool_calls"}


def check_openai_file(path: Path) -> list[str]:
    problems: list[str] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"line {lineno}: not JSON ({exc.msg})")
            continue
        problems += [f"line {lineno}: {p}" for p in check_openai_record(record)]
    return problems


def check_openai_record(record: Any) -> list[str]:
    if not isinstance(record, dict):
        return ["an example must be a JSON object"]
    problems = [f"unknown top-level key {k!r}" for k in sorted(set(record) - TOP_KEYS)]
    messages = record.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "missing or empty 'messages' list"]
    declared, tool_problems = _declared_tools(record.get("tools"))
    problems += tool_problems
    problems += _check_messages(messages, declared)
    return problems


def _declared_tools(tools: Any) -> tuple[set[str] | None, list[str]]:
    if tools is None:
        return None, []
    if not isinstance(tools, list):
        return set(), ["'tools' must be a list"]
    names: set[str] = set()
    problems: list[str] = []
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
            problems.append(f"tools[{i}]: must be {{type: function, function: {{...}}}}")
            continue
        name = function.get("name")
        if not isinstance(name, str) or not FUNCTION_NAME.match(name):
            problems.append(f"tools[{i}]: function name {name!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$")
        elif name in names:
            problems.append(f"tools[{i}]: function {name!r} declared twice")
        names.add(str(name))
        parameters = function.get("parameters")
        if parameters is not None and (
            not isinstance(parameters, dict) or parameters.get("type", "object") != "object"
        ):
            problems.append(f"tools[{i}]: parameters must be a JSON Schema object")
        if "description" in function and not isinstance(function["description"], str):
            problems.append(f"tools[{i}]: description must be a string")
    return names, problems


def _check_messages(messages: list[Any], declared: set[str] | None) -> list[str]:
    problems: list[str] = []
    pending: dict[str, str] = {}
    answered: set[str] = set()
    learnable = 0
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            role = message.get("role") if isinstance(message, dict) else None
            problems.append(f"{where}: role {role!r} is not one of {', '.join(ROLES)}")
            continue
        role = message["role"]
        problems += [
            f"{where}: key {k!r} not allowed on a {role} message" for k in sorted(set(message) - KEYS[role])
        ]
        if role == "assistant":
            problems += [f"{where}: {p}" for p in _unanswered(pending)]
            pending = {}
            problems += [f"{where}: {p}" for p in _check_assistant(message, declared, pending, answered)]
            learnable += message.get("weight", 1) == 1
        elif role == "tool":
            problems += [f"{where}: {p}" for p in _check_tool(message, pending)]
        else:
            problems += [f"{where}: {p}" for p in _unanswered(pending)]
            pending = {}
            problems += [f"{where}: {p}" for p in _check_text(message, role, i)]
    problems += [f"end: {p}" for p in _unanswered(pending)]
    if not any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages):
        problems.append("no assistant message (every example needs one)")
    elif not learnable:
        problems.append("every assistant message has weight 0: nothing to train on")
    return problems


def _check_text(message: dict[str, Any], role: str, index: int) -> list[str]:
    problems = []
    if not isinstance(message.get("content"), str) or not message["content"].strip():
        problems.append(f"{role} message needs non-empty string content")
    if role == "system" and index != 0:
        problems.append("a system message must come first")
    return problems


def _check_assistant(
    message: dict[str, Any], declared: set[str] | None, pending: dict[str, str], answered: set[str]
) -> list[str]:
    problems: list[str] = []
    content, calls = message.get("content"), message.get("tool_calls")
    if content is not None and not isinstance(content, str):
        problems.append("assistant content must be a string or null")
    if not (isinstance(content, str) and content.strip()) and not calls:
        problems.append("assistant message needs content or tool_calls")
    if "weight" in message and message["weight"] not in (0, 1):
        problems.append(f"weight must be 0 or 1, got {message['weight']!r}")
    if calls is not None and not isinstance(calls, list):
        return [*problems, "tool_calls must be a list"]
    for j, call in enumerate(calls or []):
        problems += [f"tool_calls[{j}]: {p}" for p in _check_call(call, declared, pending, answered)]
    return problems


def _check_call(
    call: Any, declared: set[str] | None, pending: dict[str, str], answered: set[str]
) -> list[str]:
    if (
        not isinstance(call, dict)
        or call.get("type") != "function"
        or not isinstance(call.get("function"), dict)
    ):
        return ["must be {id, type: function, function: {name, arguments}}"]
    problems: list[str] = []
    call_id, name = call.get("id"), call["function"].get("name")
    if not isinstance(call_id, str) or not call_id:
        problems.append("missing id")
    elif call_id in pending or call_id in answered:
        problems.append(f"id {call_id!r} used twice")
    if not isinstance(name, str) or not FUNCTION_NAME.match(name):
        problems.append(f"function name {name!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$")
    elif declared is not None and name not in declared:
        problems.append(f"function {name!r} is not declared in tools")
    problems += _check_arguments(call["function"].get("arguments"))
    if isinstance(call_id, str) and call_id:
        pending[call_id] = str(name)
        answered.add(call_id)
    return problems


def _check_arguments(arguments: Any) -> list[str]:
    if not isinstance(arguments, str):
        return ["arguments must be a JSON string"]
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError:
        return ["arguments are not valid JSON"]
    return [] if isinstance(parsed, dict) else ["arguments must encode a JSON object"]


def _check_tool(message: dict[str, Any], pending: dict[str, str]) -> list[str]:
    problems = []
    call_id = message.get("tool_call_id")
    if call_id not in pending:
        problems.append(f"tool message answers {call_id!r}, which no open assistant tool call has")
    else:
        del pending[call_id]
    if not isinstance(message.get("content"), str):
        problems.append("tool content must be a string")
    return problems


def _unanswered(pending: dict[str, str]) -> list[str]:
    return [f"tool call {cid!r} ({name}) has no tool message right after it" for cid, name in pending.items()]
