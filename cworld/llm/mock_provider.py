"""The `mock` provider itself: a `litellm.CustomLLM` that plays scripts from `cworld.llm.mock`.

It returns a real `ModelResponse` (tool calls in `message.tool_calls`, usage filled from text length),
so everything above it — the gateway, agents, judges — runs exactly as with a remote model.
Imported only by the loader, after litellm.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from typing import Any

import litellm
from litellm import CustomLLM
from litellm.types.utils import (
    ChatCompletionMessageToolCall,
    Choices,
    Function,
    Message,
    ModelResponse,
    Usage,
)

from cworld.errors import MockScriptExhausted
from cworld.llm import mock
from cworld.llm.mock import MockCall, MockFailure, MockReply, Script

_PROVIDER = "mock"


def _tokens(text: str) -> int:
    """About four characters a token, like the usual rule of thumb; at least one."""
    return max(1, math.ceil(len(text) / 4))


def _prompt_text(messages: list[Any], tools: list[Any] | None) -> str:
    parts = [mock.text_of(mock.field_of(m, "content")) for m in messages]
    if tools:
        parts.append(json.dumps(tools, default=str))
    return " ".join(parts)


def _exception(failure: MockFailure, model: str) -> Exception:
    """The litellm exception a real provider would raise for this failure kind."""
    msg, m, p = failure.message, f"{_PROVIDER}/{model}", _PROVIDER
    build = {
        "rate_limit": lambda: litellm.RateLimitError(message=msg, llm_provider=p, model=m),
        "timeout": lambda: litellm.Timeout(message=msg, model=m, llm_provider=p),
        "connection": lambda: litellm.APIConnectionError(message=msg, llm_provider=p, model=m),
        "unavailable": lambda: litellm.ServiceUnavailableError(message=msg, llm_provider=p, model=m),
        "server_error": lambda: litellm.InternalServerError(message=msg, llm_provider=p, model=m),
        "auth": lambda: litellm.AuthenticationError(message=msg, llm_provider=p, model=m),
        "bad_request": lambda: litellm.BadRequestError(message=msg, model=m, llm_provider=p),
        "not_found": lambda: litellm.NotFoundError(message=msg, model=m, llm_provider=p),
    }
    return build[failure.kind]()


def _tool_call(raw: dict[str, Any], call_no: int, index: int, name: str) -> ChatCompletionMessageToolCall:
    args = raw.get("arguments", {})
    return ChatCompletionMessageToolCall(
        id=raw.get("id") or f"call_{name}_{call_no}_{index}",
        type="function",
        function=Function(name=raw["name"], arguments=args if isinstance(args, str) else json.dumps(args)),
    )


def _response(model: str, reply: MockReply, prompt: str, call_no: int) -> ModelResponse:
    calls = [_tool_call(c, call_no, i, model) for i, c in enumerate(reply.tool_calls)]
    message = Message(role="assistant", content=reply.text or None, tool_calls=calls or None)
    finish = reply.finish_reason or ("tool_calls" if calls else "stop")
    out_text = reply.text + "".join(c.function.arguments + (c.function.name or "") for c in calls)
    prompt_tokens, completion_tokens = _tokens(prompt), _tokens(out_text)
    return ModelResponse(
        model=model,
        choices=[Choices(index=0, message=message, finish_reason=finish)],
        usage=Usage(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=prompt_tokens + completion_tokens,
        ),
    )


class _Turn:
    """One call: which script (None for the unscripted echo), and the output it took."""

    def __init__(
        self, model: str, messages: list[Any], optional_params: dict[str, Any], api_key: str | None = None
    ) -> None:
        self.model, self.messages = model, messages
        self.tools = optional_params.get("tools")
        self.script: Script | None = mock.get_script(model)
        if self.script is None and model != mock.ECHO:
            raise MockScriptExhausted(
                f"mock model 'mock/{model}' has no script; register one with "
                f"cworld.llm.mock.script({model!r}, [...]) or use 'mock/echo'"
            )
        call = MockCall(messages=list(messages), tools=self.tools, params=dict(optional_params), api_key=api_key)
        self.output = self.script.begin(call) if self.script is not None else None

    @property
    def delay_s(self) -> float:
        return self.script.delay_s if self.script is not None else 0.0

    def respond(self) -> ModelResponse:
        if self.script is None:
            reply: MockReply | MockFailure = mock.echo_reply(self.messages)
        else:
            reply = mock.resolve(self.model, self.output, self.messages, self.tools)
        if isinstance(reply, MockFailure):
            raise _exception(reply, self.model)
        call_no = len(self.script.calls) if self.script is not None else 0
        return _response(self.model, reply, _prompt_text(self.messages, self.tools), call_no)

    def end(self) -> None:
        if self.script is not None:
            self.script.end()


class MockLLM(CustomLLM):
    """Registered as provider `mock`; litellm hands it the part of the model string after `mock/`."""

    def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:  # type: ignore[override]
        turn = _Turn(model, messages, _optional_params(args, kwargs), kwargs.get("api_key"))
        try:
            if turn.delay_s:
                time.sleep(turn.delay_s)
            return turn.respond()
        finally:
            turn.end()

    async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:  # type: ignore[override]
        turn = _Turn(model, messages, _optional_params(args, kwargs), kwargs.get("api_key"))
        try:
            if turn.delay_s:
                await asyncio.sleep(turn.delay_s)
            return turn.respond()
        finally:
            turn.end()


def _optional_params(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """litellm passes everything by keyword today; accept the positional order of the base class too."""
    if "optional_params" in kwargs:
        return dict(kwargs["optional_params"] or {})
    # base signature after (model, messages): api_base, custom_prompt_dict, model_response,
    # print_verbose, encoding, api_key, logging_obj, optional_params
    return dict(args[7] or {}) if len(args) > 7 else {}
