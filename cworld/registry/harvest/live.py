"""`cworld servers install --harvested NAME`: a harvested server, installed and validated here, run live.

A harvested server is schema-only until someone installs it. This installs its package (the harvest's
strict install, into `<servers>/harvested/NAME/`), makes a real `ServerSpec` for it (placeholders for the
variables it expects, the same names as `credentials`, so real values in the environment win), and runs the
three-stage validation (`check_server`) against scratch targets, offline (a network namespace of its own,
`netns.py`: the probes' calls with placeholder credentials never leave the machine). Only a server with at least one usable
tool is kept: it is written to `<servers>/harvested/live.yaml`, and `cworld registry build --harvested`
then validates and serves it live instead of its schema-only catalog. One that does not pass is removed.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from cworld.data_model import ServerSpec
from cworld.environment import Environment, Workspace
from cworld.errors import ContentError, UsageError
from cworld.registry.harvest.cards import differing_cards, server_card
from cworld.registry.harvest.catalog import harvested_dir
from cworld.registry.harvest.entries import HarvestEntry, harvest_list_path, load_harvest_list, placeholder
from cworld.registry.harvest.package import install
from cworld.registry.launch import LaunchContext
from cworld.registry.validate import ServerValidation
from cworld.registry.validate_server import Check, check_server

LIVE_FILE = "live.yaml"
VALIDATION_TIMEOUT_S = 20.0


@dataclass
class LiveInstall:
    validation: ServerValidation
    kept: bool
    spec: ServerSpec


def harvested_servers_dir(servers_dir: Path) -> Path:
    return servers_dir / "harvested"


def live_specs(servers_dir: Path) -> dict[str, ServerSpec]:
    """The harvested servers installed and validated here, by id (empty when none is)."""
    path = harvested_servers_dir(servers_dir) / LIVE_FILE
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {sid: ServerSpec.model_validate(raw) for sid, raw in data.items()}


def _save(servers_dir: Path, specs: dict[str, ServerSpec]) -> None:
    path = harvested_servers_dir(servers_dir) / LIVE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    dumped = {sid: s.model_dump(mode="json", exclude_defaults=True) | {"id": sid, "kind": "real"}
              for sid, s in sorted(specs.items())}
    path.write_text(yaml.safe_dump(dumped, sort_keys=False), encoding="utf-8")


def _entry_and_record(env: Environment, name: str, list_path: Path | None) -> tuple[HarvestEntry, dict[str, object]]:
    entries = {e.id: e for e in load_harvest_list(list_path or harvest_list_path(env))}
    if name not in entries:
        raise UsageError(f"no entry '{name}' in the harvest list; `cworld registry show --harvest` lists them")
    record_path = harvested_dir(env) / f"{name}.json"
    if not record_path.is_file():
        raise UsageError(f"'{name}' was not harvested (no {record_path}); only harvested servers can be installed")
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ContentError(f"{record_path}: not JSON ({exc})") from None
    return entries[name], record


def live_spec(entry: HarvestEntry, command: list[str], expects: list[str], servers_dir: Path,
              category: str) -> ServerSpec:
    """A real server spec: paths under `{servers}`, placeholders for what it expects, the same names as
    credentials (so a real value set in the environment is used instead)."""
    where = str(servers_dir)
    portable = [part.replace(where, "{servers}") for part in command]
    card = server_card(entry.id, category)
    return ServerSpec(
        id=entry.id,
        kind="real",
        description=entry.summary,
        command=portable[0],
        args=portable[1:],
        env={name: entry.env.get(name, placeholder(name)) for name in expects},
        credentials=[n for n in expects if n not in entry.env],
        category_hints=[card] if card else [],
        timeout_s=VALIDATION_TIMEOUT_S,
    )


async def install_harvested(env: Environment, workspace: Workspace, name: str, *, servers_dir: Path | None = None,
                            list_path: Path | None = None) -> LiveInstall:
    """Install one harvested server, validate it offline, keep it when a tool is usable (see the module)."""
    servers_dir = servers_dir or workspace.root / "servers"
    entry, record = _entry_and_record(env, name, list_path)
    folder = harvested_servers_dir(servers_dir) / name
    try:
        installed = install(entry, folder)
    except (RuntimeError, OSError) as exc:
        raise UsageError(f"'{name}' did not install: {exc}") from None
    provenance = record.get("provenance") if isinstance(record.get("provenance"), dict) else {}
    launch = provenance.get("launch") if isinstance(provenance, dict) else None
    if isinstance(launch, list) and launch[len(installed.launch):]:
        installed.command.extend(str(a) for a in launch[len(installed.launch):])  # e.g. the `stdio` it needed
    expects = sorted({*installed.env_names, *entry.env})
    field = str(record.get("category", ""))
    spec = live_spec(entry, installed.command, expects, servers_dir, field)
    tools = record.get("tools")
    names = [str(t["name"]) for t in tools if isinstance(t, dict) and t.get("name")] if isinstance(tools, list) else []
    spec = spec.model_copy(update={"tool_categories": differing_cards(entry.id, field, names)})
    scratch = workspace.path("scratch") / f"harvested-{os.getpid()}-{int(time.time())}"
    ctx = LaunchContext(workspace.root, servers_dir, scratch)
    try:
        outcome = await check_server(env, spec, ctx, Check(spec.timeout_s, offline=True))
    finally:
        ctx.close()
        ctx.discard_scratch()
    kept = any(t.stage == 3 for t in outcome.validation.tools)
    specs = live_specs(servers_dir)
    if kept:
        specs[name] = spec
    else:
        specs.pop(name, None)
        shutil.rmtree(folder, ignore_errors=True)
    _save(servers_dir, specs)
    return LiveInstall(outcome.validation, kept, spec)


def with_live(specs: list[ServerSpec], servers_dir: Path) -> list[ServerSpec]:
    """The manifest's specs, each harvested catalog replaced by its live spec where one is installed."""
    live = live_specs(servers_dir)
    return [live.get(s.id, s) if s.kind == "catalog" else s for s in specs]
