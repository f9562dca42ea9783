"""`registry/harvest.yaml`: which packages to harvest, how to start them, what variables they expect."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from cworld.data_model import InstallSpec, ServerSpec
from cworld.environment import Environment
from cworld.errors import ContentError
from cworld.registry.manifest import read_server_list, validate_server_entry

HARVEST_LIST = "harvest.yaml"
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class HarvestEntry(BaseModel):
    """One package to harvest. `env` maps each variable it expects to the placeholder it is started with."""

    model_config = ConfigDict(extra="forbid")

    id: str
    npm: str | None = None
    pypi: str | None = None
    command: str | None = Field(None, description="bin (npm) or console script (PyPI); default: found")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    category: str = "other"
    summary: str = ""
    launch: list[str] = Field(default_factory=list, description="as last harvested (informational)")
    expects: list[str] = Field(default_factory=list, description="variables found, as last harvested")

    @model_validator(mode="after")
    def _one_package(self) -> HarvestEntry:
        if bool(self.npm) == bool(self.pypi):
            raise ValueError("give exactly one of `npm: NAME@VERSION` or `pypi: NAME==VERSION`")
        if not _ID.match(self.id):
            raise ValueError(f"id '{self.id}' must be lower-case letters, digits and '-'")
        return self

    @property
    def registry(self) -> str:
        return "npm" if self.npm else "pypi"

    @property
    def requirement(self) -> str:
        return self.npm or self.pypi or ""

    @property
    def local(self) -> Path | None:
        """An npm package folder on this machine (`npm: /path/to/folder`), as the tests' bad servers are."""
        return Path(self.npm) if self.npm and self.npm.startswith(("/", "./")) else None

    @property
    def package(self) -> str:
        """The name without the version: `@scope/name`, `name`."""
        if self.local is not None:
            try:
                return str(json.loads((self.local / "package.json").read_text(encoding="utf-8"))["name"])
            except (OSError, ValueError, KeyError):
                return self.local.name
        if self.npm:
            at = self.npm.rfind("@")
            return self.npm[:at] if at > 0 else self.npm
        return re.split(r"[=<>~!\[; ]", self.pypi or "")[0]

    def server_spec(self) -> ServerSpec:
        """The spec the shared installer takes (`cworld.registry.install`)."""
        return ServerSpec(id=self.id, kind="real", install=InstallSpec(npm=self.npm, pypi=self.pypi))

    def digest(self) -> str:
        """Changes when the entry does: a changed entry is harvested again on resume."""
        what = self.model_dump(mode="json", include={"id", "npm", "pypi", "command", "args", "env", "category"})
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


def harvest_list_path(env: Environment) -> Path:
    return env.registry / HARVEST_LIST


def load_harvest_list(path: Path) -> list[HarvestEntry]:
    """Every entry, validated, ids unique; errors name the file, the entry and the field on one line."""
    raw = read_server_list(path, "the harvest reads its package list from it")
    entries = [validate_server_entry(HarvestEntry, path, i, entry) for i, entry in enumerate(raw)]
    ids = [e.id for e in entries]
    if dupes := sorted({i for i in ids if ids.count(i) > 1}):
        raise ContentError(f"{path}: ids must be unique; repeated: {', '.join(dupes)}")
    return entries


_URLISH = ("_URL", "_URI", "_ENDPOINT", "_HOST", "_BASE", "_SERVER", "_DSN", "_ADDRESS")
_FOLDERISH = ("_DIR", "_DIRS", "_ROOT", "_DIRECTORY", "_DIRECTORIES", "_FOLDER")


PLACEHOLDER_PREFIX = "cworld-placeholder-"
"""How a placeholder that stands for a user's own value begins (a project id, a token): a schema default that
begins so is the configured value the harvest hid, no value of the world."""


def placeholder(name: str) -> str:
    """A value that looks like what the variable wants and reaches nothing: URLs point at a closed port
    on this machine, never at the real service; a folder is `.`, the server's scratch working folder. Other
    values do not spell the name (a server may reject a key that contains `api`), only its digest."""
    upper = name.upper()
    if upper.endswith(_URLISH) or upper in {"DATABASE_URL", "URL", "URI", "HOST", "ENDPOINT", "BASE_URL"}:
        return "http://127.0.0.1:9"
    if upper.endswith(_FOLDERISH):
        return "."
    if upper.endswith("_PORT"):
        return "9"
    if upper.endswith("_REGION") or upper == "REGION":
        return "us-east-1"
    if "EMAIL" in upper:
        return "placeholder@example.invalid"
    return f"{PLACEHOLDER_PREFIX}{hashlib.sha256(upper.encode()).hexdigest()[:16]}"
