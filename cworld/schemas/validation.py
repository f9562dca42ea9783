"""Checking against JSON Schemas: is a schema valid, does a value follow one (each answer in one line)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import jsonschema


@lru_cache(maxsize=4096)
def _validator(schema_text: str) -> Any:
    """One validator per distinct schema. Schemas are not checked here (that costs ~35 ms each, far more
    than validating): tools' schemas were checked by the registry, forged ones by `schema_problem`."""
    schema = json.loads(schema_text)
    return jsonschema.validators.validator_for(schema)(schema)


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
    validator = _validator(json.dumps(schema, sort_keys=True, default=str))
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    except Exception as exc:  # an unchecked, malformed schema fails in many ways (bad $ref, wrong types)
        return f"invalid schema: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"{where}: {error.message}"
