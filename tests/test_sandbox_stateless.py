"""The stateless servers as a whole: discovery, tool counts, documentation, schemas, MCP round trips, size
limits against denial of service, and determinism across sessions."""

from __future__ import annotations

import inspect
import time
import typing

import jsonschema
import mcp
import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework import SandboxApp, SandboxSession
from cworld.sandbox.framework.binding import method_signature
from cworld.sandbox.framework.server import build_server

STATELESS: list[type[SandboxApp]] = [a for a in all_apps() if not a.stateful]
EXPECTED = {"math", "units", "text", "datetime", "crypto", "graph"}


def _tools() -> list[tuple[type[SandboxApp], str, str]]:
    return [(app, meta.name, attr) for app in STATELESS for meta, attr in app.tool_methods()]


@pytest.fixture(scope="module")
def servers():
    session = SandboxSession(0, STATELESS)
    return {app.name: build_server(session, app.name) for app in STATELESS}


def test_the_six_servers_are_discovered_and_stateless():
    assert {a.name for a in STATELESS} >= EXPECTED
    for app in STATELESS:
        assert app.stateful is False
        assert app.title and app.description and app.category


def test_at_least_100_tools_spread_over_the_servers():
    counts = {app.name: len(app.tool_methods()) for app in STATELESS if app.name in EXPECTED}
    assert sum(counts.values()) >= 100, counts
    assert all(15 <= n <= 30 for n in counts.values()), counts


@pytest.mark.parametrize(
    ("app", "tool_name", "attr"), _tools(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_tool_is_documented_typed_and_read_only(app, tool_name, attr):
    meta = {m.name: m for m, _ in app.tool_methods()}[tool_name]
    assert len(meta.description) >= 30, f"{tool_name}: description too short"
    assert meta.read_only and meta.idempotent and not meta.destructive
    sig = method_signature(app, attr)
    assert inspect.isclass(sig.return_annotation) and issubclass(sig.return_annotation, BaseModel), tool_name
    for param in sig.parameters.values():
        assert typing.get_origin(param.annotation) is typing.Annotated, (
            f"{tool_name}.{param.name} not Annotated"
        )
        infos = [m for m in param.annotation.__metadata__ if isinstance(m, FieldInfo)]
        assert any(i.description for i in infos), f"{tool_name}.{param.name} has no description"


async def test_schemas_are_valid_json_schema_with_output_schemas(servers):
    for name, server in servers.items():
        async with mcp.Client(server) as client:
            tools = (await client.list_tools()).tools
        for t in tools:
            jsonschema.Draft202012Validator.check_schema(t.input_schema)
            assert t.input_schema.get("additionalProperties") is False
            assert t.output_schema and t.output_schema.get("type") == "object", f"{name}/{t.name}"
            jsonschema.Draft202012Validator.check_schema(t.output_schema)
            assert t.annotations.read_only_hint is True


async def test_calls_over_mcp_return_structured_content_matching_the_output_schema(servers):
    calls = {
        "math": ("factorial", {"n": 10}),
        "units": ("convert_length", {"value": 1, "from_unit": "mi", "to_unit": "km"}),
        "text": ("slugify", {"text": "Hello, World!"}),
        "datetime": ("date_info", {"day": "2026-03-05"}),
        "crypto": ("hash_text", {"text": "abc", "algorithm": "md5"}),
        "graph": (
            "shortest_path",
            {"edges": [{"source": "a", "target": "b", "weight": 2}], "source": "a", "target": "b"},
        ),
    }
    for name, (tool, args) in calls.items():
        async with mcp.Client(servers[name]) as client:
            schema = next(t.output_schema for t in (await client.list_tools()).tools if t.name == tool)
            result = await client.call_tool(tool, args)
        assert not result.is_error, result.content
        jsonschema.validate(result.structured_content, schema)
    assert result.structured_content["length"] == 2.0


async def test_a_bad_input_is_an_invalid_error_result_not_an_exception(servers):
    async with mcp.Client(servers["math"]) as client:
        result = await client.call_tool("evaluate_expression", {"expression": "1/0"})
    assert result.is_error
    assert "division by zero" in result.content[0].text
    assert result.meta["cworld"] == {"error_class": "invalid_args", "kind": "invalid"}


def test_same_call_same_answer_in_any_session():
    """Stateless means the seed cannot matter: two sessions with different seeds answer identically."""
    a = build_server(SandboxSession(1, STATELESS), "crypto")
    b = build_server(SandboxSession(2, STATELESS), "crypto")
    args = {"seed": 7, "length": 20}
    first = a.call_tool_sync("generate_password", args).structured_content
    assert first == a.call_tool_sync("generate_password", args).structured_content
    assert first == b.call_tool_sync("generate_password", args).structured_content


DOS_CASES = [
    ("math", "evaluate_expression", {"expression": "9**9**9"}),
    ("math", "evaluate_expression", {"expression": "factorial(1000)*factorial(1000)"}),
    ("math", "evaluate_expression", {"expression": "1.0000001**1e15"}),
    ("math", "big_integer_arithmetic", {"a": "9" * 1000, "b": "5000", "operation": "power"}),
    ("math", "primes_in_range", {"start": 0, "end": 10**12}),
    ("text", "regex_find_all", {"pattern": "(x+x+)+y", "text": "x" * 20_000}),
    ("text", "regex_replace", {"pattern": "(a|aa)+b", "replacement": "", "text": "a" * 20_000}),
    ("text", "fill_template", {"template": "{a}" * 6000, "values": {"a": "x" * 20_000}}),
    ("text", "json_format", {"text": "[" * 50_000 + "]" * 50_000}),
    ("datetime", "list_dates", {"start": "0001-01-01", "end": "9999-12-31"}),
    ("datetime", "cron_next_runs", {"expression": "0 0 30 2 *", "after": "2026-01-01T00:00"}),
    (
        "graph",
        "betweenness_centrality",
        {"edges": [{"source": f"n{i}", "target": f"n{i + 1}"} for i in range(300)]},
    ),
]


@pytest.mark.parametrize(("app", "tool", "args"), DOS_CASES, ids=[f"{a}.{t}" for a, t, _ in DOS_CASES])
def test_oversized_work_is_refused_quickly(servers, app, tool, args):
    start = time.perf_counter()
    result = servers[app].call_tool_sync(tool, args)
    elapsed = time.perf_counter() - start
    assert result.is_error and result.meta["cworld"]["kind"] == "invalid", result.content[0].text
    assert len(result.content[0].text) < 400
    assert elapsed < 2.0, f"{app}.{tool} took {elapsed:.2f}s"


def test_schema_limits_reject_oversized_arguments_before_running(servers):
    result = servers["math"].call_tool_sync("factorial", {"n": 10**9})
    assert result.is_error and result.meta["cworld"]["error_class"] == "invalid_args"
    assert "n" in result.content[0].text
