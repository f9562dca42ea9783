"""The mock provider's script registry: what a script may hold, callables, lifetimes, token counts."""

from __future__ import annotations

import pytest

from cworld.config import ModelConfig, ModelsConfig
from cworld.errors import MockScriptExhausted, UsageError
from cworld.llm import Gateway, RetryPolicy, mock
from cworld.llm.mock import MockScriptError

TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]


@pytest.fixture(autouse=True)
def _clean_scripts():
    yield
    mock.clear()


def gw() -> Gateway:
    return Gateway(ModelsConfig(agent=ModelConfig(model="mock/m")), retry=RetryPolicy.immediate())


async def test_a_context_managed_script_is_gone_afterwards():
    with mock.script("m", ["inside"]) as script:
        assert (await gw().complete("agent", [{"role": "user", "content": "x"}])).text == "inside"
        assert script.remaining == 0
    assert mock.get_script("m") is None
    with pytest.raises(MockScriptExhausted, match="has no script"):
        await gw().complete("agent", [{"role": "user", "content": "x"}])


async def test_callables_see_messages_and_tools_and_may_pick_a_tool():
    def responder(messages, tools):
        names = [t["function"]["name"] for t in tools or []]
        return {"tool_calls": [{"name": names[0], "arguments": {"q": messages[-1]["content"]}}]}

    mock.script("m", ["plain text", responder])
    gateway = gw()
    await gateway.complete("agent", [{"role": "user", "content": "first"}])
    reply = await gateway.complete("agent", [{"role": "user", "content": "find cats"}], tools=TOOLS)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("lookup", {"q": "find cats"})]


async def test_a_non_provider_exception_in_a_script_is_not_mistaken_for_a_flaky_network():
    script = mock.script("m", [RuntimeError("scripted crash"), "never reached"])
    with pytest.raises(MockScriptError, match="mock script 'm': scripted RuntimeError: scripted crash"):
        await gw().complete("agent", [{"role": "user", "content": "x"}])
    assert len(script.calls) == 1


async def test_token_counts_grow_with_text():
    mock.script("m", ["short", "a much longer answer " * 20])
    gateway = gw()
    short = await gateway.complete("agent", [{"role": "user", "content": "q"}])
    long = await gateway.complete("agent", [{"role": "user", "content": "q " * 200}])
    assert long.usage.prompt_tokens > short.usage.prompt_tokens
    assert long.usage.completion_tokens > short.usage.completion_tokens


@pytest.mark.parametrize("bad", [42, {"txt": "typo"}, {"tool_calls": [{"arguments": {}}]}, None])
def test_invalid_outputs_are_rejected_at_registration(bad):
    with pytest.raises(UsageError, match="mock script 'm': output"):
        mock.script("m", ["fine", bad])


def test_names_and_failure_kinds_are_checked():
    with pytest.raises(UsageError, match="must be non-empty"):
        mock.script("a/b", [])
    with pytest.raises(UsageError, match="unknown mock failure 'meltdown'"):
        mock.failure("meltdown")  # type: ignore[arg-type]


async def test_re_registering_replaces_the_script():
    mock.script("m", ["old"])
    mock.script("m", ["new"])
    assert (await gw().complete("agent", [{"role": "user", "content": "x"}])).text == "new"
