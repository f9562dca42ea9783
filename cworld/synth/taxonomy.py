"""The constraint taxonomy (`task_synth/constraints.yaml`): types, their verification forms, and form checks.

The taxonomy is environment content, so a user can add a type or a form without touching code; the
checks here only make sure a drafted constraint names a known type and, when it carries a
`verification`, that the form belongs to its type and has the fields the form declares.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError

from cworld.data_model import Constraint
from cworld.errors import ContentError

TAXONOMY_FILE = "constraints.yaml"
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "integer": (int,),
    "number": (int, float),
    "string": (str,),
    "list": (list,),
    "any": (object,),
}


class VerificationForm(BaseModel):
    kind: str
    fields: dict[str, str] = Field(default_factory=dict)
    checks: str = ""


class ConstraintType(BaseModel):
    name: str
    description: str
    paper: str | None = None
    examples: list[str] = Field(default_factory=list)
    verification: list[VerificationForm] = Field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        return [f.kind for f in self.verification]


class Taxonomy(BaseModel):
    types: dict[str, ConstraintType]

    def get(self, name: str) -> ConstraintType | None:
        return self.types.get(name)

    def form(self, kind: str) -> tuple[ConstraintType, VerificationForm] | None:
        for ctype in self.types.values():
            for form in ctype.verification:
                if form.kind == kind:
                    return ctype, form
        return None

    def prompt_text(self) -> str:
        """The taxonomy as the drafter and critic read it: one block per type with its forms."""
        lines = []
        for ctype in self.types.values():
            lines.append(f"- {ctype.name}: {ctype.description}")
            for form in ctype.verification:
                fields = ", ".join(f"{k}: {v}" for k, v in form.fields.items()) or "no fields"
                lines.append(f'    verification {{"kind": "{form.kind}", {fields}}}: {form.checks}')
            if ctype.examples:
                lines.append(f"    e.g. {ctype.examples[0]}")
        return "\n".join(lines)


def load_taxonomy(folder: Path) -> Taxonomy:
    """Read `<task_synth>/constraints.yaml`; a malformed file is a `ContentError` naming the problem."""
    return _load(str(folder / TAXONOMY_FILE))


@cache
def _load(path_text: str) -> Taxonomy:
    path = Path(path_text)
    if not path.is_file():
        raise ContentError(
            f"{path}: missing; the constraint taxonomy must exist (copy it from a cworld environment)"
        )
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        types = {name: ConstraintType(name=name, **body) for name, body in (raw.get("types") or {}).items()}
    except (yaml.YAMLError, ValidationError, TypeError, AttributeError) as exc:
        raise ContentError(f"{path}: not a valid constraint taxonomy ({str(exc).splitlines()[0]})") from None
    if not types:
        raise ContentError(f"{path}: defines no constraint types under 'types:'")
    return Taxonomy(types=types)


def form_problems(constraint: Constraint, taxonomy: Taxonomy, tool_ids: set[str]) -> list[str]:
    """What is wrong with one constraint's type and verification form (empty when it is well formed)."""
    ctype = taxonomy.get(constraint.type)
    if ctype is None:
        return [
            f"{constraint.id}: unknown constraint type {constraint.type!r}; use one of "
            f"{sorted(taxonomy.types)}"
        ]
    verification = constraint.verification
    if verification is None:
        return []
    kind = verification.get("kind")
    form = next((f for f in ctype.verification if f.kind == kind), None)
    if form is None:
        return [
            f"{constraint.id}: type {ctype.name} has no verification kind {kind!r}; use one of "
            f"{ctype.kinds or 'none'}"
        ]
    return _field_problems(constraint.id, form, verification, tool_ids)


def _field_problems(
    cid: str, form: VerificationForm, verification: dict[str, Any], tool_ids: set[str]
) -> list[str]:
    problems = []
    for name, json_type in form.fields.items():
        if name not in verification:
            problems.append(f"{cid}: verification {form.kind} needs field {name!r}")
            continue
        value = verification[name]
        allowed = _JSON_TYPES.get(json_type, (object,))
        if not isinstance(value, allowed) or (isinstance(value, bool) and json_type in ("integer", "number")):
            problems.append(f"{cid}: verification {form.kind}.{name} should be a {json_type}, got {value!r}")
        elif name == "tool" and value not in tool_ids:
            problems.append(
                f"{cid}: verification {form.kind} names tool {value!r}, which the task does not use"
            )
    return problems


def verifiable(constraint: Constraint) -> bool:
    return bool(constraint.verification and constraint.verification.get("kind"))
