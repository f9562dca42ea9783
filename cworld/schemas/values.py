"""The one JSON-Schema value generator: a walk over the schema, with two modes for its choices.

Both the registry's validation probes and the schema engine need a value a schema accepts. The walk is
the same (composite schemas, `type` lists, a maker per type, lengths kept); what differs is the choice
at each leaf, so each use is a mode, a subclass that makes those choices:

- `probe.ProbeValues`: the value a tool most likely accepts, with no randomness: the schema's own first
  choice (enum, default, examples), hints from the name and description, dates a month after `now`.
- `realistic.RealisticValues`: a plausible, varied value drawn from an RNG (names, prices, dates near the
  session clock), ids of records that exist when the engine knows its world.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Final

#: `fixed` found no value the schema itself fixes.
UNSET: Final = object()


class ValueGenerator(ABC):
    """A value that satisfies a schema (as far as a heuristic can), shaped by the field's name."""

    #: What a `type` list of nothing but "null" stands for.
    null_only: str = "null"
    #: A schema without `type` that has `items` is an array (else a string).
    untyped_items_are_arrays: bool = False

    def value(self, schema: dict[str, Any], name: str = "", depth: int = 0) -> Any:
        schema = self.normalize(schema)
        fixed = self.fixed(schema)
        if fixed is not UNSET:
            return fixed
        branch = self.branch(schema)
        if branch is not None:
            return self.value(branch, name, depth)
        kind = self.kind(schema)
        if kind == "boolean":
            return self.boolean()
        if kind == "null":
            return None
        makers = {"integer": self.number, "number": self.number, "array": self.array, "object": self.obj}
        return makers.get(kind, self.string)(schema, name, depth)

    def normalize(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The schema to read (references followed, composites flattened, where the mode does that)."""
        return schema

    @abstractmethod
    def fixed(self, schema: dict[str, Any]) -> Any:
        """A value the schema itself fixes (`const`, an `enum` member, ...), else `UNSET`."""

    def branch(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        """The option of an `anyOf`/`oneOf`/`allOf` to generate instead, else None."""
        return None

    def kind(self, schema: dict[str, Any]) -> str:
        """The JSON type to make: the first non-null of a `type` list; guessed when there is no `type`."""
        kind = schema.get("type")
        if isinstance(kind, list):
            return next((t for t in kind if t != "null"), self.null_only)
        if kind:
            return str(kind)
        if "properties" in schema:
            return "object"
        return "array" if self.untyped_items_are_arrays and "items" in schema else "string"

    @abstractmethod
    def boolean(self) -> bool: ...

    @abstractmethod
    def string(self, schema: dict[str, Any], name: str, depth: int) -> str: ...

    @abstractmethod
    def number(self, schema: dict[str, Any], name: str, depth: int) -> float | int: ...

    @abstractmethod
    def array(self, schema: dict[str, Any], name: str, depth: int) -> list[Any]: ...

    @abstractmethod
    def obj(self, schema: dict[str, Any], name: str, depth: int) -> dict[str, Any]: ...


def fit_length(text: str, schema: dict[str, Any]) -> str:
    """`text` cut to `maxLength`, then padded with 'x' to `minLength`."""
    high = schema.get("maxLength")
    text = text[: int(high)] if high is not None else text
    return text.ljust(int(schema.get("minLength", 0)), "x")
