"""Model checks before work starts, an OpenAI-compatible local server, and the mock's sync path."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cworld.config import ModelConfig, ModelsConfig
from cworld.errors import ConfigError, ModelError
from cworld.llm import Gateway, RetryPolicy, check_model, mock, ping_model
from cworld.llm._loader import load_litellm
from cworld.llm.connection import DUMMY_KEY


@pytest.fixture(autouse=True)
def _clean_scripts():
    yield
    mock.clear()


@pytest.mark.parametrize("model", ["mock/anything", "openai/gpt-4o-mini", "gpt-4o-mini", "ollama/llama3"])
def test_well_formed_models_pass(model):
    check_model(ModelConfig(model=model))


@pytest.mark.parametrize(
    ("model", "words"),
    [("", "malformed"), ("mock/ bad", "malformed"), ("openai/", "malformed"), ("nosuch/thing", "unknown provider")],
)
def test_bad_model_strings_are_config_errors(model, words):
    with pytest.raises(ConfigError, match=words) as info:
        check_model(model)
    assert "\n" not in str(info.value)


def test_a_named_key_variable_must_be_set(monkeypatch):
    monkeypatch.delenv("CWORLD_TEST_MISSING_KEY", raising=False)
    with pytest.raises(ConfigError, match="api_key_env names CWORLD_TEST_MISSING_KEY, which is not set"):
        check_model(ModelConfig(model="openai/gpt-4o-mini", api_key_env="CWORLD_TEST_MISSING_KEY"))


def test_pinging_the_mock_consumes_no_script():
    script = mock.script("a", ["kept"])
    check_model("mock/a", ping=True)
    assert script.remaining == 1


def test_the_mock_answers_litellms_sync_path_too():
    mock.script("s", ["sync answer"])
    response = load_litellm().completion(model="mock/s", messages=[{"role": "user", "content": "hi"}])
    assert response.choices[0].message.content == "sync answer"


class _ChatServer(BaseHTTPRequestHandler):
    """Just enough of the OpenAI chat API to answer one kind of request."""

    seen: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _ChatServer.seen.append({"auth": self.headers.get("Authorization"), "path": self.path, "body": body})
        reply = {
            "id": "cmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "local says hi"}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
        }  # fmt: skip
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def local_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatServer)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    _ChatServer.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


async def test_openai_compatible_server_with_a_dummy_key(local_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cfg = ModelConfig(model="openai/smol", api_base=local_server)
    gw = Gateway(ModelsConfig(agent=cfg), retry=RetryPolicy.immediate())
    reply = await gw.complete("agent", [{"role": "user", "content": "hi"}])
    assert (reply.text, reply.usage.prompt_tokens, reply.usage.completion_tokens) == ("local says hi", 7, 3)
    assert reply.cost_usd == 0.0  # an unpriced local model costs nothing rather than failing
    request = _ChatServer.seen[-1]
    assert request["path"] == "/v1/chat/completions" and request["body"]["model"] == "smol"
    assert request["auth"] == f"Bearer {DUMMY_KEY}"
    ok, detail = await ping_model(cfg)
    assert ok and detail.startswith("answered in")
    assert _ChatServer.seen[-1]["body"]["max_tokens"] == 1


async def test_ping_reports_an_unreachable_server_without_raising(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ok, detail = await ping_model(ModelConfig(model="openai/smol", api_base="http://127.0.0.1:9/v1"))
    assert not ok and detail.startswith("model 'openai/smol'")
    with pytest.raises(ModelError, match="model 'openai/smol'"):
        check_model(ModelConfig(model="openai/smol", api_base="http://127.0.0.1:9/v1"), ping=True)
