"""The manifest, catalogs and launch placeholders: what the registry indexes and how servers are launched."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from registry_helpers import make_environment

from cworld.data_model import ServerSpec
from cworld.environment import Environment
from cworld.errors import ContentError
from cworld.registry.launch import LaunchContext, derived_command, expand, needed_services, resolve
from cworld.registry.manifest import load_catalog, load_manifest, server_by_id

REAL = ("filesystem", "memory", "git", "time", "sqlite", "fetch", "postgres", "github", "brave-search")


@pytest.fixture(scope="module")
def default_specs() -> list[ServerSpec]:
    return load_manifest(Environment.resolve())


def _env_with_text(tmp_path: Path, text: str) -> Environment:
    env = make_environment(tmp_path, [])
    (env.registry / "servers.yaml").write_text(text)
    return env


def test_every_sandbox_app_is_listed_and_every_listed_app_exists(default_specs):
    from cworld.sandbox.catalog import all_apps

    listed = {s.app for s in default_specs if s.kind == "sandbox"}
    apps = {a.name for a in all_apps()}
    assert not apps - listed, f"add these sandbox apps to registry/servers.yaml: {sorted(apps - listed)}"
    assert not listed - apps, f"servers.yaml lists sandbox apps that do not exist: {sorted(listed - apps)}"
    for spec in default_specs:
        if spec.kind == "sandbox":
            assert spec.transport == "memory" and spec.id == spec.app


def test_real_servers_are_launchable_and_hold_no_secrets(default_specs, tmp_path):
    real = {s.id: s for s in default_specs if s.kind == "real"}
    assert set(REAL) <= set(real)
    for spec in real.values():
        assert spec.install is not None and (spec.install.npm or spec.install.pypi)
        command, _ = derived_command(spec, tmp_path)
        assert command, spec.id
        for value in spec.env.values():
            assert "{" in value or "/" in value  # placeholders or paths, never a literal secret
    assert real["github"].credentials == ["GITHUB_PERSONAL_ACCESS_TOKEN"]
    assert real["brave-search"].credentials == ["BRAVE_API_KEY"]
    assert real["sqlite"].install.pip_extra == ["mcp<2"]
    assert "--allow-private-ips" in real["fetch"].args and real["fetch"].probe_args["fetch"]["raw"] is True


def test_writers_point_at_scratch_only(default_specs):
    for sid in ("filesystem", "memory", "git", "sqlite"):
        spec = server_by_id(default_specs, sid)
        launch = " ".join([*spec.args, *spec.env.values()])
        assert "{scratch" in launch, sid
        for args in spec.probe_args.values():
            for value in json.dumps(args).split('"'):
                assert not value.startswith("/"), f"{sid} probes an absolute path: {value}"


def test_catalog_tools_are_schema_only(default_specs):
    env = Environment.resolve()
    crm = server_by_id(default_specs, "helio-crm")
    tools = load_catalog(env, crm)
    assert len(tools) >= 10
    assert {t.availability for t in tools} == {"schema-only"} and {t.server_kind for t in tools} == {
        "catalog"
    }
    delete = next(t for t in tools if t.name == "delete_contact")
    assert delete.annotations.destructive_hint is True and delete.category == "crm"


def test_yaml_error_names_file_and_line(tmp_path):
    env = _env_with_text(tmp_path, "servers:\n  - id: a\n    kind: [real\n")
    with pytest.raises(ContentError, match=r"servers\.yaml: line \d+, column \d+: invalid YAML"):
        load_manifest(env)


def test_schema_error_names_entry_and_field(tmp_path):
    env = _env_with_text(tmp_path, "servers:\n  - {id: t, kind: real, command: x, args: 5}\n")
    with pytest.raises(
        ContentError, match=r"servers\.yaml: servers\[0\] \(id=t\)\.args: Input should be a valid list"
    ):
        load_manifest(env)
    env = _env_with_text(tmp_path, "servers:\n  - {id: t, kind: remote}\n")
    with pytest.raises(ContentError, match=r"servers\[0\] \(id=t\)\.kind"):
        load_manifest(env)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ("- {id: a, kind: real, command: x}\n  - {id: a, kind: real, command: y}", "'a' is used twice"),
        ("- {id: s, kind: sandbox, transport: memory}", "needs `app: NAME`"),
        ("- {id: c, kind: catalog, transport: catalog, catalog: catalogs/nope.json}", "does not exist"),
        ("- {id: r, kind: real}", "needs `command` or `install`"),
        ("- {id: r, kind: real, command: x, credentials: ['sk-123 secret']}", "list NAMES, never values"),
        ("- {id: 'a/b', kind: real, command: x}", "hold no '/'"),
    ],
)
def test_kind_rules(tmp_path, entries, message):
    env = _env_with_text(tmp_path, f"servers:\n  {entries}\n")
    with pytest.raises(ContentError, match=message):
        load_manifest(env)


def test_catalog_errors_name_file_and_item(tmp_path):
    env = make_environment(
        tmp_path, [{"id": "c", "kind": "catalog", "transport": "catalog", "catalog": "c.json"}]
    )
    (env.registry / "c.json").write_text("[]")
    spec = load_manifest(env)[0]
    assert load_catalog(env, spec) == []
    (env.registry / "c.json").write_text('[{"name": "a", "inputSchema": {"type": "array"}}]')
    with pytest.raises(ContentError, match=r"c\.json: \[0\] \(a\)\.input_schema"):
        load_catalog(env, spec)
    (env.registry / "c.json").write_text('[{"name": "a", "colour": "red"}]')
    with pytest.raises(ContentError, match=r"unknown field\(s\) \['colour'\]"):
        load_catalog(env, spec)
    (env.registry / "c.json").write_text("[{")
    with pytest.raises(ContentError, match=r"c\.json: line 1: invalid JSON"):
        load_catalog(env, spec)


def test_catalog_accepts_mcp_wire_spelling(tmp_path):
    env = make_environment(
        tmp_path, [{"id": "c", "kind": "catalog", "transport": "catalog", "catalog": "c.json"}]
    )
    wire = {
        "name": "ping",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    }
    (env.registry / "c.json").write_text(json.dumps([wire]))
    tool = load_catalog(env, load_manifest(env)[0])[0]
    assert tool.id == "c/ping" and tool.annotations.read_only_hint is True


def test_placeholders_make_fresh_scratch_targets(tmp_path):
    ctx = LaunchContext(tmp_path / "ws", tmp_path / "ws" / "servers", tmp_path / "scratch")
    folder = Path(expand("{scratch}", ctx, "fs"))
    assert folder == tmp_path / "scratch" / "fs" and (folder / "notes.txt").read_text().startswith(
        "first line"
    )
    repo = Path(expand("{scratch:git}", ctx, "git"))
    log = subprocess.run(["git", "log", "--oneline"], cwd=repo, capture_output=True, text=True, check=True)
    assert len(log.stdout.splitlines()) == 1
    db = Path(expand("{scratch:sqlite}", ctx, "db"))
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == 3
    assert expand({"a": ["{workspace}/x", '{"json": 1}']}, ctx, "fs") == {
        "a": [f"{tmp_path}/ws/x", '{"json": 1}']
    }
    assert str(tmp_path) in expand("{servers}", ctx, "fs")


def test_resolve_derives_launch_from_install(tmp_path):
    ctx = LaunchContext(tmp_path, tmp_path / "servers", tmp_path / "scratch")
    spec = ServerSpec.model_validate(
        {
            "id": "sq",
            "kind": "real",
            "install": {"pypi": "mcp-server-sqlite==1", "entry": "mcp-server-sqlite"},
            "args": ["--db-path", "{scratch:sqlite}"],
            "probe_args": {"read_query": {"query": "{scratch}"}},
        }
    )
    ready = resolve(spec, ctx)
    assert ready.command == str(tmp_path / "servers" / "venvs" / "sq" / "bin" / "mcp-server-sqlite")
    assert ready.args[1].endswith("sq/db.sqlite") and Path(ready.args[1]).is_file()
    assert ready.probe_args["read_query"]["query"] == str(tmp_path / "scratch" / "sq")
    npm = ServerSpec.model_validate(
        {"id": "m", "kind": "real", "install": {"npm": "@x/y@1", "entry": "dist/i.js"}}
    )
    command, args = derived_command(npm, tmp_path)
    assert command.endswith("node") and args == [
        str(tmp_path / "npm" / "node_modules" / "@x" / "y" / "dist" / "i.js")
    ]
    assert needed_services(ServerSpec(id="p", kind="real", command="x", args=["{postgres_url}"])) == [
        "postgres"
    ]


def test_services_start_on_first_use_and_stop_for_good():
    import httpx

    from cworld.registry.services import Services, ServiceUnavailable

    services = Services()
    url = services.url("pages")
    assert url.startswith("http://127.0.0.1:") and services.url("pages") == url
    assert "Harbor Lights" in httpx.get(f"{url}/index.html", timeout=5).text
    with pytest.raises(ServiceUnavailable, match="unknown local service"):
        services.url("redis")
    services.close()
    with pytest.raises(ServiceUnavailable, match="already stopped"):
        services.url("pages")
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/index.html", timeout=5)
