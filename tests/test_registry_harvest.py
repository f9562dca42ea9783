"""`cworld registry harvest`: bad servers never stall or damage it, it resumes, and its catalog loads.

The bad servers are bins of one local npm package (tests/fixtures/harvest_bad), installed offline like
any harvested package. The re-harvest of three real servers needs the package registries (marked
`registries`: it runs where `npm ping` answers).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from registry_helpers import make_environment

from cworld.cli.main import cli
from cworld.environment import Environment, Workspace
from cworld.registry.build import build_registry
from cworld.registry.harvest.catalog import SUMMARY, harvested_specs
from cworld.registry.harvest.entries import HarvestEntry, load_harvest_list
from cworld.registry.harvest.jail import privileged
from cworld.registry.harvest.package import install
from cworld.registry.harvest.run import HarvestOptions, harvest, pending, restore_states, write_summary
from cworld.registry.manifest import load_catalog, load_manifest
from cworld.registry.tools import environment_tools

BAD = Path(__file__).parent / "fixtures" / "harvest_bad"
REPO_ENV = Environment.resolve()
needs_node = pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None,
                                reason="needs node and npm")


def _bad_entries(target: Path) -> list[HarvestEntry]:
    names = ["hangs", "floods", "exits", "crashes", "refuses", "lists-nothing", "trespasses", "good"]
    env = {"trespasses": {"CWORLD_FIXTURE_TARGET": str(target)}}
    return [HarvestEntry(id=f"bad-{n}", npm=str(BAD), command=n, env=env.get(n, {}), category="utilities")
            for n in names]


def _orphans() -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "cworld-harvest-orphan" in line]


@needs_node
def test_bad_servers_are_classified_and_never_stall_or_damage_the_harvest(tmp_path):
    target = tmp_path / "outside" / "trespass.txt"
    target.parent.mkdir()
    options = HarvestOptions(out=tmp_path / "catalog", workspace=tmp_path / "ws", jobs=3,
                             handshake_timeout_s=4, list_timeout_s=4)
    started = time.monotonic()
    outcomes = {o.id: o for o in asyncio.run(harvest(_bad_entries(target), options))}
    elapsed = time.monotonic() - started

    assert elapsed < 60, f"the harvest took {elapsed:.0f}s: a bad server stalled it"
    failures = {sid: o.failure for sid, o in outcomes.items()}
    assert failures == {
        "bad-hangs": "handshake_timeout",
        "bad-floods": failures["bad-floods"],  # stopped by its file-size limit, or still silent at the deadline
        "bad-exits": "exited",
        "bad-crashes": "crashed",
        "bad-refuses": "list_refused",
        "bad-lists-nothing": "listed_nothing",
        "bad-trespasses": None,
        "bad-good": None,
    }
    assert failures["bad-floods"] in {"exited", "handshake_timeout"}
    assert "FIXTURE_SECRET_TOKEN environment variable is required" in outcomes["bad-exits"].stderr_tail
    assert len(outcomes["bad-floods"].stderr_tail) <= 600
    good = json.loads((options.out / "bad-good.json").read_text())
    assert [t["name"] for t in good["tools"]] == ["echo"]
    assert good["provenance"]["env"] == ["FIXTURE_API_KEY"]  # found in its code, given a placeholder
    assert good["provenance"]["launch"] == ["good"] and good["provenance"]["license"] == "MIT"
    summary = json.loads((options.out / SUMMARY).read_text())
    assert (summary["servers_tried"], summary["servers_ok"], summary["tools"]) == (8, 2, 2)
    assert not (options.out / "bad-hangs.json").exists()
    if privileged():
        assert not target.exists(), "a harvested server wrote outside its scratch folder"
        assert outcomes["bad-trespasses"].wrote_outside == ["/tmp/cworld-harvest-trespass.txt"]
        assert not Path("/tmp/cworld-harvest-trespass.txt").exists()
        assert _orphans() == [], "a harvested server's child outlived the harvest"


@needs_node
def test_harvest_resumes_and_retries_only_what_is_asked(tmp_path):
    entries = _bad_entries(tmp_path / "t.txt")
    picked = [e for e in entries if e.id in {"bad-good", "bad-exits"}]
    options = HarvestOptions(out=tmp_path / "catalog", workspace=tmp_path / "ws", handshake_timeout_s=4)
    assert len(asyncio.run(harvest(picked, options))) == 2
    assert asyncio.run(harvest(picked, options)) == []  # resumed: nothing left to do
    retried = asyncio.run(harvest(picked, HarvestOptions(**{**options.__dict__, "retry_failed": True})))
    assert [o.id for o in retried] == ["bad-exits"]
    changed = [e.model_copy(update={"args": ["--changed"]}) if e.id == "bad-good" else e for e in picked]
    assert [o.id for o in asyncio.run(harvest(changed, options))] == ["bad-good"]


def test_committed_harvest_list_is_broad_and_valid():
    entries = load_harvest_list(REPO_ENV.registry / "harvest.yaml")
    assert len(entries) >= 300
    assert len({e.category for e in entries}) >= 15
    assert {e.registry for e in entries} == {"npm", "pypi"}
    assert all("@" in (e.npm or "")[1:] or "==" in (e.pypi or "") for e in entries), "versions are pinned"


def test_committed_catalog_loads_as_schema_only_with_provenance():
    specs = harvested_specs(REPO_ENV, {s.id for s in load_manifest(REPO_ENV)})
    assert specs, "registry/catalogs/harvested/ holds no server"
    summary = json.loads((REPO_ENV.registry / "catalogs" / "harvested" / SUMMARY).read_text())
    assert summary["servers_ok"] == len(specs)
    total = 0
    for spec in specs:
        tools = load_catalog(REPO_ENV, spec)
        data = json.loads((REPO_ENV.registry / spec.catalog).read_text())  # type: ignore[operator]
        prov = data["provenance"]
        assert prov["package"] and prov["version"] and prov["launch"] and prov["harvested_at"], spec.id
        assert all(t.availability == "schema-only" and t.server == spec.id for t in tools)
        total += len(tools)
    assert total == summary["tools"]


def test_build_loads_the_harvested_catalog_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")
    env = make_environment(tmp_path / "env", [{"id": "math", "kind": "sandbox", "transport": "memory",
                                               "app": "math"}])
    folder = env.registry / "catalogs" / "harvested"
    folder.mkdir(parents=True)
    record = {"server": "acme-crm-mcp", "category": "crm", "summary": "Acme CRM",
              "provenance": {"package": "acme-crm-mcp", "version": "1.0.0"},
              "tools": [{"name": "list_deals", "description": "List deals.",
                         "input_schema": {"type": "object", "properties": {"stage": {"type": "string"}}},
                         "annotations": {"read_only_hint": True, "title": "Deals"}}],
              "resources": [], "prompts": []}
    (folder / "acme-crm-mcp.json").write_text(json.dumps(record))
    (folder / SUMMARY).write_text("{}")
    ws = Workspace(tmp_path / "ws")
    plain = asyncio.run(build_registry(env, ws, with_index=False))
    assert [s.server for s in plain.servers] == ["math"]
    report = asyncio.run(build_registry(env, ws, with_index=False, harvested=True))
    assert [s.server for s in report.servers] == ["math", "acme-crm-mcp"]
    tool = environment_tools(env, ws).find("acme-crm-mcp/list_deals")
    assert (tool.availability, tool.server_kind, tool.category) == ("schema-only", "catalog", "crm")
    assert tool.annotations.read_only_hint is True


def test_show_harvest_prints_servers_categories_and_failure_classes():
    result = CliRunner().invoke(cli, ["registry", "show", "--harvest"])
    assert result.exit_code == 0, result.output
    assert "failure classes" in result.output and "by category" in result.output
    as_json = CliRunner().invoke(cli, ["registry", "show", "--harvest", "--json"])
    assert json.loads(as_json.output)["servers_ok"] >= 1


# --- against the package registries -----------------------------------------------------------------

SMALL = ("mcp-server-time", "browsermcp-mcp", "next-ai-drawio-mcp-server")
"""Three small servers of the committed catalog, one from PyPI: quick to install, no credentials."""


def _registries_reachable() -> bool:
    try:
        return subprocess.run(["npm", "ping"], capture_output=True, timeout=15).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.registries
@needs_node
def test_reharvest_of_three_small_servers_matches_the_committed_catalog(tmp_path):
    if not _registries_reachable():
        pytest.skip("the package registries are not reachable")
    entries = [e for e in load_harvest_list(REPO_ENV.registry / "harvest.yaml") if e.id in SMALL]
    assert len(entries) == 3
    out = tmp_path / "catalog"
    outcomes = asyncio.run(harvest(entries, HarvestOptions(out=out, workspace=tmp_path / "ws", jobs=3)))
    assert [o.failure for o in outcomes] == [None, None, None], [o.detail for o in outcomes]
    committed = REPO_ENV.registry / "catalogs" / "harvested"
    for sid in SMALL:
        fresh, kept = (json.loads((d / f"{sid}.json").read_text()) for d in (out, committed))
        assert fresh["tools"] == kept["tools"], sid
        for key in ("package", "version", "license", "integrity", "launch", "env"):
            assert fresh["provenance"][key] == kept["provenance"][key], (sid, key)


def test_harvest_list_errors_name_the_entry(tmp_path):
    path = tmp_path / "harvest.yaml"
    path.write_text(yaml.safe_dump({"servers": [{"id": "x", "npm": "a@1", "pypi": "b==1"}]}))
    result = subprocess.run([sys.executable, "-m", "cworld", "registry", "harvest", "--list", str(path)],
                            capture_output=True, text=True, timeout=120, env={**os.environ, "CWORLD_WORKSPACE": str(tmp_path)})
    assert result.returncode != 0
    assert "servers[0] (id=x)" in result.stderr and "exactly one of" in result.stderr
    assert "Traceback" not in result.stderr


@needs_node
def test_a_harvested_server_that_validates_offline_is_installed_and_built_live(tmp_path, monkeypatch):
    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")
    monkeypatch.delenv("FIXTURE_API_KEY", raising=False)
    env = make_environment(tmp_path / "env", [{"id": "math", "kind": "sandbox", "transport": "memory",
                                               "app": "math"}])
    entries = [e for e in _bad_entries(tmp_path / "t.txt") if e.id in {"bad-good", "bad-hangs"}]
    (env.registry / "harvest.yaml").write_text(
        yaml.safe_dump({"servers": [e.model_dump(exclude_defaults=True) for e in entries]}))
    options = HarvestOptions(out=env.registry / "catalogs" / "harvested", workspace=tmp_path / "hw",
                             handshake_timeout_s=4)
    asyncio.run(harvest(entries, options))
    ws = Workspace(tmp_path / "ws")
    from cworld.errors import UsageError
    from cworld.registry.harvest.live import install_harvested, live_specs

    with pytest.raises(UsageError, match="was not harvested"):
        asyncio.run(install_harvested(env, ws, "bad-hangs"))
    done = asyncio.run(install_harvested(env, ws, "bad-good"))
    assert done.kept, done.validation
    assert done.spec.credentials == ["FIXTURE_API_KEY"] and "{servers}" in " ".join(done.spec.args)
    assert list(live_specs(ws.root / "servers")) == ["bad-good"]
    report = asyncio.run(build_registry(env, ws, with_index=False, harvested=True))
    assert [(s.server, s.kind) for s in report.servers] == [("math", "sandbox"), ("bad-good", "real")]
    tool = environment_tools(env, ws).find("bad-good/echo")
    assert (tool.availability, tool.server_kind) == ("live", "real")


@needs_node
def test_a_server_that_says_what_it_misses_is_started_again_with_it(tmp_path):
    entry = HarvestEntry(id="bad-asks", npm=str(BAD), command="asks", category="utilities")
    options = HarvestOptions(out=tmp_path / "catalog", workspace=tmp_path / "ws", handshake_timeout_s=10)
    [outcome] = asyncio.run(harvest([entry], options))
    assert (outcome.status, outcome.tools) == ("ok", 1), (outcome.detail, outcome.stderr_tail)
    provenance = json.loads((tmp_path / "catalog" / "bad-asks.json").read_text())["provenance"]
    assert provenance["launch"] == ["asks", "serve", "--workspace-dir", "."]
    assert "FIXTURE_ACCOUNT_ID" in provenance["env"]


def test_a_fresh_workspace_resumes_from_the_committed_summary(tmp_path):
    out = tmp_path / "catalog"
    entries = [HarvestEntry(id=f"s-{n}", npm=f"s-{n}@1.0.0", category="utilities") for n in ("ok", "failed", "changed")]
    lines = [{"id": e.id, "registry": "npm", "package": e.package, "category": "utilities",
              "status": "ok" if e.id == "s-ok" else "failed", "tools": 1 if e.id == "s-ok" else 0,
              "failure": None if e.id == "s-ok" else "exited"} for e in entries]
    lines[2]["digest"] = "an-older-entry"
    out.mkdir()
    (out / SUMMARY).write_text(json.dumps({"servers": lines}))
    (out / "s-ok.json").write_text(json.dumps({"server": "s-ok", "tools": []}))
    options = HarvestOptions(out=out, workspace=tmp_path / "ws")
    assert restore_states(entries, options) == 2
    assert [e.id for e in pending(entries, options)] == ["s-changed"]
    assert [e.id for e in pending(entries, HarvestOptions(**{**options.__dict__, "retry_failed": True}))] == [
        "s-failed", "s-changed"]
    assert write_summary(entries, options)["servers_ok"] == 1


@needs_node
def test_harvesting_some_entries_keeps_the_whole_list_in_the_summary(tmp_path):
    entries = _bad_entries(tmp_path / "t.txt")
    options = HarvestOptions(out=tmp_path / "catalog", workspace=tmp_path / "ws", handshake_timeout_s=4)
    good = [e for e in entries if e.id == "bad-good"]
    exits = [e for e in entries if e.id == "bad-exits"]
    asyncio.run(harvest(good, options))
    asyncio.run(harvest(exits, options, listed=good + exits))
    summary = json.loads((tmp_path / "catalog" / SUMMARY).read_text())
    assert [s["id"] for s in summary["servers"]] == ["bad-good", "bad-exits"] and summary["servers_ok"] == 1


@needs_node
def test_a_native_program_shipped_as_a_bin_is_started_without_node(tmp_path):
    package = tmp_path / "native-pkg"
    (package / "bin").mkdir(parents=True)
    shutil.copy("/bin/true", package / "bin" / "native")
    (package / "package.json").write_text(json.dumps({"name": "native-pkg", "version": "1.0.0",
                                                      "bin": {"native": "bin/native"}}))
    installed = install(HarvestEntry(id="native-pkg", npm=str(package), args=["server", "start"]), tmp_path / "p")
    assert Path(installed.command[0]).name == "native" and installed.command[1:] == ["server", "start"]
    assert installed.launch == ["native", "server", "start"]
