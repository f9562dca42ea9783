"""The contract every sandbox server keeps, checked over every app the catalog discovers.

- schemas are valid JSON Schema (Draft 2020-12), every tool and parameter has a description and every
  tool an output schema; prerequisite edges name real tools;
- annotations are true: a read-only tool never changes state, an idempotent tool changes nothing the
  second time (timestamps aside);
- same seed, same responses; another seed, another world (stateful apps);
- hypothesis fuzzing with schema-valid and schema-invalid arguments: no call crashes ("internal error"),
  successful answers match the output schema, schema-invalid calls name the field and change nothing.

Arguments are generated from each tool's input schema; strings are often drawn from the app's own
seeded state (its ids, names, dates), so many calls get past "not found" into the real logic.
"""

from __future__ import annotations

import json
import random
import re
from functools import cache
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cworld.sandbox.catalog import all_apps, stateful_apps
from cworld.sandbox.framework import SandboxApp, SandboxSession
from cworld.sandbox.framework.server import INTERNAL_ERROR_PREFIX, SandboxServer, build_server, tool_specs
from cworld.sandbox.framework.session import plain_copy
from cworld.sandbox.framework.specs import tool_id, unknown_prerequisite_tools

APPS = all_apps()
APP_IDS = [a.name for a in APPS]
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?Z?$")
FUZZ = settings(max_examples=15, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --- argument generation from JSON Schema ----------------------------------------------
def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].split("/")[-1]]
    return schema


def _string(schema: dict[str, Any], rng: random.Random, pool: list[str]) -> str:
    lo, hi = schema.get("minLength", 0), schema.get("maxLength", 40)
    fits = [s for s in pool if lo <= len(s) <= hi]
    if fits and rng.random() < 0.7:
        return rng.choice(fits)
    text = "".join(rng.choice("abcdefghij xyz-_0123456789") for _ in range(rng.randint(lo, min(hi, lo + 12))))
    return text


def _number(schema: dict[str, Any], rng: random.Random, integer: bool) -> float | int:
    lo = schema.get("minimum", schema.get("exclusiveMinimum", -1000))
    hi = schema.get("maximum", schema.get("exclusiveMaximum", 1000))
    lo, hi = max(lo, -1e6), min(hi, 1e6)
    if integer:
        lo_i = int(lo) + (1 if "exclusiveMinimum" in schema and int(lo) == lo else 0)
        hi_i = int(hi) - (1 if "exclusiveMaximum" in schema and int(hi) == hi else 0)
        small = [v for v in (lo_i, lo_i + 1, 1, 2, 5, 10) if lo_i <= v <= hi_i]
        return rng.choice(small) if small and rng.random() < 0.6 else rng.randint(lo_i, max(lo_i, hi_i))
    value = rng.uniform(lo, hi)
    if "exclusiveMinimum" in schema and value <= lo:
        value = lo + (hi - lo) / 2
    return value


def gen_value(schema: dict[str, Any], root: dict[str, Any], rng: random.Random, pool: list[str]) -> Any:
    """A value valid against `schema` (for the shapes pydantic emits), biased to the app's own strings."""
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return gen_value(rng.choice(schema[key]), root, rng, pool)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice(kind)
    if kind == "string":
        return _string(schema, rng, pool)
    if kind in ("integer", "number"):
        return _number(schema, rng, kind == "integer")
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "array":
        lo, hi = schema.get("minItems", 0), min(schema.get("maxItems", 3), 3)
        items = [gen_value(schema.get("items", {}), root, rng, pool) for _ in range(rng.randint(lo, max(lo, hi)))]
        return list(dict.fromkeys(items)) if schema.get("uniqueItems") and all(isinstance(i, str) for i in items) else items
    if kind == "object":
        return gen_object(schema, root, rng, pool)
    return rng.choice(pool) if pool else "x"


def gen_object(schema: dict[str, Any], root: dict[str, Any], rng: random.Random, pool: list[str]) -> dict[str, Any]:
    props, required = schema.get("properties", {}), set(schema.get("required", []))
    out = {}
    for name, sub in props.items():
        if name in required or rng.random() < 0.5:
            out[name] = gen_value(sub, root, rng, pool)
    return out


def gen_args(schema: dict[str, Any], rng: random.Random, pool: list[str]) -> dict[str, Any]:
    return gen_object(schema, schema, rng, pool)


