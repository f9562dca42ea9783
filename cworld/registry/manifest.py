"""`registry/servers.yaml` and `registry/catalogs/*.json`: what the registry indexes.

The manifest is the truth about which servers exist: sandbox apps are listed there too (a test checks
that every app of the sandbox catalog is), so a reader never has to guess what gets indexed. Every error
names the file and the field on one line, because these files are edited by hand.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from cworld.data_model import ServerSpec, ToolAnnotations, ToolSpec, read_json
from cworld.environment import Environment
from cworld.errors import ContentError, UsageError

MANIFEST_NAME = "servers.yaml"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def manifest_path(env: Environment) -> Path:
    return env.registry / MANIFEST_NAME


def load_manifest(env: Environment, *, harvested: bool = False) -> list[ServerSpec]:
    """Every server entry, validated; ids are unique and each kind has what it needs to run.

    `harvested`: also one schema-only catalog server per file of `registry/catalogs/harvested/`
    (`cworld registry harvest`); only where asked for, because they are thousands of tools.
    """
    path = manifest_path(env)
    entries = read_server_list(path, f"an environment's registry/ needs a {MANIFEST_NAME}")
    specs = [validate_server_entry(ServerSpec, path, i, entry) for i, entry in enumerate(entries)]
    _check_unique(path, specs)
    for i, spec in enumerate(specs):
        _check_kind(env, path, i, spec)
    if harvested:
        from cworld.registry.harvest.catalog import harvested_specs

        specs.extend(harvested_specs(env, {s.id for s in specs}))
    return specs


def server_by_id(specs: list[ServerSpec], server_id: str) -> ServerSpec:
    for spec in specs:
        if spec.id == server_id:
            return spec
    raise ContentError(f"no server '{server_id}' in the manifest; known: {', '.join(s.id for s in specs)}")


Entry = TypeVar("Entry", bound=BaseModel)


def read_server_list(path: Path, missing: str) -> list[Any]:
    """The `servers:` list of a registry YAML file (the manifest, the harvest list); `missing` says why
    the file is needed. Every problem is one line naming the file (and the line, for bad YAML)."""
    if not path.is_file():
        raise ContentError(f"{path}: no such file; {missing}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ContentError(f"{path}:{where} invalid YAML ({problem})") from None
    if not isinstance(data, dict) or not isinstance(data.get("servers"), list):
        raise ContentError(f"{path}: the top level must be a mapping with a `servers:` list")
    return data["servers"]


def _entry_label(index: int, entry: Any) -> str:
    sid = entry.get("id") if isinstance(entry, dict) else None
    return f"servers[{index}]" + (f" (id={sid})" if sid else "")


def validate_server_entry(model: type[Entry], path: Path, index: int, entry: Any) -> Entry:
    """One entry of a `servers:` list as `model`; the error names the entry and its first bad field."""
    if not isinstance(entry, dict):
        raise ContentError(f"{path}: {_entry_label(index, entry)}: each server must be a mapping")
    try:
        return model.model_validate(entry)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in err["loc"]) or "(entry)"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise ContentError(f"{path}: {_entry_label(index, entry)}.{field}: {err['msg']}{more}") from None


def _check_unique(path: Path, specs: list[ServerSpec]) -> None:
    seen: set[str] = set()
    for i, spec in enumerate(specs):
        if spec.id in seen:
            raise ContentError(
                f"{path}: servers[{i}].id: '{spec.id}' is used twice; server ids must be unique"
            )
        seen.add(spec.id)
        if "/" in spec.id or not spec.id.strip():
            raise ContentError(f"{path}: servers[{i}].id: '{spec.id}' must be non-empty and hold no '/'")


def _check_kind(env: Environment, path: Path, index: int, spec: ServerSpec) -> None:
    """What each kind needs: an app, a catalog file, or a way to launch; credentials as names only."""
    label = f"{path}: {_entry_label(index, {'id': spec.id})}"
    if spec.kind == "sandbox" and (not spec.app or spec.transport != "memory"):
        raise ContentError(f"{label}: a sandbox server needs `app: NAME` and `transport: memory`")
    if spec.kind == "catalog":
        if not spec.catalog or spec.transport != "catalog":
            raise ContentError(
                f"{label}: a catalog needs `catalog: catalogs/FILE.json` and `transport: catalog`"
            )
        if not catalog_path(env, spec).is_file():
            raise ContentError(f"{label}.catalog: {catalog_path(env, spec)} does not exist")
    if spec.kind == "real" and spec.transport == "stdio" and not (spec.command or spec.install):
        raise ContentError(f"{label}: a real stdio server needs `command` or `install` to be launched")
    if spec.kind == "real" and spec.transport == "http" and not spec.url:
        raise ContentError(f"{label}: an HTTP server needs `url`")
    for name in spec.credentials:
        if not _ENV_NAME.match(name):
            raise ContentError(
                f"{label}.credentials: '{name}' is not an env var name; list NAMES, never values"
            )


# --- schema-only catalogs -------------------------------------------------------------------------


def catalog_path(env: Environment, spec: ServerSpec) -> Path:
    """Catalog paths are relative to the environment's registry/ folder."""
    return (env.registry / (spec.catalog or "")).resolve()


