"""Checking against JSON Schemas: is a schema valid, does a value follow one (each answer in one line).

A check runs a compiled validator (`compiled.py`) built once per schema: once per schema object, found
by identity, and once per schema shape (its canonical JSON), so equal schemas share one. jsonschema runs
only to say why a value is invalid, or for a schema the compiler leaves to it.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from functools import lru_cache
from typing import Any

import jsonschema

from cworld.schemas.compiled import Check, compile_schema

_BY_OBJECT: OrderedDict[int, tuple[dict[str, Any], Check | None]] = OrderedDict()
_BY_OBJECT_LIMIT = 4096


@lru_cache(maxsize=4096)
def _validator(schema_text: str) -> Any:
    """One jsonschema validator per distinct schema. Schemas are not checked here (that costs ~35 ms each,
    far more than validating): tools' schemas were checked by the registry, forged ones by `schema_problem`."""
    schema = json.loads(schema_text)
    return jsonschema.validators.validator_for(schema)(schema)


@lru_cache(maxsize=4096)
def _compiled(schema_text: str) -> Check | None:
    return compile_schema(json.loads(schema_text))


def _canonical(schema: dict[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, default=str)


def _check_for(schema: dict[str, Any]) -> Check | None:
    """The compiled check of `schema`: looked up by identity first (the same dict is checked on every
    call of a tool), by canonical JSON the first time. The entry holds the schema, so its id stays its own."""
    entry = _BY_OBJECT.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    check = _compiled(_canonical(schema))
    _BY_OBJECT[id(schema)] = (schema, check)
    if len(_BY_OBJECT) > _BY_OBJECT_LIMIT:
        _BY_OBJECT.popitem(last=False)
    return check


def schema_problem(schema: dict[str, Any]) -> str | None:
    """None when `schema` is a valid JSON Schema, else why not, in one line."""
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return f"{where}: {exc.message}"
    return None


def validation_error(schema: dict[str, Any], value: Any) -> str | None:
    """None when `value` validates against `schema`, else the first error in one line."""
    if _compiled_verdict(schema, value):
        return None
    return _jsonschema_error(schema, value)  # jsonschema gives the verdict, and says why


def conforms(schema: dict[str, Any], value: Any) -> bool:
    """Whether `value` validates against `schema`, the verdict `validation_error` gives, without the message it
    builds for an invalid value (jsonschema's best match costs far more than a check that stops at the first).
    The compiled check's verdict stands either way (it never disagrees with jsonschema); jsonschema is asked only
    where there is none."""
    verdict = _compiled_verdict(schema, value)
    if verdict is not None:
        return verdict
    try:
        return bool(_validator(_canonical(schema)).is_valid(value))
    except Exception:  # noqa: BLE001 - a malformed schema: nothing validates against it
        return False


def _compiled_verdict(schema: dict[str, Any], value: Any) -> bool | None:
    """The compiled check's verdict on `value`; None where it has none (no check for the schema, or one that
    failed on an odd value or schema): jsonschema decides those."""
    check = _check_for(schema)
    if check is None:
        return None
    try:
        return bool(check(value))
    except Exception:  # noqa: BLE001 - an odd value or schema the compiled check did not foresee
        return None


def _jsonschema_error(schema: dict[str, Any], value: Any) -> str | None:
    validator = _validator(_canonical(schema))
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    except Exception as exc:  # an unchecked, malformed schema fails in many ways (bad $ref, wrong types)
        return f"invalid schema: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"{where}: {error.message}"
