"""The `hf` format: a Hugging Face `datasets.Dataset` saved with `save_to_disk`.

    from datasets import load_from_disk
    ds = load_from_disk("out/")          # columns: messages, tools, episode_id, task_id, agent, ...

`messages` are the `openai` format's messages with every key present (arrow needs one struct type):
`content` is "" where the assistant only calls, `tool_call_id` is "" outside tool messages, `weight` is
1 or 0. `tools` is a JSON string of the OpenAI-style tool list (JSON Schemas differ too much for one
arrow type); `json.loads(row["tools"])` gives what `tokenizer.apply_chat_template(..., tools=...)` takes.
Tool-call `arguments` stay JSON strings, as in the OpenAI format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cworld.errors import MissingDependency


def hf_row(record: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """One dataset row from an `openai` record plus the episode's metadata."""
    messages = [
        {
            "role": m["role"],
            "content": m.get("content") or "",
            "tool_calls": [
                {"id": c["id"], "type": c["type"], "function": dict(c["function"])}
                for c in m.get("tool_calls", [])
            ],
            "tool_call_id": m.get("tool_call_id", ""),
            "weight": int(m.get("weight", 1)),
        }
        for m in record["messages"]
    ]
    return {"messages": messages, "tools": json.dumps(record["tools"], ensure_ascii=False), **meta}


def _features() -> Any:
    from datasets import Features, List, Value

    call = {
        "id": Value("string"),
        "type": Value("string"),
        "function": {"name": Value("string"), "arguments": Value("string")},
    }
    message = {
        "role": Value("string"),
        "content": Value("string"),
        "tool_calls": List(call),
        "tool_call_id": Value("string"),
        "weight": Value("int8"),
    }
    return Features(
        {
            "messages": List(message),
            "tools": Value("string"),
            "episode_id": Value("string"),
            "task_id": Value("string"),
            "agent": Value("string"),
            "mode": Value("string"),
            "seed": Value("int64"),
            "status": Value("string"),
            "privileged": Value("bool"),
            "overall": Value("float64"),
            "success": Value("bool"),
            "faults": List(Value("string")),
        }
    )


def save_hf(rows: list[dict[str, Any]], folder: Path) -> None:
    try:
        import datasets
    except ImportError:
        raise MissingDependency("the hf format needs the `datasets` package: pip install datasets") from None
    was_disabled = datasets.is_progress_bar_enabled() is False
    datasets.disable_progress_bars()  # the CLI prints its own summary; no bar on stderr
    try:
        datasets.Dataset.from_list(rows, features=_features()).save_to_disk(str(folder))
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()
