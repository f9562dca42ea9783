"""`cworld registry build`: parallel validation with a timeout each, outputs on disk, incremental rebuilds."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from registry_helpers import default_specs, ensure_real_servers, make_environment

from cworld.data_model import ToolSpec, read_jsonl
from cworld.environment import Environment, Workspace
from cworld.registry.build import BuildReport, build_registry, load_report, summary

FIXTURES = Path(__file__).parent / "fixtures" / "mcp_servers"
HANG_TIMEOUT_S = 3


def _environment(root: Path) -> Environment:
    """math (sandbox), time (real), a server that never answers, one that exits at once, and a catalog."""
    python = sys.executable
    servers = [
        {"id": "math", "kind": "sandbox", "transport": "memory", "app": "math"},
        *default_specs("time"),
        {
            "id": "hangs",
            "kind": "real",
            "command": python,
            "args": [str(FIXTURES / "silent.py")],
            "timeout_s": HANG_TIMEOUT_S,
        },
        {"id": "exits", "kind": "real", "command": python, "args": [str(FIXTURES / "exit_early.py")]},
        {"id": "crm", "kind": "catalog", "transport": "catalog", "catalog": "catalogs/helio_crm.json"},
    ]
    env = make_environment(root, servers)
    (env.registry / "catalogs").mkdir()
    shutil.copy(Environment.resolve().registry / "catalogs" / "helio_crm.json", env.registry / "catalogs")
    return env


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    cache, statuses = ensure_real_servers(["time"])
    assert statuses["time"].startswith("installed"), statuses
    root = tmp_path_factory.mktemp("build")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CWORLD_EMBED_MODEL", "hash")
        env, ws = _environment(root / "env"), Workspace(root / "ws")
        first = asyncio.run(build_registry(env, ws, servers_dir=cache))
        yield env, ws, cache, first


def test_build_survives_broken_servers_and_writes_everything(setup):
    env, ws, _, report = setup
    by_id = {s.server: s for s in report.servers}
    assert list(by_id) == ["math", "time", "hangs", "exits", "crm"]
    hangs = by_id["hangs"]
    assert not hangs.started and f"did not finish the MCP handshake within {HANG_TIMEOUT_S}s" in hangs.reason
    assert hangs.total_ms < (HANG_TIMEOUT_S + 5) * 1000
    assert not by_id["exits"].started and "exited with code 1" in by_id["exits"].reason
    assert [t.stage for t in by_id["time"].tools] == [3, 3]
    assert sum(t.stage == 3 for t in by_id["math"].tools) >= len(by_id["math"].tools) - 2
    assert {t.availability for t in by_id["crm"].tools} == {"schema-only"}

    out = ws.root / "registry"
    tools = read_jsonl(out / "tools.jsonl", ToolSpec)
    assert {t.server for t in tools} == {"math", "time", "crm"}
    assert {t.availability for t in tools if t.server == "time"} == {"live"}
    assert all(t.category == "math" for t in tools if t.server == "math")
    assert BuildReport.model_validate_json((out / "validation.json").read_text()).servers == report.servers
    assert report.index.startswith("built") and (out / "index" / "meta.json").is_file()
    assert report.graph.startswith("built") and (out / "index" / "graph.json").is_file()
    assert not any((ws.root / "scratch").iterdir())  # the run's scratch targets are gone


def test_summary_counts_per_server_and_stage(setup):
    _, _, _, report = setup
    data = summary(report)
    assert data["servers"]["time"]["stages"] == {
        "unavailable": 0,
        "available": 0,
        "invocable": 0,
        "usable": 2,
    }
    assert data["servers"]["crm"]["stages"] == {"schema_only": 12}
    assert data["servers"]["hangs"]["started"] is False and "handshake" in data["servers"]["hangs"]["reason"]
    live = sum(len(s.tools) for s in report.servers if s.kind != "catalog")
    assert sum(data["stages"].values()) == live
    assert data["tools"]["total"] == live + 12 == data["tools"]["live"] + data["tools"]["schema_only"]


def test_unchanged_servers_are_reused_and_the_index_kept(setup):
    env, ws, cache, first = setup
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CWORLD_EMBED_MODEL", "hash")
        again = asyncio.run(build_registry(env, ws, servers_dir=cache))
    by_id = {s.server: s for s in again.servers}
    assert by_id["math"].reused and by_id["time"].reused
    assert [t.model_dump() for t in by_id["time"].tools] == [
        t.model_dump() for t in first.server("time").tools
    ]
    assert not by_id["hangs"].reused  # a server that never started is always tried again
    assert again.index.startswith("unchanged") and again.tools_hash == first.tools_hash


def test_only_rechecks_the_named_server_and_a_changed_entry_is_revalidated(setup, tmp_path):
    env, ws, cache, _ = setup
    text = (env.registry / "servers.yaml").read_text()
    (env.registry / "servers.yaml").write_text(text.replace("timezone: Europe/Paris", "timezone: Asia/Tokyo"))
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("CWORLD_EMBED_MODEL", "hash")
            report = asyncio.run(build_registry(env, ws, servers_dir=cache, only=["time"]))
    finally:
        (env.registry / "servers.yaml").write_text(text)
    time_result = report.server("time")
    assert time_result is not None and not time_result.reused
    assert time_result.tools[0].arguments == {"timezone": "Asia/Tokyo"}
    assert [s.server for s in report.servers] == ["math", "time", "hangs", "exits", "crm"]  # the rest kept
    assert load_report(ws) == report


def test_cli_build_prints_json_counts(setup, tmp_path, monkeypatch):
    from cworld.cli import main

    env, _, cache, _ = setup
    monkeypatch.setitem(main.COMMANDS, "registry", "registry")
    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "servers").symlink_to(cache)
    args = ["--env", str(env.root), "--workspace", str(ws), "registry", "build", "--json", "--only", "math"]
    result = CliRunner().invoke(main.cli, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert list(data["servers"]) == ["math"] and data["servers"]["math"]["started"] is True
    assert data["stages"]["usable"] >= 20 and data["index"].startswith("built")
    shown = CliRunner().invoke(main.cli, ["--workspace", str(ws), "--env", str(env.root), "registry", "show"])
    assert shown.exit_code == 0 and "math" in shown.stdout and "usable" in shown.stdout
