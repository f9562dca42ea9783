"""Test defaults: offline, no network, a private workspace per test, back-off zeroed."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DISABLE_AIOHTTP_TRANSPORT", "True")  # litellm, imported early by the harness doors too
for _role in ("AGENT", "ENGINE", "SYNTH"):
    os.environ.pop(f"CWORLD_{_role}_MODEL", None)
os.environ.pop("CWORLD_JUDGE_MODELS", None)

from cworld.llm import RetryPolicy, set_default_retry  # noqa: E402  (after the env is set)

set_default_retry(RetryPolicy.immediate())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that need a remote API or the local LLM server are skipped unless asked for."""
    gates = {"remote": "CWORLD_REMOTE_TESTS", "local_llm": "CWORLD_LOCAL_LLM"}
    for item in items:
        for marker, env in gates.items():
            if marker in item.keywords and os.environ.get(env, "").strip().lower() in ("", "0", "false", "no"):
                item.add_marker(pytest.mark.skip(reason=f"set {env}=1 to run {marker} tests"))


@pytest.fixture
def workspace_dir(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    monkeypatch.setenv("CWORLD_WORKSPACE", str(ws))
    return ws


@pytest.fixture
def strict_provider():
    """A started strict OpenAI-compatible stand-in (cworld/llm/strict_server.py): it refuses with HTTP 400
    what the real API refuses and answers from a script. Use `.model_config(name)` (or model `openai/NAME`
    with `api_base=.url`) for any role, `.script([...])` to queue replies, `.requests` / `.refusals` to look."""
    from cworld.llm.strict_server import StrictProvider

    with StrictProvider() as provider:
        yield provider
