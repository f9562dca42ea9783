"""`cworld servers install`: per-server venvs and one npm prefix, idempotent stamps, failures kept apart."""

from __future__ import annotations

import json
import time

import pytest
from registry_helpers import ensure_real_servers, make_environment

from cworld.data_model import ServerSpec
from cworld.environment import Environment, Workspace
from cworld.registry.install import (
    entry_path,
    install_one,
    install_servers,
    installed_status,
    npm_package_name,
    server_status,
    stamp_path,
)


@pytest.fixture(scope="module")
def installed():
    return ensure_real_servers()


def _spec(**install: object) -> ServerSpec:
    return ServerSpec.model_validate({"id": "x", "kind": "real", "install": install})


def test_npm_names_and_entries(tmp_path):
    assert (
        npm_package_name("@modelcontextprotocol/server-memory@2026.8.31")
        == "@modelcontextprotocol/server-memory"
    )
    assert npm_package_name("left-pad") == "left-pad"
    assert entry_path(_spec(npm="@a/b@1"), tmp_path) == tmp_path / "npm/node_modules/@a/b/dist/index.js"
    assert entry_path(_spec(pypi="mcp-server-time==1"), tmp_path) == tmp_path / "venvs/x/bin/mcp-server-time"


def test_status_follows_the_stamp(tmp_path):
    spec = _spec(pypi="tool-a==1", entry="tool-a")
    assert server_status(spec, tmp_path) == "not installed"
    stamp_path(tmp_path, "x").parent.mkdir(parents=True)
    stamp_path(tmp_path, "x").write_text(json.dumps({"install": spec.install.model_dump(mode="json")}))
    assert server_status(spec, tmp_path).startswith("broken")  # stamp but no console script
    script = entry_path(spec, tmp_path)
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    assert server_status(spec, tmp_path) == "installed (tool-a==1)"
    assert server_status(_spec(pypi="tool-a==2", entry="tool-a"), tmp_path).startswith("outdated")


def test_a_failure_is_reported_and_stops_nothing(tmp_path):
    broken = ServerSpec.model_validate(
        {"id": "broken", "kind": "real", "install": {"pypi": str(tmp_path / "no-such-package")}}
    )
    ok = ServerSpec.model_validate(
        {"id": "fine", "kind": "real", "install": {"pypi": "tool-b==1", "entry": "b"}}
    )
    script = entry_path(ok, tmp_path)
    script.parent.mkdir(parents=True)
    script.write_text("")
    stamp_path(tmp_path, "fine").parent.mkdir(parents=True)
    stamp_path(tmp_path, "fine").write_text(json.dumps({"install": ok.install.model_dump(mode="json")}))
    seen: list[str] = []
    outcomes = install_servers([broken, ok], tmp_path, on_done=lambda o: seen.append(o.server))
    by_id = {o.server: o for o in outcomes}
    assert by_id["broken"].status == "failed" and "pip" in by_id["broken"].detail
    assert by_id["fine"].status == "skipped"
    assert sorted(seen) == ["broken", "fine"]
    assert not stamp_path(tmp_path, "broken").exists()


def test_real_servers_install_once_then_skip(installed):
    cache, statuses = installed
    assert all(s.startswith("installed") for s in statuses.values()), statuses
    started = time.monotonic()
    _, again = ensure_real_servers()
    assert again == statuses and time.monotonic() - started < 10
    sqlite_python = cache / "venvs" / "sqlite" / "bin" / "python"
    versions = sorted(
        p.name for p in (sqlite_python.parent.parent / "lib").glob("python*/site-packages/mcp-*")
    )
    assert versions and all(v.startswith("mcp-1.") for v in versions), versions  # mcp<2 in sqlite's own venv
    assert (cache / "npm" / "node_modules" / "@modelcontextprotocol" / "server-filesystem").is_dir()


def test_install_one_skips_when_stamped(installed):
    cache, _ = installed
    spec = next(s for s in _default_specs() if s.id == "time")
    outcome = install_one(spec, cache)
    assert outcome.status == "skipped" and outcome.seconds == 0.0


def test_installed_status_for_the_doctor(tmp_path, installed):
    cache, statuses = installed
    env = make_environment(tmp_path / "env", [s for s in _default_specs() if s.id in ("time", "memory")])
    empty = installed_status(env, Workspace(tmp_path / "ws"))
    assert empty == {"memory": "not installed", "time": "not installed"}
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "servers").symlink_to(cache)
    assert installed_status(env, Workspace(tmp_path / "ws")) == {k: statuses[k] for k in ("memory", "time")}


def _default_specs() -> list[ServerSpec]:
    from cworld.registry.manifest import load_manifest

    return load_manifest(Environment.resolve())


def test_cli_install_and_status(installed, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from cworld.cli import main

    cache, statuses = installed
    monkeypatch.setitem(main.COMMANDS, "servers", "servers")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "servers").symlink_to(cache)
    base = ["--workspace", str(tmp_path / "ws")]
    result = CliRunner().invoke(main.cli, [*base, "servers", "install", "--only", "time", "--json"])
    assert result.exit_code == 0, result.output
    assert [(o["server"], o["status"]) for o in json.loads(result.stdout)] == [("time", "skipped")]
    shown = CliRunner().invoke(main.cli, [*base, "servers", "status", "--json"])
    assert json.loads(shown.stdout) == statuses
    bad = CliRunner().invoke(main.cli, [*base, "servers", "install", "--only", "nope"])
    assert bad.exit_code != 0 and "no installable server ['nope']" in str(bad.exception)
