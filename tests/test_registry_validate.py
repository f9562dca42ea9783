"""Three-stage validation: the error-payload heuristic, probe arguments, and every real server for real."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest
from registry_helpers import default_specs, ensure_real_servers

from cworld.data_model import ToolAnnotations, ToolResult, ToolSpec
from cworld.environment import Environment
from cworld.mcp import Connection
from cworld.registry.launch import LaunchContext, resolve
from cworld.registry.probe_args import ValueBank, generate_args, planned_args, probe_order
from cworld.registry.services import find_pg_bin
from cworld.registry.usability import text_error, unusable_reason
from cworld.registry.validate import availability_for, judge
from cworld.registry.validate_server import Check, ServerOutcome, check_server
from cworld.schemas.probe import example_value

# --- the error-payload heuristic ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Database error: no such table: orders",
        "Error: ENOENT: no such file or directory, open '/x'",
        "ValueError: invalid literal for int() with base 10: 'a'",
        "sqlite3.OperationalError: near 'SELEC': syntax error",
        "MCP error -32603: something broke",
        "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'a'",
        "Could not connect to the database",
        "Failed to fetch https://example.com - status code 500",
        "Permission denied",
        "The request failed because the quota ran out",
        "repository not found",
        "   at handler (/srv/app/index.js:12:5)\n   at run (/srv/app/main.js:3:1)",
    ],
)
def test_error_text_in_disguise_is_caught(text):
    result = ToolResult.ok(text=text)
    assert not result.is_error
    assert unusable_reason(result) is not None


@pytest.mark.parametrize(
    "text",
    [
        "[FILE] notes.txt\n[DIR] docs",
        "Successfully wrote to /tmp/scratch/out.txt",
        '{"items": [{"id": 1, "error_rate": 0.2}], "errors": []}',
        "Tests: 12 passed, 0 failed",
        "No errors found in the document.",
        "<html><body>" + "Our error budget is explained below. " * 20 + "</body></html>",
        "On branch main\nnothing to commit, working tree clean",
    ],
)
def test_ordinary_answers_are_usable(text):
    assert unusable_reason(ToolResult.ok(text=text)) is None


def test_json_error_payloads_and_empty_answers():
    assert "`error`" in unusable_reason(ToolResult.ok(structured={"error": "rate limited"}))
    assert "success: false" in unusable_reason(ToolResult.ok(text='{"success": false, "data": null}'))
    assert "status: failed" in unusable_reason(ToolResult.ok(text='{"status": "failed"}'))
    assert "empty" in unusable_reason(ToolResult(content=[{"type": "text", "text": "  "}]))
    assert (
        unusable_reason(ToolResult(content=[{"type": "image", "data": "AA==", "mimeType": "image/png"}]))
        is None
    )
    assert unusable_reason(ToolResult.error("auth", "bad token")).startswith("error result (auth)")
    assert text_error("x" * 400 + " failed") is None  # long texts are judged by how they open


def test_judge_maps_answers_to_stages():
    assert judge(ToolResult.error("invalid_args", "Input validation error: x"))[0] == 1
    assert judge(ToolResult.error("timeout", "no answer"))[0] == 1
    assert judge(ToolResult.error("unavailable", "fetch failed"))[:1] == (2,)
    assert judge(ToolResult.ok(text="Database error: no such table: t"))[::2] == (2, "not_found")
    assert judge(ToolResult.ok(text="[]"))[0] == 3
    bad_schema = ToolResult.ok(structured={"total": "x"})
    bad_schema.meta["output_schema_error"] = "Invalid structured content"
    assert judge(bad_schema)[0] == 2
    assert availability_for(2, "unavailable") == "schema-only" and availability_for(2, "not_found") == "live"


# --- probe arguments ---------------------------------------------------------------------------------


def _tool(schema: dict, name: str = "t", **hints: bool) -> ToolSpec:
    return ToolSpec(server="s", name=name, input_schema=schema, annotations=ToolAnnotations(**hints))


SCHEMAS = [
    {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 9}},
        "required": ["n"],
    },
    {
        "type": "object",
        "properties": {"mode": {"enum": ["fast", "slow"]}, "at": {"type": "string", "format": "date-time"}},
        "required": ["mode", "at"],
    },
    {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
        "required": ["code"],
    },
    {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "uniqueItems": True}
        },
        "required": ["tags"],
    },
    {
        "type": "object",
        "$defs": {
            "P": {
                "type": "object",
                "properties": {"x": {"type": "number", "exclusiveMinimum": 0}},
                "required": ["x"],
            }
        },
        "properties": {
            "p": {"$ref": "#/$defs/P"},
            "q": {"anyOf": [{"type": "string", "minLength": 12}, {"type": "null"}]},
        },
        "required": ["p", "q"],
    },
    {
        "type": "object",
        "properties": {"email": {"type": "string", "format": "email"}, "ok": {"type": "boolean"}},
        "required": ["email", "ok"],
    },
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_generated_arguments_respect_the_schema(schema):
    args = generate_args(_tool(schema))
    jsonschema.validate(args, schema)


def test_generation_reads_descriptions_and_the_clock():
    now = datetime(2026, 8, 1, tzinfo=UTC)
    assert example_value({"type": "string", "description": "Unit, e.g. 'km'."}) == "km"
    assert example_value({"type": "string", "description": "airport code such as LIS, from find"}) == "LIS"
    assert (
        example_value({"type": "string", "description": "when, YYYY-MM-DDTHH:MM"}, "at", now=now)
        == "2026-08-31T10:00"
    )
    assert (
        example_value({"type": "string", "description": "YYYY-MM-DD"}, "check_out", now=now) == "2026-09-01"
    )
    assert example_value({"type": "string"}, "date_of_birth", now=now) < "2000"
    assert example_value({"type": "string", "description": "JSON text"}, "text").startswith("{")
    matrix = example_value({"type": "array", "items": {"type": "array", "items": {"type": "number"}}}, "m")
    assert len(matrix) == len(matrix[0]) == 3
    assert len(set(example_value({"type": "array", "items": {"type": "number"}}, "values"))) == 3


def test_identifiers_come_from_earlier_answers():
    bank = ValueBank()
    bank.seed({"orders": [{"id": "ord_7", "status": "open"}]})
    bank.learn(ToolResult.ok(structured={"messages": [{"message_id": "m_2"}], "token": "tok_9"}))
    schema = {
        "type": "object",
        "required": ["order_id", "message_ids", "token", "to", "title"],
        "properties": {
            "order_id": {"type": "string"},
            "message_ids": {"type": "array", "items": {"type": "string"}},
            "token": {"type": "string"},
            "to": {
                "type": "array",
                "items": {"type": "string"},
                "description": "message ids from list_messages",
            },
            "title": {"type": "string", "description": "Title, e.g. 'Weekly sync'."},
        },
    }
    args = generate_args(_tool(schema), bank)
    assert args == {
        "order_id": "ord_7",
        "message_ids": ["m_2"],
        "token": "tok_9",
        "to": ["m_2"],
        "title": "Weekly sync",
    }
    bank.learn(ToolResult.error("business", "nope"))  # errors teach nothing
    assert bank.candidates("order_id") == ["ord_7"]


def test_manifest_arguments_win_and_star_applies_to_all():
    tool = _tool(
        {
            "type": "object",
            "properties": {"repo_path": {"type": "string"}, "n": {"type": "integer"}},
            "required": ["repo_path", "n"],
        },
        name="git_log",
    )
    probe = {"*": {"repo_path": "/scratch/repo"}, "git_log": {"n": 3}}
    assert planned_args(tool, probe, None) == ({"repo_path": "/scratch/repo", "n": 3}, "manifest")
    assert planned_args(tool, {"*": {"repo_path": "/r"}}, None) == (
        {"repo_path": "/r", "n": 1},
        "manifest+generated",
    )


def test_probe_order_puts_producers_first_and_destroyers_last():
    tools = [
        _tool({}, "delete_all", destructive_hint=True),
        _tool({}, "get_order"),
        _tool({}, "list_orders"),
        _tool({}, "checkout"),
    ]
    order = [t.name for t in probe_order(tools, [("list_orders", "get_order"), ("checkout", "list_orders")])]
    assert order == ["checkout", "list_orders", "get_order", "delete_all"]


# --- real servers --------------------------------------------------------------------------------------

REAL = ("filesystem", "memory", "git", "time", "sqlite", "fetch", "postgres", "github", "brave-search")


MISSING_TABLE = "SELECT * FROM no_such_table"


@pytest.fixture(scope="module")
def real_results(tmp_path_factory) -> dict[str, ServerOutcome | ToolResult]:
    """Every real server validated once, all at once, each against its own scratch targets; plus sqlite probed
    on a missing table, and that same call made directly (to see what the server itself says)."""
    cache, statuses = ensure_real_servers(list(REAL))
    assert all(s.startswith("installed") for s in statuses.values()), statuses
    root = tmp_path_factory.mktemp("validate")
    env = Environment.resolve()
    sqlite = default_specs("sqlite")[0]
    missing = sqlite.model_copy(update={"probe_args": {"read_query": {"query": MISSING_TABLE}}})

    async def direct(ctx: LaunchContext) -> ToolResult:
        ready = await asyncio.to_thread(resolve, missing, ctx)
        async with Connection.from_spec(ready) as conn:
            return await conn.call("read_query", {"query": MISSING_TABLE})

    async def run_all() -> dict[str, ServerOutcome | ToolResult]:
        # Variants of sqlite get scratch roots of their own: scratch folders are per server id.
        ctx, ctx_missing, ctx_direct = (
            LaunchContext(root, cache, root / "scratch" / n) for n in ("a", "b", "c")
        )
        checks = [check_server(env, s, ctx, Check(30)) for s in default_specs(*REAL)]
        try:
            *outcomes, missing_outcome, raw = await asyncio.gather(
                *checks, check_server(env, missing, ctx_missing, Check(30)), direct(ctx_direct)
            )
        finally:
            for c in (ctx, ctx_missing, ctx_direct):
                await asyncio.to_thread(c.close)
        return {
            **dict(zip(REAL, outcomes, strict=True)),
            "sqlite-missing": missing_outcome,
            "sqlite-direct": raw,
        }

    return asyncio.run(run_all())


@pytest.mark.parametrize("server", ["filesystem", "memory", "git", "time", "sqlite", "fetch"])
def test_offline_real_servers_pass_all_three_stages(real_results, server):
    validation = real_results[server].validation
    assert validation.started, validation.reason
    assert validation.tools, "listed no tools"
    short = {t.tool: t.reason for t in validation.tools if t.stage < 3}
    assert not short, short
    assert all(t.call_ms is not None and t.availability == "live" for t in validation.tools)
    assert validation.start_ms and validation.list_ms is not None


def test_writes_landed_in_scratch_only(real_results):
    fs = {t.tool: t for t in real_results["filesystem"].validation.tools}
    written = Path(fs["write_file"].arguments["path"])
    assert "scratch" in written.parts and written.name == "written.txt"


def test_postgres_runs_against_a_throwaway_cluster_or_says_why_not(real_results):
    validation = real_results["postgres"].validation
    if find_pg_bin() is None:
        assert not validation.started and "PostgreSQL is not installed" in validation.reason
    else:
        assert validation.started, validation.reason
        assert [(t.tool, t.stage) for t in validation.tools] == [("query", 3)]


def test_brave_search_without_a_key_fails_at_stage_one(real_results):
    validation = real_results["brave-search"].validation
    assert not validation.started and not validation.tools
    assert "before finishing the MCP handshake" in validation.reason and "BRAVE_API_KEY" in validation.reason


def test_github_lists_its_tools_but_none_is_usable(real_results):
    validation = real_results["github"].validation
    assert validation.started and len(validation.tools) >= 20
    assert max(t.stage for t in validation.tools) == 2
    probed = [t for t in validation.tools if t.arguments is not None]
    assert probed and all(t.stage == 2 and t.error_class == "unavailable" for t in probed)
    unprobed = [t for t in validation.tools if t.arguments is None]
    assert unprobed and all("not probed" in t.reason for t in unprobed)  # writers: no scratch target for them
    assert {t.availability for t in validation.tools} == {"schema-only"}


def test_sqlite_error_as_text_is_caught_at_stage_three(real_results):
    raw = real_results["sqlite-direct"]
    assert raw.is_error is False and "no such table" in raw.text  # the server does not flag it
    read_query = next(t for t in real_results["sqlite-missing"].validation.tools if t.tool == "read_query")
    assert read_query.stage == 2 and "Database error" in read_query.reason
    assert read_query.error_class == "not_found" and read_query.availability == "live"


async def test_a_real_server_that_is_not_installed_says_so(tmp_path):
    spec = default_specs("time")[0]
    ctx = LaunchContext(tmp_path, tmp_path / "servers", tmp_path / "scratch")
    outcome = await check_server(Environment.resolve(), spec, ctx, Check(5))
    assert not outcome.validation.started and "cworld servers install" in outcome.validation.reason
