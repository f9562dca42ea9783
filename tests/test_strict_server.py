"""The strict stand-in refuses what OpenAI's chat completions API refuses, and answers from its script."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from cworld.config import ModelsConfig
from cworld.errors import ModelError
from cworld.llm import Gateway
from cworld.llm.strict_server import StrictProvider

USER = {"role": "user", "content": "Find the deals."}
CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "crm__search", "arguments": "{}"}}]}
ANSWER = {"role": "tool", "tool_call_id": "call_1", "content": "[]"}


def _tool(name: str = "crm__search", parameters: dict[str, Any] | None = None, description: str = "Search.") -> dict:
    schema = parameters if parameters is not None else {"type": "object", "properties": {"q": {"type": "string"}}}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}


def _post(provider: StrictProvider, **body: Any) -> httpx.Response:
    return httpx.post(f"{provider.url}/chat/completions", json={"model": "strict", **body}, timeout=10)


def _refused(provider: StrictProvider, **body: Any) -> str:
    response = _post(provider, **body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    return str(error["message"])


def test_refuses_an_array_without_items(strict_provider):
    tool = _tool(parameters={"type": "object", "properties": {"filters": {"type": "object", "properties": {
        "values": {"type": "array"}}}}})
    message = _refused(strict_provider, messages=[USER], tools=[tool])
    assert "Invalid schema for function 'crm__search'" in message
    assert "('properties', 'filters', 'properties', 'values'), array schema missing items" in message


def test_refuses_a_tool_message_with_no_preceding_call(strict_provider):
    message = _refused(strict_provider, messages=[USER, ANSWER])
    assert "must be a response to a preceeding message with 'tool_calls'" in message


def test_refuses_an_unanswered_tool_call(strict_provider):
    unanswered = _refused(strict_provider, messages=[USER, CALL, {"role": "user", "content": "and?"}],
                          tools=[_tool()])
    assert "did not have response messages: call_1" in unanswered
    assert "call_1" in _refused(strict_provider, messages=[USER, CALL], tools=[_tool()])


@pytest.mark.parametrize("name", ["crm/search", "a" * 65, "", "search deals"])
def test_refuses_a_bad_function_name(strict_provider, name):
    assert "does not match pattern" in _refused(strict_provider, messages=[USER], tools=[_tool(name)])


@pytest.mark.parametrize(("body", "words"), [
    ({"messages": [USER, {"role": "robot", "content": "x"}]}, "Invalid value: 'robot'"),
    ({"messages": [USER], "tools": [_tool(description="x" * 1025)]}, "string too long"),
    ({"messages": [USER], "tools": [_tool(parameters={"type": "array", "items": {}})]}, "type: \"object\""),
    ({"messages": [USER], "tools": [_tool(parameters={"type": "object", "properties": {"q": {"type": "any"}}})]},
     "is not valid"),
    ({"messages": [USER], "tools": [_tool(parameters={"type": "object", "properties": {
        "q": {"$ref": "#/$defs/Missing"}}})]}, "not found"),
    ({"messages": [USER], "tools": [_tool(name=f"t{i}") for i in range(129)]}, "array too long"),
    ({"messages": [USER], "tool_choice": "auto"}, "only allowed when 'tools' are specified"),
    ({"messages": [USER], "response_format": {"type": "json_object", "schema": {"type": "object"}}},
     "response_format.schema"),
    ({"messages": [USER], "response_format": {"type": "json_object"}}, "must contain the word 'json'"),
    ({"messages": [USER], "response_format": {"type": "json_schema", "json_schema": {"name": "a b", "schema": {}}}},
     "json_schema.name"),
    ({"messages": [USER], "frobnicate": 1}, "Unrecognized request argument supplied: frobnicate"),
])  # fmt: skip
def test_refuses_what_the_real_api_refuses(strict_provider, body, words):
    assert words in _refused(strict_provider, **body)
    assert strict_provider.refusals and len(strict_provider.requests) == 1


def test_answers_a_valid_conversation_from_its_script(strict_provider):
    strict_provider.script([{"tool_calls": [{"name": "crm__search", "arguments": {"q": "acme"}}]},
                            {"json": {"deals": 0}, "finish_reason": "length"}])
    first = _post(strict_provider, messages=[USER], tools=[_tool()], tool_choice="auto").json()["choices"][0]
    assert first["finish_reason"] == "tool_calls"
    assert first["message"]["tool_calls"][0]["function"] == {"name": "crm__search", "arguments": '{"q": "acme"}'}
    second = _post(strict_provider, messages=[USER, CALL, ANSWER, {"role": "user", "content": "Reply in JSON."}],
                   tools=[_tool()], response_format={"type": "json_object"}).json()["choices"][0]
    assert (second["message"]["content"], second["finish_reason"]) == ('{"deals": 0}', "length")
    assert "script is exhausted" in _refused(strict_provider, messages=[USER])
    assert [r["messages"][-1]["role"] for r in strict_provider.requests] == ["user", "user", "user"]


def test_litellm_reaches_it_through_the_gateway():
    async def run(provider: StrictProvider) -> None:
        gateway = Gateway(ModelsConfig(agent=provider.model_config()))
        provider.script([{"text": "cut sh", "finish_reason": "length"}])
        reply = await gateway.complete("agent", [USER])
        assert (reply.text, reply.finish_reason) == ("cut sh", "length")
        with pytest.raises(ModelError, match="did not have response messages"):
            await gateway.complete("agent", [USER, CALL], tools=[_tool()])

    with StrictProvider() as provider:
        asyncio.run(run(provider))
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"{provider.url}/chat/completions", json={}, timeout=2)
