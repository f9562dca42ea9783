"""What a provider accepts: every tool of the environment passes the strict stand-in's rules once sanitized,
renamed functions map back, structured output takes each provider's form, and an agent episode whose
tools include the three harvested schemas with an array lacking `items` runs against the stand-in."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from rollout_helpers import scratch_context

from cworld.agents.llm import LLMAgent
from cworld.config import ModelConfig, ModelsConfig
from cworld.data_model import Task, ToolSpec, read_jsonl
from cworld.data_model.tool_names import ToolNames
from cworld.environment import Environment
from cworld.llm import Gateway, local_server
from cworld.llm.metaschema import subschemas
from cworld.llm.openai_rules import function_refusal
from cworld.llm.provider_rules import family_of, prepare, response_format_for, sanitize_tool
from cworld.llm.schema_rules import GEMINI_KEYWORDS, sanitize_parameters
from cworld.registry.manifest import load_catalog, load_manifest
from cworld.registry.tools import recorded_tools, sandbox_tools
from cworld.rollout import build_episode, run_episode

UNSOUND = ("aerospace-mcp/optimize_launch_angle", "hubspot-mcp-server/hubspot-search-objects", "instantdb-mcp/transact")
USER = {"role": "user", "content": "Go."}


def _every_tool() -> list[ToolSpec]:
    """The sandbox's tools, the manifest's catalogs, the recorded real servers' and the harvested catalog."""
    env = Environment.resolve()
    tools = list(sandbox_tools().values()) + recorded_tools(env)
    for spec in load_manifest(env, harvested=True):
        if spec.kind == "catalog":
            tools += load_catalog(env, spec)
    return tools


def _function(spec: ToolSpec, names: ToolNames) -> dict[str, Any]:
    return {"type": "function", "function": {"name": names.name(spec.id), "description": spec.description or spec.name,
                                             "parameters": spec.input_schema}}


def test_every_tool_passes_the_stand_ins_rules_once_sanitized():
    tools = _every_tool()
    names = ToolNames()
    refused_before = {t.id for t in tools if function_refusal(_function(t, names)) is not None}
    assert set(UNSOUND) <= refused_before
    assert len(tools) > 3000 and {t.id for t in tools} >= set(UNSOUND)
    for spec in tools:
        sent = sanitize_tool(_function(spec, names), "openai")
        assert function_refusal(sent) is None, (spec.id, function_refusal(sent))
        for path, node in subschemas(sanitize_parameters(spec.input_schema, "gemini")):
            assert set(node) <= GEMINI_KEYWORDS and ("type" in node or "anyOf" in node), (spec.id, path, node)
            assert node.get("type") != "array" or "items" in node, (spec.id, path)


def test_the_sanitized_schema_keeps_what_the_model_needs():
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {
        "filters": {"type": "array", "items": {"$ref": "#/$defs/Filter"}},
        "values": {"type": "array"}, "node": {"$ref": "#/$defs/Node"}, "odd": {"type": "any", "description": "x"},
        "limit": {"type": ["integer", "null"], "exclusiveMinimum": True, "minimum": 0}},
        "required": ["filters", "ghost"],
        "$defs": {"Filter": {"type": "object", "properties": {"op": {"const": "eq"}}, "additionalProperties": False},
                  "Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}}}
    openai = sanitize_parameters(schema, "openai")
    props = openai["properties"]
    assert props["filters"]["items"]["properties"]["op"] == {"const": "eq"}
    assert props["values"]["items"] == {} and props["odd"] == {"description": "x"}
    assert props["node"]["properties"]["child"] == {}  # the cycle is cut, open
    assert openai["required"] == ["filters"] and "$schema" not in openai and "$defs" not in openai
    assert "exclusiveMinimum" not in props["limit"] and props["limit"]["minimum"] == 0
    gemini = sanitize_parameters(schema, "gemini")["properties"]
    assert gemini["filters"]["items"]["properties"]["op"] == {"type": "string", "enum": ["eq"]}
    assert "additionalProperties" not in gemini["filters"]["items"]
    assert gemini["limit"] == {"type": "integer", "nullable": True, "minimum": 0}
    assert gemini["values"]["items"] == {"type": "object"}
    assert schema["properties"]["values"] == {"type": "array"}  # the caller's schema is untouched


def test_top_level_combinators_and_non_objects_become_an_object():
    merged = sanitize_parameters({"oneOf": [{"properties": {"a": {"type": "string"}}},
                                            {"properties": {"b": {"type": "number"}}}]}, "openai")
    assert merged == {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}}
    assert sanitize_parameters(None, "anthropic") == {"type": "object", "properties": {}}


