"""The gateway end to end through litellm and the mock provider: text, tool calls, roles, usage, limits."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from cworld.config import ModelConfig, ModelsConfig
from cworld.data_model import Usage
from cworld.errors import ConfigError, UsageError
from cworld.llm import Gateway, RetryPolicy, mock

USER = [{"role": "user", "content": "hello there"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


@pytest.fixture(autouse=True)
def _clean_scripts():
    yield
    mock.clear()


def gateway(**roles: ModelConfig | list[ModelConfig]) -> Gateway:
    return Gateway(ModelsConfig(**roles), retry=RetryPolicy.immediate())


async def test_text_completion_runs_through_the_provider():
    script = mock.script("a", ["Hi, how can I help?"])
    reply = await gateway(agent=ModelConfig(model="mock/a")).complete("agent", USER)
    assert reply.text == "Hi, how can I help?"
    assert reply.tool_calls == []
    assert reply.model == "mock/a"
    assert reply.finish_reason == "stop"
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    assert not reply.cached
    assert script.calls[0].messages == USER


async def test_tool_calls_arrive_parsed_and_tools_reach_the_model():
    script = mock.script("a", [{"text": "checking", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]}])
    reply = await gateway(agent=ModelConfig(model="mock/a")).complete(
        "agent", USER, tools=TOOLS, tool_choice="auto"
    )
    assert reply.text == "checking"
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("get_weather", {"city": "Oslo"})]
    assert reply.tool_calls[0].id and reply.finish_reason == "tool_calls"
    assert script.calls[0].tools == TOOLS
    assert script.calls[0].params["tool_choice"] == "auto"
    message = reply.as_message()
    assert message["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Oslo"}'}


async def test_malformed_tool_arguments_are_data_not_a_raise():
    mock.script("a", [{"tool_calls": [{"name": "get_weather", "arguments": '{"city": "Os'}]}])
    reply = await gateway(agent=ModelConfig(model="mock/a")).complete("agent", USER, tools=TOOLS)
    call = reply.tool_calls[0]
    assert call.arguments == {} and call.raw_arguments == '{"city": "Os'
    assert call.arguments_error and "not valid JSON" in call.arguments_error


async def test_config_parameters_reach_the_provider():
    script = mock.script("a", ["ok"])
    cfg = ModelConfig(model="mock/a", temperature=0.7, max_tokens=55, extra={"top_p": 0.5})
    await gateway(agent=cfg).complete("agent", USER, seed=11)
    params = script.calls[0].params
    assert (params["temperature"], params["max_tokens"], params["seed"], params["top_p"]) == (0.7, 55, 11, 0.5)


async def test_explicit_model_and_judge_list():
    mock.script("j1", ["first"])
    mock.script("j2", ["second"])
    gw = gateway(judge=[ModelConfig(model="mock/j1"), ModelConfig(model="mock/j2")])
    assert (await gw.complete("judge", USER)).text == "first"
    assert (await gw.complete("judge", USER, model="mock/j2")).text == "second"
    assert (await gw.complete("judge", USER, model="mock/echo")).text == "hello there"


async def test_unconfigured_role_and_unknown_role_say_what_to_do():
    gw = gateway()
    with pytest.raises(ConfigError, match="no model configured for role 'engine'; set CWORLD_ENGINE_MODEL"):
        await gw.complete("engine", USER)
    with pytest.raises(UsageError, match="unknown LLM role 'critic'"):
        await gw.complete("critic", USER)


async def test_usage_and_cost_are_accounted_per_role_and_model():
    price = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}
    mock.script("a", ["one", "two"])
    mock.script("j", ["three"])
    gw = gateway(agent=ModelConfig(model="mock/a", extra=price), judge=[ModelConfig(model="mock/j")])
    replies = [await gw.complete("agent", USER), await gw.complete("agent", USER + USER)]
    judged = await gw.complete("judge", USER)
    agent = gw.usage["agent"]
    assert agent.calls == 2 and agent.cache_hits == 0
    assert agent.prompt_tokens == sum(r.usage.prompt_tokens for r in replies)
    assert agent.completion_tokens == sum(r.usage.completion_tokens for r in replies)
    expected = sum(r.usage.prompt_tokens * 1e-6 + r.usage.completion_tokens * 2e-6 for r in replies)
    assert agent.cost_usd == pytest.approx(expected) and expected > 0
    assert gw.usage["judge"] == Usage(calls=1, prompt_tokens=judged.usage.prompt_tokens,
                                      completion_tokens=judged.usage.completion_tokens)  # fmt: skip
    assert set(gw.usage_by_model) == {"mock/a", "mock/j"}
    assert gw.ledger.total().calls == 3


async def _max_in_flight(max_concurrency: int, calls: int = 6) -> int:
    script = mock.script("slow", lambda messages, tools: "done", delay_s=0.05)
    gw = gateway(agent=ModelConfig(model="mock/slow", max_concurrency=max_concurrency))
    replies = await asyncio.gather(*(gw.complete("agent", USER) for _ in range(calls)))
    assert [r.text for r in replies] == ["done"] * calls
    return script.max_in_flight


async def test_concurrency_limit_per_model_is_honoured():
    assert await _max_in_flight(2) == 2
    assert await _max_in_flight(6) == 6  # the same load without the limit does overlap fully


def test_gateway_survives_several_event_loops():
    mock.script("a", ["x", "y"])
    gw = gateway(agent=ModelConfig(model="mock/a", max_concurrency=1))
    assert asyncio.run(gw.complete("agent", USER)).text == "x"
    assert asyncio.run(gw.complete("agent", USER)).text == "y"


async def test_from_workspace_reads_roles_and_puts_the_cache_in_the_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("CWORLD_AGENT_MODEL", "mock/echo")
    gw = Gateway.from_workspace(tmp_path / "ws", retry=RetryPolicy.immediate())
    assert (await gw.complete("agent", USER)).text == "hello there"
    assert (await gw.complete("agent", USER)).cached
    assert (tmp_path / "ws" / "cache" / "llm.sqlite").is_file()
    gw.close()


def test_importing_the_package_does_not_import_litellm():
    code = "import sys, cworld.llm; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_raw_newline_inside_a_string_argument_means_itself():
    """SmolLM2 writes `{"query": "find\nthe card"}` with a real newline: JSON forbids it raw, its meaning is plain."""
    from cworld.llm.completion import parse_arguments

    assert parse_arguments('{"query": "find\nthe\tcard"}') == ({"query": "find\nthe\tcard"}, None)
    assert parse_arguments('{"query": "find')[1] is not None
