"""Retries: back-off on transient provider errors, none on permanent ones, one clear line at the end."""

from __future__ import annotations

import pytest

from cworld.config import ModelConfig, ModelsConfig
from cworld.errors import InfraError, MockScriptExhausted, ModelError
from cworld.llm import Gateway, ModelUnavailable, RetryPolicy, mock
from cworld.llm._loader import load_litellm
from cworld.llm.mock import MockScriptError

USER = [{"role": "user", "content": "hi"}]


@pytest.fixture(autouse=True)
def _clean_scripts():
    yield
    mock.clear()


def agent_gateway(cfg: ModelConfig | None = None, attempts: int = 5) -> Gateway:
    cfg = cfg or ModelConfig(model="mock/a")
    return Gateway(ModelsConfig(agent=cfg), retry=RetryPolicy.immediate(attempts))


async def test_rate_limit_twice_then_success_is_retried():
    litellm = load_litellm()
    limited = [litellm.RateLimitError(message="slow down", llm_provider="mock", model="mock/a") for _ in range(2)]
    script = mock.script("a", [*limited, "finally"])
    gw = agent_gateway()
    reply = await gw.complete("agent", USER)
    assert reply.text == "finally"
    assert len(script.calls) == 3
    assert gw.usage["agent"].calls == 1  # one answered call, whatever it took to get it


@pytest.mark.parametrize("kind", ["timeout", "connection", "unavailable", "server_error"])
async def test_every_transient_kind_is_retried(kind):
    script = mock.script("a", [mock.failure(kind), "ok"])
    assert (await agent_gateway().complete("agent", USER)).text == "ok"
    assert len(script.calls) == 2


async def test_authentication_error_is_not_retried_and_names_the_key():
    script = mock.script("a", [mock.failure("auth"), "never reached"])
    cfg = ModelConfig(model="mock/a", api_key_env="CWORLD_TEST_KEY")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CWORLD_TEST_KEY", "sk-test")
        with pytest.raises(ModelError) as info:
            await agent_gateway(cfg).complete("agent", USER)
    assert str(info.value) == "model 'mock/a' for role 'agent': authentication failed; set CWORLD_TEST_KEY"
    assert len(script.calls) == 1


@pytest.mark.parametrize(
    ("kind", "words"),
    [("bad_request", "request rejected (bad input)"), ("not_found", "not found at the provider (bad input)")],
)
async def test_permanent_errors_raise_after_one_call(kind, words):
    script = mock.script("a", [mock.failure(kind, "bad input"), "never reached"])
    with pytest.raises(ModelError, match=r"^model 'mock/a' for role 'agent': ") as info:
        await agent_gateway().complete("agent", USER)
    assert words in str(info.value) and "\n" not in str(info.value)
    assert len(script.calls) == 1


async def test_transient_errors_that_outlast_the_retries_are_infrastructure():
    script = mock.script("a", [mock.failure("unavailable")] * 3)
    with pytest.raises(ModelUnavailable, match="ServiceUnavailableError after 3 attempt") as info:
        await agent_gateway(attempts=3).complete("agent", USER)
    assert isinstance(info.value, ModelError) and isinstance(info.value, InfraError)
    assert len(script.calls) == 3


async def test_running_out_of_script_is_loud_and_not_retried():
    script = mock.script("a", ["only one"])
    gw = agent_gateway()
    await gw.complete("agent", USER)
    with pytest.raises(MockScriptExhausted, match="mock script 'a' ran out: call 2"):
        await gw.complete("agent", [{"role": "user", "content": "again"}])
    assert len(script.calls) == 2


async def test_unscripted_mock_model_names_the_missing_script():
    with pytest.raises(MockScriptExhausted, match=r"mock model 'mock/ghost' has no script"):
        await agent_gateway(ModelConfig(model="mock/ghost")).complete("agent", USER)


async def test_a_buggy_responder_surfaces_as_such():
    def responder(messages, tools):
        raise KeyError("oops")

    mock.script("a", responder)
    with pytest.raises(MockScriptError, match="its callable raised KeyError"):
        await agent_gateway().complete("agent", USER)


async def test_provider_messages_never_echo_the_key(monkeypatch):
    secret = "sk-planted-0123456789abcdef"
    monkeypatch.setenv("CWORLD_TEST_KEY", secret)
    mock.script("a", [mock.failure("bad_request", f"invalid key {secret} for this model")])
    cfg = ModelConfig(model="mock/a", api_key_env="CWORLD_TEST_KEY")
    with pytest.raises(ModelError) as info:
        await agent_gateway(cfg).complete("agent", USER)
    assert secret not in str(info.value) and "***" in str(info.value)


async def test_default_policy_can_be_zeroed_for_a_test_suite(monkeypatch):
    from cworld.llm import retry

    monkeypatch.setattr(retry, "_default", RetryPolicy())
    retry.set_default_retry(RetryPolicy.immediate(2))
    assert Gateway().retry == RetryPolicy(attempts=2, initial_s=0.0, max_s=0.0, jitter_s=0.0)


async def test_back_off_waits_grow_between_attempts():
    import time

    script = mock.script("a", [mock.failure("rate_limit"), mock.failure("rate_limit"), "ok"])
    policy = RetryPolicy(attempts=3, initial_s=0.04, max_s=1.0, jitter_s=0.0)
    gw = Gateway(ModelsConfig(agent=ModelConfig(model="mock/a")), retry=policy)
    started = time.perf_counter()
    assert (await gw.complete("agent", USER)).text == "ok"
    assert time.perf_counter() - started >= 0.04 + 0.08  # initial, then doubled
    assert len(script.calls) == 3
