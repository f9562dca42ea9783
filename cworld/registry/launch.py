"""From a manifest entry to something that can be launched: placeholders expanded, command derived.

`{scratch}`, `{scratch:git}`, `{scratch:sqlite}`, `{workspace}`, `{servers}`, `{postgres_url}` and
`{pages_url}` are expanded in `command`, `args`, `env`, `url` and `probe_args`. Scratch targets are made
only when a placeholder asks for them, fresh per server per run (see `scratch.py`); services start only
when a server needs them (see `services.py`). Unknown `{...}` text is left alone: JSON in probe
arguments may hold braces.
"""

from __future__ import annotations

import re
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cworld.data_model import ServerSpec
from cworld.registry import scratch
from cworld.registry.install import entry_path
from cworld.registry.services import Services

_PLACEHOLDER = re.compile(r"\{(scratch(?::git|:sqlite)?|workspace|servers|postgres_url|pages_url)\}")
_SERVICE_OF = {"postgres_url": "postgres", "pages_url": "pages"}


@dataclass
class LaunchContext:
    """Where one run (a build, a `serve` process) keeps its scratch targets and services."""

    workspace: Path
    servers_dir: Path
    scratch_root: Path
    services: Services = field(default_factory=Services)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def scratch_dir(self, server_id: str) -> Path:
        with self._lock:
            return scratch.make_folder(self.scratch_root / server_id)

    def value(self, name: str, server_id: str) -> str:
        """The text a placeholder stands for; may make a scratch target or start a service."""
        if name == "workspace":
            return str(self.workspace)
        if name == "servers":
            return str(self.servers_dir)
        if name in _SERVICE_OF:
            return self.services.url(_SERVICE_OF[name])
        folder = self.scratch_dir(server_id)
        with self._lock:
            if name == "scratch:git":
                return str(scratch.make_git_repo(folder / "repo"))
            if name == "scratch:sqlite":
                return str(scratch.make_sqlite_db(folder / "db.sqlite"))
        return str(folder)

    def close(self) -> None:
        """Stop the services; the scratch root is left for inspection unless it lives in a temp folder."""
        self.services.close()

    def discard_scratch(self) -> None:
        shutil.rmtree(self.scratch_root, ignore_errors=True)


def expand(value: Any, ctx: LaunchContext, server_id: str) -> Any:
    """Expand placeholders in a string, or recursively in lists and dicts (probe arguments)."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: ctx.value(m.group(1), server_id), value)
    if isinstance(value, list):
        return [expand(v, ctx, server_id) for v in value]
    if isinstance(value, dict):
        return {k: expand(v, ctx, server_id) for k, v in value.items()}
    return value


def needed_services(spec: ServerSpec) -> list[str]:
    """Services the server declares in `needs`, plus those its placeholders name."""
    text = " ".join(
        [spec.command or "", *spec.args, *spec.env.values(), spec.url or "", str(spec.probe_args)]
    )
    named = [_SERVICE_OF[m] for m in _PLACEHOLDER.findall(text) if m in _SERVICE_OF]
    return list(dict.fromkeys([*spec.needs, *named]))


def derived_command(spec: ServerSpec, servers_dir: Path) -> tuple[str | None, list[str]]:
    """`node <entry> ARGS` for npm installs, `<venv>/bin/<script> ARGS` for PyPI ones, else the spec's own."""
    if spec.command or spec.install is None:
        return spec.command, list(spec.args)
    entry = entry_path(spec, servers_dir)
    if entry is None:
        return None, list(spec.args)
    if spec.install.npm:
        return shutil.which("node") or "node", [str(entry), *spec.args]
    return str(entry), list(spec.args)


def resolve(spec: ServerSpec, ctx: LaunchContext) -> ServerSpec:
    """A copy of `spec` ready to launch: command derived, placeholders expanded (making what they name).

    May raise `ServiceUnavailable` when a needed local service cannot start here.
    """
    for service in spec.needs:
        ctx.services.url(service)
    command, args = derived_command(spec, ctx.servers_dir)
    return spec.model_copy(
        update={
            "command": expand(command, ctx, spec.id) if command else None,
            "args": expand(args, ctx, spec.id),
            "env": expand(spec.env, ctx, spec.id),
            "url": expand(spec.url, ctx, spec.id) if spec.url else None,
            "probe_args": expand(spec.probe_args, ctx, spec.id),
        }
    )