@pytest.mark.parametrize(("model", "family"), [
    ("openai/gpt-4o-mini", "openai"), ("gpt-4o", "openai"), ("mock/x", "openai"), ("anthropic/claude-3-5-sonnet", "anthropic"),
    ("bedrock/anthropic.claude-3-haiku", "anthropic"), ("gemini/gemini-2.0-flash", "gemini"),
    ("vertex_ai/gemini-1.5-pro", "gemini"), ("groq/llama-3.1-8b", "openai")])  # fmt: skip
def test_family_of_a_model(model, family):
    assert family_of(model) == family


def test_a_renamed_function_maps_back_in_the_call_and_in_the_history():
    bad = {"type": "function", "function": {"name": "crm/search deals", "parameters": {"type": "object"}}}
    history = [USER, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "crm/search deals", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "[]"}]
    prepared = prepare(ModelConfig(model="openai/gpt-4o"), {"model": "openai/gpt-4o", "messages": history,
                                                            "tools": [bad], "tool_choice": {"type": "function", "function": {"name": "crm/search deals"}}})
    (sent,) = prepared.renamed
    assert prepared.renamed == {sent: "crm/search deals"} and function_refusal(prepared.request["tools"][0]) is None
    assert prepared.request["messages"][1]["tool_calls"][0]["function"]["name"] == sent
    assert prepared.request["tool_choice"]["function"]["name"] == sent
    assert history[1]["tool_calls"][0]["function"]["name"] == "crm/search deals"
    gemini = prepare(ModelConfig(model="gemini/gemini-2.0-flash"), {"messages": [USER], "tools": [
        {"type": "function", "function": {"name": "9lives", "parameters": {}}}]})
    assert gemini.request["tools"][0]["function"]["name"][0].isalpha()


def test_response_format_takes_each_providers_form(workspace_dir):
    schema = {"type": "object", "properties": {"status": {"type": "string"}, "rows": {"type": "array"}}}
    assert response_format_for(ModelConfig(model="openai/gpt-4o"), schema)["json_schema"]["schema"]["properties"][
        "rows"]["items"] == {}
    compatible = ModelConfig(model="openai/some-local", api_base="http://127.0.0.1:8931/v1")
    assert response_format_for(compatible, schema) == {"type": "json_object"}
    local_server.write_record(local_server.ServerRecord(pid=1, port=8931, model="smol"))
    assert response_format_for(compatible, schema) == {"type": "json_object", "schema": schema}


