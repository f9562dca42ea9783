"""Category cards: what the World Engine knows about a category of tools (email, calendar, ...).

A card is a YAML file in an environment's `category_cards/`. It is validated on load; an error names
the file and the field. Files and folders starting with `_` are not cards (`_prompts/` holds the LLM
engine's prompt template). The schema is documented in docs/category-cards.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cworld.errors import ContentError

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML has it, else the pure-Python one: the same documents, and the cards'
YAML parses about 10x faster (46 cards: 0.04 s, not 0.45 s; `load_cards` 0.48 s -> 0.13 s)."""

OperationKind = Literal["list", "get", "search", "create", "update", "delete", "action"]
OPERATION_KINDS: tuple[str, ...] = ("list", "get", "search", "create", "update", "delete", "action")
CardErrorClass = Literal["invalid_args", "not_found", "auth", "rate_limit", "timeout", "unavailable", "business"]

#: The field-type vocabulary the schema engine knows how to fill.
FIELD_TYPE = re.compile(
    r"^(string|text|int|float|bool|money|email|phone|url|date|datetime|time|name|company|city|country|"
    r"title|path|sha|ref|id|word|tag|currency|timezone|code|enum\[[^\]]+\]|list\[[a-z_]+\])$"
)
#: Placeholders a vocabulary template may use (`cworld.engine.world.names` fills them).
VOCABULARY_FIELDS = frozenset({"n", "quarter", "month", "year", "weekday", "first", "city", "company"})
VOCABULARY_FIELD = re.compile(r"\{([a-z_]+)\}")
#: `{prefix}`, `{n}` (or `{n:04d}`), `{sha}`, `{hex8}`, `{uuid}`, plus literal text.
ID_FORMAT = re.compile(r"^([^{}]|\{(prefix|n|n:0\dd|sha|hex8|uuid)\})+$")


def require_match(pattern: re.Pattern[str], value: str, message: str) -> str:
    """`value` when `pattern` matches it; else a ValueError (inside a pydantic validator: a validation error)."""
    if not pattern.match(value):
        raise ValueError(message)
    return value


def require_unique(what: str, names: list[str]) -> None:
    """Raise (inside a pydantic validator: a validation error) when a name occurs twice."""
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{what} names must be unique; repeated: {dupes}")


def check_vocabulary(templates: list[str]) -> list[str]:
    """Vocabulary templates use only the placeholders `cworld.engine.world.names` fills."""
    for template in templates:
        bad = set(VOCABULARY_FIELD.findall(template)) - VOCABULARY_FIELDS
        if bad or not template.strip():
            raise ValueError(f"vocabulary template {template!r}: unknown placeholders {sorted(bad)}; use "
                             f"{sorted(VOCABULARY_FIELDS)}")
    return templates


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Recognition(_Strict):
    """How a tool is recognised as belonging to this card (after an explicit card name as category)."""

    servers: list[str] = Field(default_factory=list, description="server ids that belong wholly to this card")
    categories: list[str] = Field(
        default_factory=list, description="category names (sandbox app categories, manifest hints) meaning this card"
    )
    name_keywords: list[str] = Field(default_factory=list, description="words in the tool name")
    description_keywords: list[str] = Field(default_factory=list, description="words in the description")


