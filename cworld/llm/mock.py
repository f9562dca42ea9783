"""Scripts for the built-in `mock` provider: `mock/NAME` plays script NAME, one output per call.

The mock is a real litellm provider (see `mock_provider.py`), so tests of agents, engines, synthesizers
and judges run the production path: retries, cache, usage, tool-call parsing. A script's outputs are

- a string: the assistant's text;
- a dict: `{"text": ...}` and/or `{"tool_calls": [{"name": ..., "arguments": {...}}]}`;
- `failure("rate_limit")` (or a litellm exception instance): raised as the provider's error; any other
  exception surfaces as `MockScriptError`, never retried;
- a callable `(messages, tools) -> output`, consulted when its turn comes.

`outputs` may also be one callable, which answers every call and never runs out. A script that runs
out raises `MockScriptExhausted`, naming it. Unscripted `mock/echo` echoes the last user message.
Importing this module does not import litellm.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from cworld.errors import MockScriptExhausted, ModelError, UsageError

FailureKind = Literal[
    "rate_limit", "timeout", "connection", "unavailable", "server_error", "auth", "bad_request", "not_found"
]
FAILURE_KINDS: tuple[str, ...] = FailureKind.__args__  # type: ignore[attr-defined]
ECHO = "echo"


@dataclass(frozen=True)
class MockFailure:
    """A provider error to raise, built as the matching litellm exception when its turn comes."""

    kind: FailureKind
    message: str = ""


def failure(kind: FailureKind, message: str = "") -> MockFailure:
    if kind not in FAILURE_KINDS:
        raise UsageError(f"unknown mock failure {kind!r}; use one of {', '.join(FAILURE_KINDS)}")
    return MockFailure(kind, message or f"mock {kind.replace('_', ' ')}")


@dataclass(frozen=True)
class MockReply:
    text: str = ""
    tool_calls: tuple[dict[str, Any], ...] = ()
    finish_reason: str | None = None


@dataclass
class MockCall:
    """What a scripted model was asked; tests read these to check prompts and count provider calls."""

    messages: list[Any]
    tools: list[Any] | None
    params: dict[str, Any]
    api_key: str | None = field(default=None, repr=False)


class MockScriptError(ModelError):
    """A script's callable raised something other than a provider error: a bug in the test's responder."""


Responder = Callable[[list[Any], list[Any] | None], Any]


@dataclass
class Script:
    name: str
    outputs: deque[Any]
    responder: Responder | None = None
    delay_s: float = 0.0
    calls: list[MockCall] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def remaining(self) -> int:
        return len(self.outputs)

    def begin(self, call: MockCall) -> Any:
        """Record the call, count it in flight and take its output (in arrival order)."""
        with self._lock:
            self.calls.append(call)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self.responder is not None:
                return self.responder
            if not self.outputs:
                self.in_flight -= 1
                raise MockScriptExhausted(
                    f"mock script {self.name!r} ran out: call {len(self.calls)} found no output left; "
                    f"add outputs to cworld.llm.mock.script({self.name!r}, ...)"
                )
            return self.outputs.popleft()

    def end(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def __enter__(self) -> Script:
        return self

    def __exit__(self, *exc: object) -> None:
        clear(self.name)


_registry: dict[str, Script] = {}
_registry_lock = threading.Lock()


def script(name: str, outputs: Iterable[Any] | Responder, *, delay_s: float = 0.0) -> Script:
    """Register script NAME for `mock/NAME`, replacing any earlier one; use it as a context manager
    to unregister on exit. `delay_s` makes each call take that long (to exercise concurrency)."""
    if not name or "/" in name:
        raise UsageError(f"mock script name {name!r} must be non-empty and hold no '/'")
    if callable(outputs):
        entry = Script(name, deque(), responder=outputs, delay_s=delay_s)
    else:
        items = list(outputs)
        for item in items:
            _validate_output(name, item)
        entry = Script(name, deque(items), delay_s=delay_s)
    with _registry_lock:
        _registry[name] = entry
    return entry


def get_script(name: str) -> Script | None:
    with _registry_lock:
        return _registry.get(name)


def clear(name: str | None = None) -> None:
    """Forget one script, or all of them."""
    with _registry_lock:
        if name is None:
            _registry.clear()
        else:
            _registry.pop(name, None)


def _validate_output(name: str, item: Any) -> None:
    if isinstance(item, str | BaseException | MockFailure) or callable(item):
        return
    if isinstance(item, dict):
        unknown = set(item) - {"text", "tool_calls", "finish_reason"}
        calls = item.get("tool_calls") or []
        if not unknown and all(isinstance(c, dict) and c.get("name") for c in calls):
            return
    raise UsageError(
        f"mock script {name!r}: output {item!r} is not a string, {{'text'|'tool_calls': ...}} "
        "(each tool call with a 'name'), an exception, failure(...) or a callable"
    )


def resolve(name: str, output: Any, messages: list[Any], tools: list[Any] | None) -> MockReply | MockFailure:
    """Turn one script output into a reply; exceptions are raised, callables consulted first."""
    if callable(output) and not isinstance(output, BaseException):
        output = _call_responder(name, output, messages, tools)
    if isinstance(output, BaseException):
        _raise_scripted(name, output)
    if isinstance(output, MockFailure):
        return output
    if isinstance(output, str):
        return MockReply(text=output)
    _validate_output(name, output)
    return MockReply(
        text=str(output.get("text") or ""),
        tool_calls=tuple(output.get("tool_calls") or ()),
        finish_reason=output.get("finish_reason"),
    )


_PASS_THROUGH = ("litellm", "openai", "cworld")


def _raise_scripted(name: str, exc: BaseException) -> None:
    """Provider errors go up as the provider would raise them. Anything else would reach the gateway
    disguised by litellm as a (retried) connection error, so it becomes a `MockScriptError` instead."""
    if type(exc).__module__.startswith(_PASS_THROUGH):
        raise exc
    raise MockScriptError(f"mock script {name!r}: scripted {type(exc).__name__}: {exc}") from exc


def _call_responder(name: str, fn: Responder, messages: list[Any], tools: list[Any] | None) -> Any:
    try:
        return fn(messages, tools)
    except Exception as exc:
        if type(exc).__module__.startswith(_PASS_THROUGH):
            raise
        raise MockScriptError(f"mock script {name!r}: its callable raised {type(exc).__name__}: {exc}") from exc


def echo_reply(messages: list[Any]) -> MockReply:
    """The unscripted `mock/echo`: repeats the last user message, so a pipeline runs with no script."""
    for message in reversed(messages):
        if field_of(message, "role") == "user":
            return MockReply(text=text_of(field_of(message, "content")))
    return MockReply(text="")


def field_of(message: Any, key: str) -> Any:
    """Messages are dicts, or litellm/pydantic objects when a caller appended a response as is."""
    return message.get(key) if isinstance(message, dict) else getattr(message, key, None)


def text_of(content: Any) -> str:
    """Message content as plain text (OpenAI content may be a list of typed parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)