def test_tools_sent_to_a_local_llama_cpp_server_say_tool_choice_auto(workspace_dir):
    """llama-cpp-python's chatml-function-calling renders no tool into the prompt without `tool_choice`:
    SmolLM2 never saw the agent's tools. A caller's own choice is kept; other providers get none added."""
    tools = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]
    local = ModelConfig(model="openai/smollm2", api_base="http://127.0.0.1:8932/v1")
    assert "tool_choice" not in prepare(local, {"messages": [USER], "tools": tools}).request
    local_server.write_record(local_server.ServerRecord(pid=1, port=8932, model="smol"))
    assert prepare(local, {"messages": [USER], "tools": tools}).request["tool_choice"] == "auto"
    named = {"type": "function", "function": {"name": "add"}}
    assert prepare(local, {"messages": [USER], "tools": tools, "tool_choice": named}).request["tool_choice"] == named
    assert "tool_choice" not in prepare(local, {"messages": [USER]}).request
    assert "tool_choice" not in prepare(ModelConfig(model="openai/gpt-4o"), {"messages": [USER], "tools": tools}).request
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    history = [USER, {"role": "assistant", "content": None, "tool_calls": [call]},
               {"role": "tool", "tool_call_id": "c1", "content": "3"}]
    sent = prepare(local, {"messages": history, "tools": tools}).request["messages"]
    assert sent[1]["content"] == "" and sent[2] == {"role": "user", "content": "[result of add]\n3"}
    assert prepare(ModelConfig(model="openai/gpt-4o"), {"messages": history, "tools": tools}).request["messages"] == history


async def test_the_gateway_sends_what_the_stand_in_accepts_and_keys_the_cache_on_it(strict_provider, tmp_path):
    cfg = strict_provider.model_config()
    gateway = Gateway(ModelsConfig(agent=cfg), cache_path=tmp_path / "llm.sqlite")
    tool = {"type": "function", "function": {"name": "crm/search", "description": "d" * 3000,
                                             "parameters": {"type": "object", "properties": {"v": {"type": "array"}}}}}

    def call_back(body: dict[str, Any]) -> dict[str, Any]:
        return {"tool_calls": [{"name": body["tools"][0]["function"]["name"], "arguments": {"v": []}}]}

    strict_provider.script([call_back, '{"ok": true}'])
    reply = await gateway.complete("agent", [USER], tools=[tool], tool_choice="auto")
    assert reply.tool_calls[0].name == "crm/search" and not strict_provider.refusals
    again = await gateway.complete("agent", [USER], tools=[{**tool, "function": {**tool["function"], "parameters": {
        "$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"v": {"type": "array"}}}}}],
        tool_choice="auto")  # fmt: skip
    assert again.cached and again.tool_calls[0].name == "crm/search"
    wrong_form = {"type": "json_object", "schema": {"type": "object"}}
    answer = await gateway.complete("agent", [USER], response_format=wrong_form)
    assert answer.text == '{"ok": true}' and not strict_provider.refusals
    assert strict_provider.requests[-1]["response_format"] == {"type": "json_object"}
    gateway.close()


def test_an_agent_episode_with_the_unsound_tools_runs_against_the_stand_in(strict_provider, tmp_path):
    tasks = {t.id: t for t in read_jsonl(Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl", Task)}
    task = tasks["sbx-mail-forward-audit"]
    task = task.model_copy(update={"tools": [*task.tools, *UNSOUND]})
    harvested = {t.id: t for t in _every_tool() if t.id in UNSOUND}
    ctx = scratch_context(tmp_path / "ws")
    ctx.tools = {**ctx.tools, **harvested}
    strict_provider.script([{"tool_calls": [{"name": "mail__search_messages", "arguments": {"query": "audit"}}]},
                            "I found the audit email."])
    gateway = Gateway(cache_path=None)
    agent = LLMAgent(strict_provider.model_config(), gateway, style="react")

    async def run() -> Any:
        episode = build_episode(task, agent=agent.name, access="full", mode="live", policy="none", seed=0, ctx=ctx)
        return await run_episode(agent, episode)

    trajectory = asyncio.run(run())
    assert not strict_provider.refusals, strict_provider.refusals
    assert trajectory.final_answer == "I found the audit email."
    offered = {t["function"]["name"]: t["function"] for t in strict_provider.requests[0]["tools"]}
    for tool_id in UNSOUND:
        assert tool_id.replace("/", "__", 1) in offered
    assert len(strict_provider.requests) == 2 and strict_provider.requests[1]["messages"][-1]["role"] == "tool"
