"""`{{step_id.path}}` references in a gold plan's arguments (`PlanStep.arguments`): the syntax, and where
they stand. The agents resolve them (`cworld.agents.references`); the World Engine reads them to ground its
world in the plan (`cworld.engine.world`). One definition, so the two never disagree on what a reference is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REFERENCE = re.compile(r"\{\{\s*([A-Za-z0-9_\-]+)((?:\.[^.{}\[\]\s]+|\[[^\]{}]*\])*)\s*\}\}")


def references(value: Any) -> list[tuple[str, str]]:
    """Every (step id, dotted path) referenced anywhere in `value`, in order of appearance."""
    if isinstance(value, str):
        return [(m.group(1), m.group(2)) for m in REFERENCE.finditer(value)]
    if isinstance(value, Mapping):
        return [ref for item in value.values() for ref in references(item)]
    if isinstance(value, list | tuple):
        return [ref for item in value for ref in references(item)]
    return []
