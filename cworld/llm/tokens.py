"""What litellm knows of a model's window, and how many tokens a message takes: for prompt budgets.

Budgets (the agent's history, a judge's evidence) are sized to the model's context window where litellm's
model data has it (`max_input_tokens`), and counted with litellm's `token_counter` (the model's own
tokenizer where litellm has it, else tiktoken's cl100k): no network either way.
"""

from __future__ import annotations

from typing import Any

from cworld.llm._loader import load_litellm


def max_input_tokens(model: str) -> int | None:
    """litellm's `max_input_tokens` for `model` (else its `max_tokens`); None when litellm has no entry."""
    try:
        info = load_litellm().get_model_info(model)
    except Exception:  # litellm raises its own types (and plain ones) for a model it has not mapped
        return None
    value = info.get("max_input_tokens") or info.get("max_tokens")
    return int(value) if isinstance(value, int | float) and value > 0 else None


def count_tokens(model: str, messages: list[dict[str, Any]]) -> int:
    """The prompt tokens `messages` take for `model` (chat overhead included), by litellm's counter."""
    return int(load_litellm().token_counter(model=model, messages=messages))
