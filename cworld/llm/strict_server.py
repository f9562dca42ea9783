"""A strict stand-in for a real provider, for tests: an OpenAI-compatible chat-completions server on loopback.

It refuses what OpenAI's API refuses (`openai_rules.py`: tool schemas, names, description lengths, message
order, roles, response formats) with HTTP 400 and an OpenAI-style error body, and answers valid requests
from a script. Reach it through the gateway (or litellm) with model `openai/NAME` and `api_base=.url`:

    with StrictProvider() as provider:
        provider.script(["Hello", {"tool_calls": [{"name": "mail__search", "arguments": {"q": "x"}}]},
                         {"json": {"ok": True}}, {"text": "cut", "finish_reason": "length"}])
        gateway = Gateway(ModelsConfig(agent=provider.model_config()))
        ...
        provider.requests   # every request body it got, refused ones too
        provider.refusals   # the 400s it answered, as `Refusal`s

In tests, the `strict_provider` fixture (tests/conftest.py) yields a started one. A reply is a string
(text), or a dict with `text`, `json` (sent as the text), `tool_calls` (each `name`, `arguments` as a dict
or a raw string, optional `id`) and `finish_reason` ("stop", "tool_calls" or "length"; by default
"tool_calls" when there are calls, else "stop"), or a callable of the request body returning one of these.
A request after the script is spent is refused (400, code `script_exhausted`), and so is a broken reply
(code `script_error`), so a test sees it rather than a retry.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from cworld.config import ModelConfig
from cworld.llm.openai_rules import Refusal, refusal

Reply = str | dict[str, Any] | Callable[[dict[str, Any]], "str | dict[str, Any]"]
FINISH_REASONS = ("stop", "tool_calls", "length")
_START_TIMEOUT_S = 10.0


class StrictProvider:
    """Start with `with StrictProvider() as provider:` (or `start()`/`stop()`); see the module docstring."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = 0
        self.requests: list[dict[str, Any]] = []
        self.refusals: list[Refusal] = []
        self._script: list[Reply] = []
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._calls = 0

    @property
    def url(self) -> str:
        """The `api_base` to give litellm: `http://127.0.0.1:PORT/v1`."""
        return f"http://{self.host}:{self.port}/v1"

    def model_config(self, name: str = "strict", **settings: Any) -> ModelConfig:
        """A keyless `openai/NAME` model served here, for any role."""
        return ModelConfig(model=f"openai/{name}", api_base=self.url, api_key_env=None, **settings)

    def script(self, replies: list[Reply]) -> None:
        """Queue replies, answered in order, one per accepted request."""
        with self._lock:
            self._script.extend(replies)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self) -> StrictProvider:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((self.host, 0))
        self.port = sock.getsockname()[1]
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"]),
                                Route("/v1/models", self._models, methods=["GET"])])
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True,
                                        name=f"strict-provider-{self.port}")
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"the strict provider stand-in did not start on port {self.port}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=_START_TIMEOUT_S)
        self._server = self._thread = None

    def __enter__(self) -> StrictProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- endpoints -------------------------------------------------------------------------------
    async def _models(self, request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": []})

    async def _chat(self, request: Request) -> JSONResponse:
        try:
            body: Any = json.loads(await request.body())
        except ValueError:
            body = None
        with self._lock:
            self.requests.append(body if isinstance(body, dict) else {"_unparsed": True})
            problem = refusal(body) or _stream_refusal(body)
            reply = self._script.pop(0) if problem is None and self._script else None
            if problem is None and reply is None:
                problem = Refusal("the strict stand-in's script is exhausted: script() more replies",
                                  code="script_exhausted")
            if problem is not None:
                self.refusals.append(problem)
                return JSONResponse(problem.body(), status_code=400)
            self._calls += 1
            call_number = self._calls
        assert reply is not None
        try:
            return JSONResponse(_response(reply(body) if callable(reply) else reply, body["model"], call_number))
        except Exception as exc:  # a broken script entry is the test's bug: a 400 is not retried, a 500 would be
            broken = Refusal(f"the strict stand-in's scripted reply {call_number} is broken: {exc}", code="script_error")
            with self._lock:
                self.refusals.append(broken)
            return JSONResponse(broken.body(), status_code=400)


def _stream_refusal(body: dict[str, Any]) -> Refusal | None:
    if body.get("stream"):
        return Refusal("the strict stand-in does not stream; call without stream=True", "stream")
    return None


def _response(reply: str | dict[str, Any], model: str, number: int) -> dict[str, Any]:
    """A chat.completion object for one scripted reply."""
    spec: dict[str, Any] = {"text": reply} if isinstance(reply, str) else dict(reply)
    text = json.dumps(spec["json"]) if "json" in spec else spec.get("text")
    calls = [_tool_call(call, number, i) for i, call in enumerate(spec.get("tool_calls") or [])]
    finish = spec.get("finish_reason") or ("tool_calls" if calls else "stop")
    if finish not in FINISH_REASONS:
        raise ValueError(f"a scripted finish_reason must be one of {FINISH_REASONS}, got {finish!r}")
    message: dict[str, Any] = {"role": "assistant", "content": text if text is not None or not calls else None}
    if calls:
        message["tool_calls"] = calls
    completion_tokens = max(1, len(str(text or "")) // 4 + 8 * len(calls))
    return {
        "id": f"chatcmpl-strict-{number}", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 10, "completion_tokens": completion_tokens, "total_tokens": 10 + completion_tokens},
    }  # fmt: skip


def _tool_call(call: dict[str, Any], number: int, index: int) -> dict[str, Any]:
    arguments = call.get("arguments", {})
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call.get("id") or f"call_{number}_{index}", "type": "function",
            "function": {"name": call["name"], "arguments": raw}}
