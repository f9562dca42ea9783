"""`cworld servers install`: put the real MCP servers into the workspace, idempotently.

npm servers share one prefix (`<servers>/npm`); each PyPI server gets its own virtual environment
(`<servers>/venvs/ID`) because they pin their own `mcp` (sqlite needs `mcp<2`, the others 2.x). A stamp
per server records the install spec it was made from: a second run with the same spec skips it, a
changed spec reinstalls it. One failure never stops the others; each outcome is reported.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from cworld.data_model import InstallSpec, ServerSpec
from cworld.environment import Environment, Workspace
from cworld.registry.manifest import load_manifest, select_servers

Status = Literal["installed", "skipped", "failed"]
INSTALL_TIMEOUT_S = 900


@dataclass(frozen=True)
class InstallOutcome:
    server: str
    status: Status
    detail: str
    seconds: float

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


# --- where things go --------------------------------------------------------------------------------


def npm_prefix(servers_dir: Path) -> Path:
    return servers_dir / "npm"


def venv_dir(servers_dir: Path, server_id: str) -> Path:
    return servers_dir / "venvs" / server_id


def stamp_path(servers_dir: Path, server_id: str) -> Path:
    return servers_dir / "stamps" / f"{server_id}.json"


def npm_package_name(requirement: str) -> str:
    """`@scope/name@1.2` -> `@scope/name`: the folder under node_modules."""
    at = requirement.rfind("@")
    return requirement[:at] if at > 0 else requirement


def entry_path(spec: ServerSpec, servers_dir: Path) -> Path | None:
    """The file that launches an installed server: a JS entry or a console script; None if not installable."""
    inst = spec.install
    if inst is None:
        return None
    if inst.npm:
        entry = inst.entry or "dist/index.js"
        return npm_prefix(servers_dir) / "node_modules" / npm_package_name(inst.npm) / entry
    if inst.pypi:
        script = inst.entry or _pypi_name(inst.pypi)
        return venv_dir(servers_dir, spec.id) / "bin" / script
    return None


def _pypi_name(requirement: str) -> str:
    for sep in ("==", ">=", "<=", "~=", "<", ">", "[", ";", " "):
        requirement = requirement.split(sep)[0]
    return requirement.strip()


# --- status -----------------------------------------------------------------------------------------


def _stamp_spec(inst: InstallSpec) -> dict[str, object]:
    return inst.model_dump(mode="json")


def server_status(spec: ServerSpec, servers_dir: Path) -> str:
    """`installed`, `not installed`, `outdated (...)` or `broken (...)`, in words the doctor can print."""
    assert spec.install is not None
    stamp = stamp_path(servers_dir, spec.id)
    if not stamp.is_file():
        return "not installed"
    try:
        recorded = json.loads(stamp.read_text()).get("install")
    except (OSError, json.JSONDecodeError):
        return "broken (unreadable stamp; run `cworld servers install`)"
    if recorded != _stamp_spec(spec.install):
        return "outdated (the manifest asks for another version; run `cworld servers install`)"
    entry = entry_path(spec, servers_dir)
    if entry is None or not entry.exists():
        return f"broken ({entry} is missing; run `cworld servers install`)"
    return f"installed ({spec.install.npm or spec.install.pypi})"


def installable(specs: list[ServerSpec]) -> list[ServerSpec]:
    return [
        s for s in specs if s.kind == "real" and s.install is not None and (s.install.npm or s.install.pypi)
    ]


def installed_status(env: Environment, workspace: Workspace) -> dict[str, str]:
    """server id -> status line, for every real server with an install spec (read by `cworld doctor`)."""
    servers_dir = workspace.root / "servers"
    return {s.id: server_status(s, servers_dir) for s in installable(load_manifest(env))}


# --- installing -------------------------------------------------------------------------------------


def _run(cmd: list[str], cwd: Path | None = None, timeout_s: float = INSTALL_TIMEOUT_S) -> None:
    """Run an installer; a failure raises with the last lines of its output, which say what went wrong."""
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout_s)
    except FileNotFoundError:
        raise RuntimeError(f"{cmd[0]} is not installed on this machine") from None
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{' '.join(cmd[:3])} took longer than {timeout_s:g}s") from None
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        raise RuntimeError(f"{' '.join(cmd[:3])} exited {proc.returncode}: {' | '.join(lines[-3:])}")


@dataclass(frozen=True)
class InstallOptions:
    """How strictly to install. The harvest installs packages nobody here has vetted: no install scripts
    (they would run as this user), wheels only, a shorter timeout, and pip's report for the file's hash."""

    timeout_s: float = INSTALL_TIMEOUT_S
    npm_flags: tuple[str, ...] = ()
    pip_flags: tuple[str, ...] = ()
    python: str | None = None
    """The interpreter a PyPI server's venv is made from (default: this one)."""