def _bad_value(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """A value no property schema of ours accepts: the wrong JSON type, or an off-list choice."""
    schema = _resolve(schema, root)
    if "enum" in schema or "const" in schema:
        return "__not_a_choice__"
    types = {s.get("type") for s in schema.get("anyOf", [schema])}
    if types & {"object"}:
        return [1, 2]
    return {"not": ["a", "valid", "value"]}


def invalid_args(schema: dict[str, Any], rng: random.Random, pool: list[str]) -> tuple[dict[str, Any], str]:
    """Valid arguments broken in one place; returns them with the field the error must name."""
    args = gen_args(schema, rng, pool)
    props = schema.get("properties", {})
    typed = [n for n, s in props.items() if _resolve(s, schema).get("type") or "anyOf" in s or "enum" in s]
    choice = rng.choice(["unknown", "missing", "type"] if typed else ["unknown"])
    if choice == "missing" and schema.get("required"):
        field = rng.choice(schema["required"])
        args.pop(field, None)
        return args, field
    if choice in ("missing", "type") and typed:
        field = rng.choice(typed)
        args[field] = _bad_value(props[field], schema)
        return args, field
    args["zz_unknown_argument"] = 1
    return args, "zz_unknown_argument"


def harvest(value: Any, out: set[str]) -> None:
    """Short strings from the seeded state: ids, names, emails, dates; what a careful agent would pass."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and len(k) <= 40:
                out.add(k)
            harvest(v, out)
    elif isinstance(value, list):
        for v in value:
            harvest(v, out)
    elif isinstance(value, str) and 0 < len(value) <= 40:
        out.add(value)


# --- fixtures ----------------------------------------------------------------------------
def fresh(app: type[SandboxApp], seed: int = 0) -> SandboxServer:
    return build_server(SandboxSession(seed=seed, apps=[app]), app.name)


@cache
def pool_of(app: type[SandboxApp]) -> list[str]:
    found: set[str] = set()
    harvest(SandboxSession(seed=0, apps=[app]).state, found)
    return sorted(found)


def mask_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: mask_times(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_times(v) for v in value]
    return "<time>" if isinstance(value, str) and TIMESTAMP.match(value) else value


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


# --- static contract ---------------------------------------------------------------------
_META = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)


def check_schema(schema: dict[str, Any]) -> None:
    """`Draft202012Validator.check_schema`, with the meta-schema validator built once."""
    error = jsonschema.exceptions.best_match(_META.iter_errors(schema))
    if error is not None:
        raise jsonschema.exceptions.SchemaError.create_from(error)


@pytest.mark.parametrize("app", APPS, ids=APP_IDS)
def test_schemas_descriptions_and_annotations_are_complete(app: type[SandboxApp]) -> None:
    specs = tool_specs(app)
    assert specs, f"{app.name} has no tools"
    for spec in specs:
        assert spec.description.strip(), f"{spec.id} has no description"
        check_schema(spec.input_schema)
        assert spec.output_schema is not None, f"{spec.id} has no output schema (return a model or typed value)"
        check_schema(spec.output_schema)
        for name, prop in spec.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{spec.id}: parameter '{name}' has no description"
        hints = spec.annotations
        assert None not in (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint)
        assert not (hints.read_only_hint and hints.destructive_hint), f"{spec.id} is read-only and destructive"


def test_tool_counts_meet_the_brief() -> None:
    counts = {a.name: len(a.tool_methods()) for a in APPS}
    for app in stateful_apps():
        assert counts[app.name] >= (6 if app.name == "clock" else 12), f"{app.name}: {counts[app.name]} tools"


def test_prerequisite_edges_name_real_tools() -> None:
    every = {tool_id(a, m.name) for a in APPS for m, _ in a.tool_methods()}
    for app in APPS:
        assert unknown_prerequisite_tools(app, every) == [], app.name
        for edge in app.prerequisites:
            assert edge.kind in ("requires", "produces") and edge.before != edge.after


# --- determinism -----------------------------------------------------------------------
def _script(app: type[SandboxApp]) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(f"script:{app.name}")
    specs = tool_specs(app)
    return [(s.name, gen_args(s.input_schema, rng, pool_of(app))) for s in specs for _ in range(2)]


@pytest.mark.parametrize("app", APPS, ids=APP_IDS)
def test_same_seed_gives_identical_responses(app: type[SandboxApp]) -> None:
    script = _script(app)
    runs = []
    for _ in range(2):
        server = fresh(app, seed=9)
        answers = [server.call_tool_sync(name, args).model_dump(mode="json") for name, args in script]
        runs.append((answers, server.session.snapshot()))
    assert runs[0] == runs[1]


@pytest.mark.parametrize("app", stateful_apps(), ids=[a.name for a in stateful_apps()])
def test_another_seed_gives_another_world(app: type[SandboxApp]) -> None:
    worlds = [json.dumps(SandboxSession(seed=s, apps=[app]).snapshot(), sort_keys=True) for s in (1, 2, 3)]
    assert len(set(worlds)) == 3


def test_apps_write_only_their_own_state_and_reset_restores_the_start() -> None:
    """The server checkpoints only the called app's state, so writing another app's state is a bug."""
    session = SandboxSession(seed=5, apps=stateful_apps())
    start = session.snapshot()
    for app in stateful_apps():
        others = {k: v for k, v in session.snapshot().items() if k != app.name}
        server = build_server(session, app.name)
        for name, args in _script(app):
            server.call_tool_sync(name, args)
        assert {k: v for k, v in session.snapshot().items() if k != app.name} == others, app.name
    session.reset()
    assert session.snapshot() == start


@pytest.mark.parametrize("app", APPS, ids=APP_IDS)
def test_every_read_only_tool_leaves_the_snapshot_alone(app: type[SandboxApp]) -> None:
    server = fresh(app, seed=3)
    rng = random.Random(f"read-only:{app.name}")
    for spec in (s for s in tool_specs(app) if s.is_read_only):
        for _ in range(3):
            args = gen_args(spec.input_schema, rng, pool_of(app))
            before = server.session.snapshot()
            result = server.call_tool_sync(spec.name, args)
            assert not text_of(result).startswith(INTERNAL_ERROR_PREFIX), text_of(result)
            assert server.session.snapshot() == before, f"read-only {spec.id}({args}) changed state"


# --- fuzzing ---------------------------------------------------------------------------
OUTPUT_CHECKS_PER_TOOL = 3
STATE_CHECKS_PER_TOOL = 5
_output_checked: dict[str, int] = {}
_state_checked: dict[str, int] = {}


@cache
def _validator(schema_json: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(schema_json))


def _budget(counter: dict[str, int], key: str, limit: int) -> bool:
    """True for the first `limit` uses of `key`: the expensive checks run on a few calls per tool."""
    counter[key] = counter.get(key, 0) + 1
    return counter[key] <= limit


def _check_call(server: SandboxServer, name: str, args: dict[str, Any], read_only: bool, idempotent: bool,
                output_schema: dict[str, Any]) -> None:
    key = f"{server.app.name}/{name}"
    watch = (read_only or idempotent) and _budget(_state_checked, key, STATE_CHECKS_PER_TOOL)
    before = plain_copy(server.session.state) if watch else None
    result = server.call_tool_sync(name, args)
    text = text_of(result)
    assert not text.startswith(INTERNAL_ERROR_PREFIX), f"{name}({args}) crashed: {text}"
    if result.is_error:
        assert re.match(r"^[a-z_]+: \S", text), f"{name}: error text does not start with its kind: {text}"
        if watch and not read_only:
            _state_checked[key] -= 1  # a failed call says nothing about idempotency: keep the budget
        return
    if _budget(_output_checked, key, OUTPUT_CHECKS_PER_TOOL):  # jsonschema is slow; a few answers suffice
        _validator(json.dumps(output_schema, sort_keys=True)).validate(result.structured_content)
    if watch and read_only:
        assert server.session.state == before, f"read-only {name}({args}) changed state"
    elif watch:
        once = mask_times(plain_copy(server.session.state))
        server.call_tool_sync(name, args)
        assert mask_times(server.session.state) == once, f"idempotent {name}({args}) changed state again"


@pytest.mark.parametrize("app", APPS, ids=APP_IDS)
def test_fuzz_valid_arguments_never_crash_and_keep_annotations_true(app: type[SandboxApp]) -> None:
    specs = tool_specs(app)
    server = fresh(app, seed=13)
    pool = pool_of(app)

    @given(index=st.integers(0, len(specs) - 1), seed=st.integers(0, 2**32))
    def run(index: int, seed: int) -> None:
        spec = specs[index]
        args = gen_args(spec.input_schema, random.Random(seed), pool)
        _check_call(server, spec.name, args, spec.is_read_only, bool(spec.annotations.idempotent_hint),
                    spec.output_schema or {})

    settings(FUZZ, max_examples=15 * len(specs))(run)()


@pytest.mark.parametrize("app", APPS, ids=APP_IDS)
def test_fuzz_invalid_arguments_name_the_field_and_change_nothing(app: type[SandboxApp]) -> None:
    specs = [s for s in tool_specs(app) if s.input_schema.get("properties")]
    if not specs:
        pytest.skip(f"{app.name} has no tool with arguments")
    server = fresh(app, seed=17)
    pool = pool_of(app)

    @given(index=st.integers(0, len(specs) - 1), seed=st.integers(0, 2**32))
    def run(index: int, seed: int) -> None:
        spec = specs[index]
        args, field = invalid_args(spec.input_schema, random.Random(seed), pool)
        before, calls = plain_copy(server.session.state), server.session.calls
        result = server.call_tool_sync(spec.name, args)
        text = text_of(result)
        assert result.is_error and text.startswith("invalid_args:"), f"{spec.name}({args}) accepted: {text}"
        assert field in text, f"{spec.name}: error does not name '{field}': {text}"
        assert server.session.state == before and server.session.calls == calls

    settings(FUZZ, max_examples=4 * len(specs))(run)()