class EntityType(_Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    id_prefix: str = Field(description="ids look like PREFIX_0001 unless id_format says otherwise")
    id_format: str = Field("{prefix}_{n:04d}", description="how new ids look, e.g. '{prefix}_{n:04d}', '{n}', '{sha}'")
    key_field: str = Field("id", description="the field that identifies a record: id, path, name, number, sha")
    fields: dict[str, str] = Field(description="field name -> type from the card vocabulary")
    seed_count: int = Field(4, ge=0, le=50, description="pre-existing entities in a new simulated world")
    max_records: int | None = Field(
        None, ge=1, description="at most this many in a generated world, where a service holds few (a browser's tabs)"
    )
    open_world: bool = Field(
        False, description="any key names a record (time zones, web pages, search results): unknown ones are made up"
    )
    examples: list[dict[str, Any]] = Field(default_factory=list)
    text: dict[OperationKind, str] = Field(
        default_factory=dict, description="per-operation text renderings for this entity, overriding the card's"
    )
    vocabulary: list[str] = Field(
        default_factory=list, description="how records of this kind are named in a real account ('Dentist "
        "appointment', 'Invoice #{n} overdue'): templates for its name or title field, placeholders "
        "{n} {quarter} {month} {year} {weekday} {first} {city} {company}; else `_vocabulary.yaml`'s by kind name"
    )

    @field_validator("fields")
    @classmethod
    def _known_types(cls, value: dict[str, str]) -> dict[str, str]:
        bad = {k: v for k, v in value.items() if not FIELD_TYPE.match(v)}
        if bad:
            raise ValueError(f"unknown field types {bad}; use e.g. string, text, int, datetime, enum[a,b], list[email]")
        return value

    @field_validator("id_format")
    @classmethod
    def _known_placeholders(cls, value: str) -> str:
        hint = "may only use {prefix}, {n}, {n:04d}, {sha}, {hex8}, {uuid}"
        return require_match(ID_FORMAT, value, f"id_format {value!r} {hint}")

    @field_validator("vocabulary")
    @classmethod
    def _known_words(cls, value: list[str]) -> list[str]:
        return check_vocabulary(value)

    @model_validator(mode="after")
    def _key_is_a_field(self) -> EntityType:
        if self.key_field != "id" and self.key_field not in self.fields:
            raise ValueError(f"key_field '{self.key_field}' must be 'id' or one of the fields")
        return self


class OperationPattern(_Strict):
    description: str
    shape: dict[str, Any] = Field(
        default_factory=dict, description="the JSON response skeleton, e.g. {items: [ENTITY], total: int}"
    )
    text: str | None = Field(
        None,
        description="a text rendering for tools that answer in text: a per-record template with {field}s, "
        "'@json' (the payload as JSON text) or '@repr' (Python repr, as some servers print rows)",
    )
    text_header: str = Field("", description="text before the rendered records of a list; may use {total}")


class FailureMode(_Strict):
    when: str = Field(description="the situation, e.g. 'unknown id', 'missing permission'")
    error_class: CardErrorClass
    message: str = Field(description="a realistic message; {id}, {field} and {entity} are filled in")


class Demonstration(_Strict):
    """One call and the answer the LLM engine is shown for it; checked on load against the envelope and
    the response pattern of its tool (`demos.py`), so an example never contradicts its schema."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    response: Any
    is_error: bool = False
    error_class: CardErrorClass | None = Field(None, description="an error demonstration's class")


class CategoryCard(_Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    title: str
    description: str
    recognition: Recognition = Field(default_factory=Recognition)
    entities: list[EntityType] = Field(default_factory=list)
    operations: dict[OperationKind, OperationPattern] = Field(default_factory=dict)
    failures: list[FailureMode] = Field(default_factory=list)
    consistency: list[str] = Field(default_factory=list)
    demonstrations: list[Demonstration] = Field(default_factory=list)
    live: bool = Field(True, description="False for categories with no live tool at all (e.g. crm)")
    rules: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="operation families (checkout, transfer, ...) as operation rules with `match` name words; "
        "validated by cworld.engine.rules.spec (docs/world-engine.md, 'Operation rules')",
    )
    page_size: int = Field(20, ge=1, le=1000, description="results per page where a tool does not state one")

    @model_validator(mode="after")
    def _unique_entities(self) -> CategoryCard:
        require_unique("entity", [e.name for e in self.entities])
        return self

    def entity(self, name: str) -> EntityType | None:
        return next((e for e in self.entities if e.name == name), None)

    def failure(self, error_class: str, about: str | None = None) -> FailureMode | None:
        """The card's failure of that class; with `about` (a kind), the one whose `when` names it first (a CAD
        card's unknown layer is not its unknown entity handle), else one whose message names no other kind of the
        card (a missing record is no "no such table"), else None."""
        found = [f for f in self.failures if f.error_class == error_class]
        if about is None:
            return next(iter(found), None)
        named = next((f for f in found if _names(f.when, about)), None)
        others = [e.name for e in self.entities if e.name != about]
        return named or next((f for f in found if not any(_names(f.message, k) for k in others)), None)


def _names(text: str, kind: str) -> bool:
    """Whether `text` names the kind (`list_messages` names messages)."""
    spaced = text.replace("_", " ")
    return re.search(rf"\b{re.escape(kind.replace('_', ' '))}s?\b", spaced, re.IGNORECASE) is not None


def _location(err: ValidationError) -> str:
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
    return f"field '{loc}': {first['msg']}"


def load_card(path: Path) -> CategoryCard:
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
    except yaml.YAMLError as exc:
        raise ContentError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict):
        raise ContentError(f"{path}: a card must be a mapping with name, title, description, ...")
    try:
        card = CategoryCard.model_validate(raw)
    except ValidationError as exc:
        raise ContentError(f"{path}: {_location(exc)}") from None
    if card.name != path.stem:
        raise ContentError(f"{path}: field 'name' is '{card.name}' but the file is '{path.stem}.yaml'; make them equal")
    from cworld.engine.cards.demos import demonstration_problem  # it reads the patterns, which read cards

    problem = demonstration_problem(card)
    if problem:
        raise ContentError(f"{path}: {problem}")
    return card


def card_files(folder: Path) -> list[Path]:
    """The card files of a folder: `*.yaml` whose name does not start with `_`."""
    return [p for p in sorted(folder.glob("*.yaml")) if not p.name.startswith("_")]


def load_cards(folder: Path) -> dict[str, CategoryCard]:
    """All cards in a folder, by name. A `generic` card must exist: it catches what nothing else does."""
    if not folder.is_dir():
        raise ContentError(f"{folder}: no category_cards folder; create it or point --env at an environment")
    cards = {c.name: c for c in (load_card(p) for p in card_files(folder))}
    if "generic" not in cards:
        raise ContentError(f"{folder}: no generic.yaml; every environment needs the fallback card")
    shared = shared_families(folder / FAMILIES_FILE)
    if shared:  # a card's own family of the same name wins
        cards = {name: card.model_copy(update={"rules": {**shared, **card.rules}}) for name, card in cards.items()}
    words = shared_vocabulary(folder / VOCABULARY_FILE)
    if words:  # an entity's own vocabulary wins
        cards = {name: _with_vocabulary(card, words) for name, card in cards.items()}
    return cards


#: How records of each kind are named in a real account, for every card with that kind (`vocabulary:`).
VOCABULARY_FILE = "_vocabulary.yaml"


def shared_vocabulary(path: Path) -> dict[str, list[str]]:
    """`category_cards/_vocabulary.yaml`'s `vocabulary:` (kind -> templates; none is fine), each validated as
    an entity's own; a bad file is one line naming it."""
    words = _shared_section(path, "vocabulary", list, "entity kinds to lists of names")
    for kind, templates in words.items():
        try:
            check_vocabulary([str(t) for t in templates])
        except ValueError as exc:
            raise ContentError(f"{path}: vocabulary.{kind}: {exc}") from None
    return {str(k): [str(t) for t in v] for k, v in words.items()}


def _with_vocabulary(card: CategoryCard, words: dict[str, list[str]]) -> CategoryCard:
    entities = [e if e.vocabulary or e.name not in words else e.model_copy(update={"vocabulary": words[e.name]})
                for e in card.entities]
    return card.model_copy(update={"entities": entities})


#: The operation families every category shares (cancel sets a status, assign sets the assignee, ...).
FAMILIES_FILE = "_families.yaml"


def shared_families(path: Path) -> dict[str, dict[str, Any]]:
    """`category_cards/_families.yaml`'s `rules:` (none is fine); a bad file is one line naming it."""
    return _shared_section(path, "rules", dict, "family names to operation rules")


def _shared_section(path: Path, section: str, kind: type, what: str) -> dict[str, Any]:
    """The `section:` mapping of a file every card shares (`_families.yaml`, `_vocabulary.yaml`), each value a
    `kind`; {} when the file is absent, one line naming the file when it is not that."""
    if not path.is_file():
        return {}
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
    except yaml.YAMLError as exc:
        raise ContentError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    found = raw.get(section) if isinstance(raw, dict) else None
    if not isinstance(found, dict) or not all(isinstance(v, kind) for v in found.values()):
        raise ContentError(f"{path}: expected `{section}:` mapping {what}")
    return found