def install_package(spec: ServerSpec, servers_dir: Path, options: InstallOptions = InstallOptions()) -> None:
    """Install the spec's npm package into `npm_prefix(servers_dir)`, or its PyPI package into its venv;
    raise `RuntimeError` with the installer's last lines when it fails."""
    assert spec.install is not None
    if spec.install.npm:
        _install_npm(spec, servers_dir, options)
    else:
        _install_pypi(spec, servers_dir, options)


def _install_npm(spec: ServerSpec, servers_dir: Path, options: InstallOptions = InstallOptions()) -> None:
    assert spec.install is not None and spec.install.npm
    prefix = npm_prefix(servers_dir)
    prefix.mkdir(parents=True, exist_ok=True)
    npm = shutil.which("npm") or "npm"
    _run(
        [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-fund",
            "--no-audit",
            "--loglevel=error",
            *options.npm_flags,
            spec.install.npm,
        ],
        timeout_s=options.timeout_s,
    )


def _install_pypi(spec: ServerSpec, servers_dir: Path, options: InstallOptions = InstallOptions()) -> None:
    """A fresh venv without pip of its own; this interpreter's pip installs into it (`pip --python`)."""
    assert spec.install is not None and spec.install.pypi
    venv = venv_dir(servers_dir, spec.id)
    if venv.exists():
        shutil.rmtree(venv)
    _run([options.python or sys.executable, "-m", "venv", "--without-pip", str(venv)])
    pip = [
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(venv / "bin" / "python"),
        "--disable-pip-version-check",
    ]
    _run(
        [*pip, "install", "-q", *options.pip_flags, spec.install.pypi, *spec.install.pip_extra],
        timeout_s=options.timeout_s,
    )


def install_one(spec: ServerSpec, servers_dir: Path, *, force: bool = False) -> InstallOutcome:
    """Install one server unless its stamp says it is already there with the same spec."""
    started = time.monotonic()
    if not force and server_status(spec, servers_dir).startswith("installed"):
        return InstallOutcome(spec.id, "skipped", "already installed", 0.0)
    try:
        install_package(spec, servers_dir)
        entry = entry_path(spec, servers_dir)
        if entry is None or not entry.exists():
            raise RuntimeError(f"installed, but {entry} is missing; check `install.entry` in servers.yaml")
    except (RuntimeError, OSError) as exc:
        return InstallOutcome(spec.id, "failed", str(exc), time.monotonic() - started)
    _write_stamp(spec, servers_dir)
    return InstallOutcome(spec.id, "installed", str(entry), time.monotonic() - started)


def _write_stamp(spec: ServerSpec, servers_dir: Path) -> None:
    assert spec.install is not None
    path = stamp_path(servers_dir, spec.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"install": _stamp_spec(spec.install), "installed_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
    path.write_text(json.dumps(record, indent=2) + "\n")


def install_servers(
    specs: list[ServerSpec],
    servers_dir: Path,
    *,
    only: list[str] | None = None,
    force: bool = False,
    on_done: Callable[[InstallOutcome], None] | None = None,
) -> list[InstallOutcome]:
    """Install every installable server (or those in `only`): npm ones one after another (they share a
    prefix), PyPI ones alongside them, each in its own venv."""
    chosen = select_servers(installable(specs), only, noun="installable server", where="")
    npm = [s for s in chosen if s.install and s.install.npm]
    pypi = [s for s in chosen if s.install and not s.install.npm]

    def run_all(group: list[ServerSpec]) -> list[InstallOutcome]:
        out = []
        for spec in group:
            outcome = install_one(spec, servers_dir, force=force)
            if on_done is not None:
                on_done(outcome)
            out.append(outcome)
        return out

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(run_all, npm), pool.submit(run_all, pypi)]
        results = [o for f in futures for o in f.result()]
    order = {s.id: i for i, s in enumerate(chosen)}
    return sorted(results, key=lambda o: order[o.server])
