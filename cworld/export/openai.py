"""The `openai` format: chat fine-tuning JSONL, one conversation per line.

    {"messages": [{"role": "system", ...}, {"role": "user", ...},
                  {"role": "assistant", "content": "...", "tool_calls": [{"id": "call_1", "type": "function",
                   "function": {"name": "mail__search_messages", "arguments": "{\\"query\\": \\"x\\"}"}}]},
                  {"role": "tool", "tool_call_id": "call_1", "content": "..."}, ...],
     "tools": [{"type": "function", "function": {"name": ..., "description": ..., "parameters": {...}}}]}

An assistant turn the agent got wrong by itself (a syntactic error) carries `"weight": 0`: it stays in
the context but is not trained on. `check_openai.py` checks files against the published rules.
"""

from __future__ import annotations

from typing import Any

from cworld.export.conversation import Conversation, Turn, arguments_json


def openai_record(conversation: Conversation) -> dict[str, Any]:
    messages = [_message(t) for t in conversation.turns]
    tools = [{"type": "function", "function": f} for f in conversation.tools]
    return {"messages": messages, "tools": tools}


def _message(turn: Turn) -> dict[str, Any]:
    if turn.role == "tool":
        return {"role": "tool", "tool_call_id": turn.call_id, "content": turn.content}
    if turn.role != "assistant":
        return {"role": turn.role, "content": turn.content}
    message: dict[str, Any] = {"role": "assistant"}
    if turn.content:
        message["content"] = turn.content
    if turn.calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": arguments_json(c.arguments)},
            }
            for c in turn.calls
        ]
    if not turn.learn:
        message["weight"] = 0
    return message