_CAMEL = {
    "inputSchema": "input_schema",
    "outputSchema": "output_schema",
    "readOnlyHint": "read_only_hint",
    "destructiveHint": "destructive_hint",
    "idempotentHint": "idempotent_hint",
    "openWorldHint": "open_world_hint",
}


def _snake(d: dict[str, Any]) -> dict[str, Any]:
    """Accept MCP's wire spelling too, so a `tools/list` dump can be pasted into a catalog as is."""
    return {_CAMEL.get(k, k): v for k, v in d.items()}


def select_servers(specs: list[ServerSpec], only: list[str] | None, *, noun: str = "server",
                   where: str = " in the manifest") -> list[ServerSpec]:
    """The specs whose id is in `only` (all of them when `only` is empty); unknown ids are a usage error."""
    if not only:
        return specs
    known = {s.id for s in specs}
    unknown = sorted(set(only) - known)
    if unknown:
        raise UsageError(f"no {noun} {unknown}{where}; choose from {sorted(known)}")
    return [s for s in specs if s.id in only]


def load_catalog(env: Environment, spec: ServerSpec) -> list[ToolSpec]:
    """The tools of a schema-only catalog, as `ToolSpec`s with availability `schema-only`."""
    path = catalog_path(env, spec)
    items = read_json(path, ContentError, str(path), missing=f"{path}: no such file (servers.yaml entry '{spec.id}')")
    if isinstance(items, dict) and isinstance(items.get("tools"), list):
        items = items["tools"]  # a harvested catalog: its tools, with provenance beside them
    if not isinstance(items, list):
        raise ContentError(f"{path}: a catalog must be a JSON list of tool definitions")
    tools = [_catalog_tool(path, spec, i, item) for i, item in enumerate(items)]
    names = [t.name for t in tools]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ContentError(f"{path}: tool names must be unique; repeated: {', '.join(dupes)}")
    return tools


def _catalog_tool(path: Path, spec: ServerSpec, index: int, item: Any) -> ToolSpec:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
        raise ContentError(f"{path}: [{index}].name: each tool needs a non-empty string `name`")
    data = _snake(item)
    if isinstance(data.get("annotations"), dict):
        data["annotations"] = _snake(data["annotations"])
    label = f"{path}: [{index}] ({item['name']})"
    schema = data.get("input_schema", {"type": "object", "properties": {}})
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise ContentError(f"{label}.input_schema: must be a JSON Schema object with type 'object'")
    unknown = sorted(
        set(data) - {"name", "description", "input_schema", "output_schema", "annotations", "category"}
    )
    if unknown:
        raise ContentError(
            f"{label}: unknown field(s) {unknown}; allowed: name, description, input_schema, "
            "output_schema, annotations, category"
        )
    try:
        return ToolSpec(
            server=spec.id,
            name=data["name"],
            description=data.get("description", ""),
            input_schema=schema,
            output_schema=data.get("output_schema"),
            annotations=ToolAnnotations.model_validate(data.get("annotations") or {}),
            category=data.get("category")
            or spec.tool_categories.get(data["name"])
            or _first(spec.category_hints),
            availability="schema-only",
            server_kind="catalog",
        )
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in err["loc"])
        raise ContentError(f"{label}.{field}: {err['msg']}") from None


def _first(items: list[str]) -> str | None:
    return items[0] if items else None
