"""One harvested package on disk: installed into its own prefix or venv, its launch command, its provenance
(version, license, integrity hash) and the environment variables its own code reads."""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from cworld.registry.harvest import variables
from cworld.registry.harvest.entries import HarvestEntry
from cworld.registry.install import InstallOptions, install_package, npm_prefix, venv_dir

INSTALL_TIMEOUT_S = 300.0
@dataclass
class Installed:
    """What the harvest knows about an installed package."""

    command: list[str]
    version: str = ""
    license: str = ""
    integrity: str = ""
    launch: list[str] = field(default_factory=list)
    """The command as the catalog records it: the bin or console script and its args, no local paths."""
    env_names: list[str] = field(default_factory=list)
    pins: list[str] = field(default_factory=list)
    """Requirements added to the package's own (`mcp<2`)."""


def harvest_options() -> InstallOptions:
    """No install scripts, wheels only: nothing of an unvetted package runs at install time."""
    return InstallOptions(
        timeout_s=INSTALL_TIMEOUT_S,
        npm_flags=("--ignore-scripts", "--prefer-offline"),
        pip_flags=("--only-binary=:all:", "--no-compile"),
    )


def install(entry: HarvestEntry, prefix: Path) -> Installed:
    """Install into `prefix` (its own for this package) and describe it; `RuntimeError` says what failed."""
    if prefix.exists():
        shutil.rmtree(prefix)
    prefix.mkdir(parents=True)
    options = harvest_options()
    if entry.pypi:
        report = prefix / "pip-report.json"
        options = InstallOptions(
            options.timeout_s, (), (*options.pip_flags, "--report", str(report)), python=venv_python()
        )
    if entry.npm:
        install_package(entry.server_spec(), prefix, options)
        return describe_npm(entry, prefix)
    pins = _install_pypi_pinned(entry, prefix, options)
    described = describe_pypi(entry, prefix)
    described.pins = pins
    return described


MCP_V1 = "mcp<2"
"""Most PyPI servers were written against mcp 1.x (`mcp.server.fastmcp`) and ask for `mcp>=1.x` with no
upper bound, so the newest mcp (2.x, with other names) breaks them at import. They get 1.x; a server that
needs 2.x cannot install with the pin and is installed again without it."""


def _install_pypi_pinned(entry: HarvestEntry, prefix: Path, options: InstallOptions) -> list[str]:
    spec = entry.server_spec()
    assert spec.install is not None
    pinned = spec.model_copy(update={"install": spec.install.model_copy(update={"pip_extra": [MCP_V1]})})
    try:
        install_package(pinned, prefix, options)
        return [MCP_V1]
    except RuntimeError as exc:
        if "took longer" in str(exc):
            raise
    install_package(spec, prefix, options)
    return []


