"""Environments (the five content folders) and the workspace (where work products go).

An environment is a folder holding `registry/`, `category_cards/`, `task_synth/`, `controller/` and
`judges/`. The repo's own folders are the default environment; in a wheel they ship as
`cworld/_content/`. The workspace (`.cworld/` by default) holds installed servers, the index, caches,
tasks, runs and reports, and lets commands chain: `run` takes the latest tasks, `judge` the latest run.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from cworld.errors import ConfigError, UsageError

CONTENT_FOLDERS = ("registry", "category_cards", "task_synth", "controller", "judges")


def packaged_environment_root() -> Path:
    """The default environment: `cworld/_content` in a wheel, the repo root in a source checkout."""
    pkg = Path(__file__).resolve().parent
    bundled = pkg / "_content"
    if bundled.is_dir():
        return bundled
    return pkg.parent


@dataclass(frozen=True)
class Environment:
    root: Path

    @classmethod
    def resolve(cls, env_dir: str | Path | None = None) -> Environment:
        """`--env DIR`, else `CWORLD_ENV`, else the packaged default; checks the folders exist."""
        chosen = env_dir or os.environ.get("CWORLD_ENV")
        root = Path(chosen).expanduser().resolve() if chosen else packaged_environment_root()
        missing = [f for f in CONTENT_FOLDERS if not (root / f).is_dir()]
        if missing:
            raise ConfigError(
                f"{root} is not a cworld environment (missing {', '.join(missing)}); "
                "create one with `cworld init DIR` or drop --env/CWORLD_ENV"
            )
        return cls(root)

    def folder(self, name: str) -> Path:
        return self.root / name

    @property
    def registry(self) -> Path:
        return self.root / "registry"

    @property
    def category_cards(self) -> Path:
        return self.root / "category_cards"

    @property
    def task_synth(self) -> Path:
        return self.root / "task_synth"

    @property
    def controller(self) -> Path:
        return self.root / "controller"

    @property
    def judges(self) -> Path:
        return self.root / "judges"


def init_environment(target: Path, source: Environment | None = None) -> Path:
    """Copy an environment's content folders into `target` (which must not hold them already)."""
    source = source or Environment.resolve()
    target = target.expanduser().resolve()
    clashes = [f for f in CONTENT_FOLDERS if (target / f).exists()]
    if clashes:
        raise UsageError(f"{target} already holds {', '.join(clashes)}; choose an empty folder")
    target.mkdir(parents=True, exist_ok=True)
    for name in CONTENT_FOLDERS:
        shutil.copytree(source.folder(name), target / name, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@dataclass(frozen=True)
class Workspace:
    root: Path

    @classmethod
    def resolve(cls, workspace: str | Path | None = None) -> Workspace:
        chosen = workspace or os.environ.get("CWORLD_WORKSPACE") or ".cworld"
        root = Path(chosen).expanduser().resolve()
        if root.exists() and not root.is_dir():
            raise ConfigError(f"workspace {root} is a file; point --workspace at a folder")
        return cls(root)

    def path(self, *parts: str, create: bool = True) -> Path:
        p = self.root.joinpath(*parts)
        if create:
            p.mkdir(parents=True, exist_ok=True)
        return p

    @property
    def servers(self) -> Path:
        return self.path("servers")

    @property
    def index(self) -> Path:
        return self.path("index")

    @property
    def cache(self) -> Path:
        return self.path("cache")

    @property
    def scratch(self) -> Path:
        return self.path("scratch")

    # --- chaining: the latest tasks file and run folder -------------------------------------
    def new_run_dir(self, name: str | None = None) -> Path:
        name = name or time.strftime("run-%Y%m%d-%H%M%S")
        run = self.path("runs", name)
        self._set_latest("run", run)
        return run

    def new_tasks_file(self, name: str | None = None) -> Path:
        name = name or time.strftime("tasks-%Y%m%d-%H%M%S.jsonl")
        path = self.path("tasks") / name
        self._set_latest("tasks", path)
        return path

    def mark_latest(self, kind: str, path: Path) -> None:
        self._set_latest(kind, path)

    def latest(self, kind: str) -> Path:
        pointer = self.root / f"LATEST_{kind.upper()}"
        if pointer.is_file():
            target = Path(pointer.read_text().strip())
            if target.exists():
                return target
        raise UsageError(f"no {kind} in workspace {self.root} yet; create one first or pass a path")

    def _set_latest(self, kind: str, path: Path) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / f"LATEST_{kind.upper()}").write_text(str(path.resolve()) + "\n")
