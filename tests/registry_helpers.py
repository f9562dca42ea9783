"""Helpers for tests that need real servers or a small environment of their own.

Real servers are installed once into a cache that outlives a test session (`<repo>/.cworld/servers`,
the same place `make setup` puts them), so the first run pays ~1 minute and reruns only check stamps.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from cworld.data_model import ServerSpec
from cworld.environment import CONTENT_FOLDERS, Environment, packaged_environment_root
from cworld.registry.install import install_servers, server_status
from cworld.registry.manifest import load_manifest


def servers_cache() -> Path:
    """`CWORLD_SERVERS_CACHE`, else `.cworld/servers` under the repo (or packaged environment) root."""
    chosen = os.environ.get("CWORLD_SERVERS_CACHE")
    return Path(chosen) if chosen else packaged_environment_root() / ".cworld" / "servers"


def ensure_real_servers(ids: list[str] | None = None) -> tuple[Path, dict[str, str]]:
    """Install the default manifest's real servers (or `ids`) into the cache; (cache, id -> status line)."""
    cache = servers_cache()
    specs = load_manifest(Environment.resolve(packaged_environment_root()))
    install_servers(specs, cache, only=ids)
    chosen = [s for s in specs if s.install is not None and (ids is None or s.id in ids)]
    return cache, {s.id: server_status(s, cache) for s in chosen}


def default_specs(*ids: str) -> list[ServerSpec]:
    """Entries of the default manifest, by id, in the order given."""
    by_id = {s.id: s for s in load_manifest(Environment.resolve(packaged_environment_root()))}
    return [by_id[i] for i in ids]


def make_environment(root: Path, servers: list[ServerSpec | dict[str, Any]]) -> Environment:
    """A minimal environment in `root` whose manifest holds exactly `servers` (other folders empty)."""
    for name in CONTENT_FOLDERS:
        (root / name).mkdir(parents=True, exist_ok=True)
    entries = [
        s.model_dump(mode="json", exclude_defaults=True) if isinstance(s, ServerSpec) else s for s in servers
    ]
    for entry, spec in zip(entries, servers, strict=True):
        if isinstance(spec, ServerSpec):
            entry.update(id=spec.id, kind=spec.kind, transport=spec.transport)
    (root / "registry" / "servers.yaml").write_text(yaml.safe_dump({"servers": entries}, sort_keys=False))
    return Environment.resolve(root)
