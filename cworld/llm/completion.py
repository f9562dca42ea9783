"""What a model call returns, independent of provider: the gateway's answer and its cache record."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field


class TokenCount(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class RequestedToolCall(BaseModel):
    """A tool call the model asked for. Malformed argument JSON is data (`arguments_error`), not a raise:
    the agent loop turns it into an `invalid_args` observation the model can correct."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str = ""
    arguments_error: str | None = None


class Completion(BaseModel):
    text: str = ""
    tool_calls: list[RequestedToolCall] = Field(default_factory=list)
    model: str = Field(description="the model string the gateway called, e.g. `openai/gpt-4o-mini`")
    usage: TokenCount = Field(default_factory=TokenCount)
    cost_usd: float = Field(0.0, description="what this call cost; 0 on a cache hit or unknown pricing")
    cached: bool = False
    finish_reason: str | None = None

    def as_message(self) -> dict[str, Any]:
        """The assistant turn in OpenAI chat format, to append to the conversation for the next call."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or ("" if not self.tool_calls else None)}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw_arguments}}
                for c in self.tool_calls
            ]
        return message


def parse_arguments(raw: str | dict[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    """Tool arguments as a dict, with the reason when the model's JSON is not an object (control characters
    inside strings are read as themselves: JSON forbids them raw, but their meaning is not in doubt)."""
    if isinstance(raw, dict):
        return raw, None
    if not raw or not raw.strip():
        return {}, None
    try:
        # strict=False: a newline or tab written raw inside a string (small models do) means itself
        value = json.loads(raw, strict=False)
    except json.JSONDecodeError as exc:
        return {}, f"arguments are not valid JSON: {exc.msg} at char {exc.pos}"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def _tool_call(raw: Any, index: int) -> RequestedToolCall:
    function = raw.function
    raw_args = function.arguments if isinstance(function.arguments, str) else json.dumps(function.arguments)
    arguments, error = parse_arguments(function.arguments)
    return RequestedToolCall(
        id=raw.id or f"call_{index}",
        name=function.name or "",
        arguments=arguments,
        raw_arguments=raw_args or "",
        arguments_error=error,
    )


def completion_from_response(response: Any, model: str) -> Completion:
    """Convert a litellm `ModelResponse`; cost is read from litellm's own computation when it has one."""
    choice = response.choices[0] if response.choices else None  # some filters answer with no choice
    message = choice.message if choice is not None else None
    usage = getattr(response, "usage", None)
    cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
    return Completion(
        text=(message.content if message is not None else None) or "",
        tool_calls=[_tool_call(c, i) for i, c in enumerate(getattr(message, "tool_calls", None) or [])],
        model=model,
        usage=TokenCount(
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        ),
        cost_usd=float(cost) if isinstance(cost, int | float) else 0.0,
        finish_reason=choice.finish_reason if choice is not None else None,
    )