def venv_python() -> str | None:
    """An interpreter the unprivileged harvest user can run (this one may live in a private folder)."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if Path(candidate).is_file() and world_reachable(Path(candidate).resolve()):
            return candidate
    return None


def world_reachable(path: Path) -> bool:
    """Whether every folder above `path` lets others through (so another uid can read what is in it)."""
    return all(p.stat().st_mode & stat.S_IXOTH for p in path.parents if p.exists())


# --- npm --------------------------------------------------------------------------------------------


def npm_package_dir(entry: HarvestEntry, prefix: Path) -> Path:
    return npm_prefix(prefix) / "node_modules" / entry.package


def describe_npm(entry: HarvestEntry, prefix: Path) -> Installed:
    folder = npm_package_dir(entry, prefix)
    meta = _read_json(folder / "package.json")
    name, rel = _pick_bin(entry, meta)
    script = Path(os.path.normpath(folder / rel))  # under the prefix, even when the package is a link
    if not script.is_file():
        raise RuntimeError(f"installed, but its entry {rel} is missing")
    lock = _read_json(npm_prefix(prefix) / "package-lock.json")
    packages = lock.get("packages")
    locked = packages.get(f"node_modules/{entry.package}", {}) if isinstance(packages, dict) else {}
    command = [*_runner(script), str(script), *entry.args]
    return Installed(
        command=command,
        version=str(meta.get("version", "")),
        license=_npm_license(meta.get("license")),
        integrity=str(locked.get("integrity", "")),
        launch=[name, *entry.args],
        env_names=variables.merged(variables.in_code(_own_files(folder), javascript=True), variables.in_docs(folder)),
    )


def _pick_bin(entry: HarvestEntry, meta: dict[str, object]) -> tuple[str, str]:
    """(bin name, file): the one asked for, the only one, the one named like the package, one saying mcp."""
    raw = meta.get("bin")
    unscoped = entry.package.rsplit("/", 1)[-1]
    bins = {unscoped: raw} if isinstance(raw, str) else dict(raw) if isinstance(raw, dict) else {}
    if not bins and isinstance(meta.get("main"), str):
        bins = {unscoped: str(meta["main"])}
    if not bins:
        raise RuntimeError("installed, but the package has no bin and no main to start")
    if entry.command:
        if entry.command not in bins:
            raise RuntimeError(f"no bin '{entry.command}' in the package; it has {sorted(bins)}")
        return entry.command, str(bins[entry.command])
    return _choose(bins, unscoped)


def _choose(options: dict[str, object], package: str) -> tuple[str, str]:
    if len(options) == 1:
        name = next(iter(options))
    elif package in options:
        name = package
    else:
        name = next((n for n in options if "mcp" in n.lower()), sorted(options)[0])
    return name, str(options[name])


def _npm_license(value: object) -> str:
    if isinstance(value, dict):
        return str(value.get("type", ""))
    return str(value or "")


def _runner(script: Path) -> list[str]:
    """Node for a script; nothing for a native program a package ships as its bin (an ELF file)."""
    try:
        with script.open("rb") as handle:
            native = handle.read(4) == b"\x7fELF"
    except OSError:
        native = False
    return [] if native else [sys_node()]


def sys_node() -> str:
    return shutil.which("node") or "node"


# --- PyPI -------------------------------------------------------------------------------------------


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _dist_info(venv: Path, package: str) -> Path:
    for info in sorted(venv.glob("lib/python*/site-packages/*.dist-info")):
        if _normalized(info.name.removesuffix(".dist-info").rsplit("-", 1)[0]) == _normalized(package):
            return info
    raise RuntimeError(f"installed, but no metadata for {package} in its venv")


def describe_pypi(entry: HarvestEntry, prefix: Path) -> Installed:
    venv = venv_dir(prefix, entry.id)
    info = _dist_info(venv, entry.package)
    parser = configparser.ConfigParser(interpolation=None)
    if (info / "entry_points.txt").is_file():
        parser.read(info / "entry_points.txt", encoding="utf-8")
    scripts = dict(parser["console_scripts"]) if parser.has_section("console_scripts") else {}
    if entry.command:
        if entry.command not in scripts:
            raise RuntimeError(f"no console script '{entry.command}'; the package has {sorted(scripts)}")
        name = entry.command
    elif scripts:
        name, _ = _choose(dict(scripts), entry.package)
    else:
        raise RuntimeError("installed, but the package has no console script to start")
    meta = _metadata(info / "METADATA")
    site = info.parent
    own = [site / line.split(",", 1)[0] for line in _lines(info / "RECORD") if line.split(",", 1)[0].endswith(".py")]
    return Installed(
        command=[str(venv / "bin" / name), *entry.args],
        version=meta.get("version", ""),
        license=meta.get("license-expression") or _short(meta.get("license", "")) or meta.get("classifier", ""),
        integrity=_pip_hash(prefix / "pip-report.json", entry.package),
        launch=[name, *entry.args],
        env_names=variables.merged(variables.in_code(own, javascript=False),
                                   variables.in_docs(info, _long_description(info / "METADATA"))),
    )


def _metadata(path: Path) -> dict[str, str]:
    """The first value of each header (License classifiers: the first license one)."""
    out: dict[str, str] = {}
    for line in _lines(path):
        if not line.strip():
            break
        key, _, value = line.partition(":")
        key, value = key.strip().lower(), value.strip()
        if key == "classifier" and not value.startswith("License ::"):
            continue
        out.setdefault(key, value.rsplit(" :: ", 1)[-1] if key == "classifier" else value)
    return out


def _short(text: str) -> str:
    return text if len(text) <= 60 and "\n" not in text else ""


def _pip_hash(report: Path, package: str) -> str:
    data = _read_json(report)
    installs = data.get("install")
    for item in installs if isinstance(installs, list) else []:
        if _normalized(str(item.get("metadata", {}).get("name", ""))) == _normalized(package):
            hashes = item.get("download_info", {}).get("archive_info", {}).get("hashes", {})
            return f"sha256-{hashes['sha256']}" if "sha256" in hashes else ""
    return ""


# --- shared -----------------------------------------------------------------------------------------


def _read_json(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _own_files(folder: Path) -> list[Path]:
    """The package's own scripts, not its dependencies'."""
    files = (p for pat in ("*.js", "*.mjs", "*.cjs") for p in folder.rglob(pat))
    return sorted(p for p in files if "node_modules" not in p.relative_to(folder).parts)


def _long_description(path: Path) -> str:
    """The README a wheel carries: the METADATA body after its headers."""
    text = "\n".join(_lines(path))
    return text.split("\n\n", 1)[1] if "\n\n" in text else ""
