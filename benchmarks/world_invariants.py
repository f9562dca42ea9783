"""Does the World Engine keep its world consistent? Invariants over every harvested MCP server's tools.

Run: `python benchmarks/world_invariants.py [--seed 0] [--servers S ...] [--limit-servers N]
[--tools-per-server N] [--per-card] [--examples N] [--json PATH]`. The default run covers every harvested
server (`environment_tools(env, workspace).harvested`, 321 servers, 8,187 tools) in a scratch workspace, with
`controller.factory.world_engine(..., by_server=True)` (the shipped `RulesEngine`: per-tool overrides,
card family rules, inferred rules, else the schema engine, marked simulated) on the seed's world. Every
tool is tested unless `--tools-per-server` caps it (the output then says how many servers were sampled):
about 25-35 s on a 2-core machine (building the 321 servers' worlds is ~10 s of it), ~6,000 answers.

Each check instance runs in a fresh `SessionLog(seed=S)`; every answer is recorded in the log before the
next call (`session.record`), as the synthesized backend does. Arguments are filled from the input schema
(`schemas.probe.example_value`, required properties only) except for a `<kind>_id` argument of a kind the
server's world holds, which gets that kind's first record's key (so a reference check does not fail for
the wrong reason); an instance whose arguments do not validate against the input schema is not applicable.

Heuristics (what a check needs to find in a tool):
- Operation kind and entity are the engine's own (`cards.operations.operation_kind`, `entity_for` under
  `engine.card_of(tool)`: the server's card, with the kinds its tools' id arguments name); the record collection is `ServerWorld.kinds[entity]`. Tools are grouped
  by (entity, name noun): the noun is the last word of the tool's name that is not a verb, a stop word or
  the server's common name prefix (`get_booking_details` -> booking, `list_customers` -> customer,
  `sb_book` -> book). Create, get, list, update and delete tools pair only within a group, so
  `create_booking` is not read back through `get_customer` even when the engine maps both to `client`;
  within a group the partner sharing most name words wins (`create_testcase_comment` reads back through
  `list_testcase_comments`, not `list_work_item_comments`), then the one with fewest required arguments.
- An argument named by the field that keys a kind the world holds (`symbol` of a market keyed by symbol) gets
  that kind's first record's key too.
- A tool's own id argument: `<entity>_id`, `<entity>Id`, `<noun>_id`, `<noun>Id`, the entity's key field,
  `id`; else (check 1 only) its first required argument that looks like an id (`*_id`, `*Id`, `*ID`,
  `*_key`, `*Key`, `*_uuid`, `uuid`), else its only optional one. Ids that are names, paths, urls, handles
  or slugs are not recognised (most of check 1's "no id argument found").
- A nonsense id fits the argument's schema (a string `zzqxv-nonexistent-4711` or, when a pattern or type
  refuses it, `987654321`, a uuid, ...) and is no key of the server's world.
- A record's key is given to a tool when it fits the id argument's schema (a numeric key as an integer);
  world keys such as `cli_0001` never fit an integer id, and such tools are not applicable to checks 3-4.
- Query arguments: `query`, `q`, `search`, `keyword(s)`, `term(s)`, `text`, `name_contains`, ... Paging
  arguments: page numbers (`page`, `page_number`, `pageNumber`), offsets (`offset`, `skip`, `start`) and
  cursors (`cursor`, `page_token`, `after`, `next_token`, ...); size arguments (`limit`, `page_size`, ...).
- The items of an answer: its structured content's longest list (searched two levels deep; a text answer is
  read as JSON or, as the sqlite server writes its rows, Python's repr); an item's
  identity is its `id`/`key`/`<x>_id` field, else its JSON. A text-only answer has items unless it is empty
  or says nothing matched ("no results", "not found", "0 items").

Checks (holds / applicable; "not applicable" reasons are counted and printed, never folded into holds):
1. unknown id: a get/update/delete tool with an identifiable id argument, called with a nonsense id,
   answers an error of class `not_found`.
2. create reads back: per create tool whose group also has a get (own id argument) or a list tool: create
   a record (a marker `cwmark4711` in its first free text argument: name, title, ...), then get it by the
   key the create's answer exposes (`<noun>_id`, `<entity>_id`, `id`, ... anywhere in it), and walk the
   list (its size argument at 100 or its maximum, at most 10 pages): the get must succeed and show the
   marker (or the key), the list must show the marker (without a marker: the list, walked before and after
   the create, must hold an item it did not). Sub-figures `by_get` and `in_list`.
3. update visible: per update tool with an own id argument and a get tool in its group: an existing record
   (the first key of the collection that fits both id arguments), one argument naming a field of that record
   (else of the entity) set to a new value (a marker, another enum member, a number + 7, not a boolean);
   the update succeeds and the get shows the new value.
4. delete gone: per delete tool with an own id argument and a get tool in its group: delete an existing
   record (the second fitting key), which succeeds; the get answers `not_found`, and the group's list (when
   it has one, walked as in 2) no longer holds the key among its items' identities.
5. nonsense search: search tools, and list tools with a query argument, given `zzqxv nonexistent 4711`:
   the answer has no items (or is a `not_found` error). Other errors fail; `invalid_args` is not applicable.
6. paging: list tools with a paging argument (a size argument set to 5 when there is one): page 1 twice
   and page 2 (the page number + 1; the offset + the page's size; the cursor the first answer gave). Page
   1 and 2 share no item (when page 1 has items), page 1 asked again is the same answer, and a total the
   answers state (`total`, `total_count`, ...) is the same on both pages. Page 1 erring is not applicable.
7. determinism: every instance of checks 1-6 that made calls is run again, the same calls in a fresh
   session of the same engine: the answers must be identical (`text` and `is_error`).

Rule origins (`engine.origin.answer_origin`) are counted over every first-run answer. Figures are given
overall and per category card (the card most of a server's tools get).
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from cworld.agents.references import json_in_text
from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.engine.cards.operations import (
    entity_for,
    keyed_by,
    name_tokens,
    names_its_kind,
    operation_kind,
    same_entity,
    singular_word,
    snake,
    verb_kind,
)
from cworld.engine.origin import ORIGINS, answer_origin, origin_shares
from cworld.engine.protocol import SessionLog
from cworld.engine.rules.arguments import argument_checks, blank_checks, value_checks
from cworld.engine.rules.dispatch import operation_variants
from cworld.engine.rules.infer import described_kind
from cworld.engine.rules.wrappers import unwrapped
from cworld.engine.world.base import ServerWorld
from cworld.schemas.probe import example_value
from cworld.schemas.validation import validation_error

CHECKS = ("unknown_id", "create_reads_back", "update_visible", "delete_gone", "nonsense_search", "paging",
          "determinism")
LABELS = {"unknown_id": "1 unknown id -> not_found", "create_reads_back": "2 create reads back",
          "update_visible": "3 update visible", "delete_gone": "4 delete gone",
          "nonsense_search": "5 nonsense search empty", "paging": "6 paging consistent",
          "determinism": "7 determinism"}
SUBS = {"create_reads_back": ("by_get", "in_list"), "delete_gone": ("get_not_found", "not_in_list"),
        "paging": ("no_overlap", "repeat_same", "total_stable")}
MARK = "cwmark4711"
NEW_TEXT = "cwupdated4711"
NONSENSE_QUERY = "zzqxv nonexistent 4711"
NONSENSE_IDS: tuple[Any, ...] = ("zzqxv-nonexistent-4711", "zzqxv4711", "ZZQXV4711", "987654321",
                                 "00000000-0000-4000-8000-00000000d1e7", "zz")
MAX_PAGES = 10
TEST_PAGE_SIZE = 5

_ID_ARG = re.compile(r"^(?:.+_id|.+Id|.+ID|.+_key|.+Key|.+_uuid|.+Uuid|.+_identifier|.+Identifier|.+_slug|.+Slug|"
                     r"id|ID|Id|uuid|_id)$")
_QUERY_ARG = re.compile(r"^(q|query|search|search_?query|searchQuery|keywords?|terms?|search_?term|searchTerm|text|"
                        r"search_?text|searchText|name_contains|phrase|query_?string|queryString)$", re.IGNORECASE)
_PAGE_NUMBER = re.compile(r"^(page|page_?number|pageNumber|page_?no|pageNo|page_?num|pageNum)$", re.IGNORECASE)
_OFFSET = re.compile(r"^(offset|skip|start|start_?index|startIndex|from)$", re.IGNORECASE)
_CURSOR = re.compile(r"^(cursor|page_?token|pageToken|next_?token|nextToken|after|starting_after|"
                     r"continuation_?token|continuationToken|next_?cursor|nextCursor|marker|next_?page_?token)$",
                     re.IGNORECASE)
_SIZE = re.compile(r"^(page_?size|pageSize|limit|per_?page|perPage|max_?results|maxResults|count|top|size|n|top_?k|"
                   r"num_?results|numResults|first|max|max_?items|maxItems|page_?limit)$", re.IGNORECASE)
_TOKEN_ARGS = frozenset({"token", "access_token", "session_token", "auth_token", "api_key", "apiKey"})
_TOTAL_KEYS = ("total", "total_count", "totalCount", "total_results", "totalResults", "total_items", "totalItems",
               "total_size", "totalSize")
_CURSOR_KEYS = ("next_cursor", "nextCursor", "next_page_token", "nextPageToken", "next_token", "nextToken",
                "cursor", "next", "continuation_token", "continuationToken", "after", "next_after")
_NOTHING = re.compile(r"\b(no|0|zero)\b[^.\n]{0,40}\b(results?|matches|match|found|items?|records?|entries)\b|"
                      r"not found|nothing (found|matched)|^\s*(\[\s*\]|\{\s*\})?\s*$", re.IGNORECASE)
_PREPOSITIONS = frozenset({"by", "for", "from", "to", "in", "of", "on", "with", "into", "at"})
_STOP = frozenset({"by", "for", "from", "to", "in", "of", "on", "with", "a", "an", "the", "my", "all", "id", "ids",
                   "and", "or", "new", "info", "detail", "details", "data", "api", "mcp", "v1", "v2", "v3"})
_FREE_TEXT = ("name", "title", "subject", "summary", "label", "description", "text", "content", "body", "message",
              "note", "notes", "comment", "display_name", "displayName", "first_name", "firstName", "headline")


# --- arguments --------------------------------------------------------------------------------------------
def props_of(tool: ToolSpec) -> dict[str, Any]:
    return tool.input_schema.get("properties") or {}


def required_of(tool: ToolSpec) -> list[str]:
    return [r for r in tool.input_schema.get("required") or [] if r in props_of(tool)]


def one_schema(tool: ToolSpec, name: str) -> dict[str, Any]:
    """A schema validating the object `{name: value}` against the tool's property `name` (its `$defs` kept)."""
    root = tool.input_schema
    extra = {k: root[k] for k in ("$defs", "definitions") if k in root}
    return {**extra, "type": "object", "properties": {name: props_of(tool).get(name, {})}, "required": [name]}


def fits(tool: ToolSpec, name: str, value: Any) -> bool:
    return validation_error(one_schema(tool, name), {name: value}) is None


def fitted(tool: ToolSpec, name: str, key: Any) -> Any:
    """`key` as the argument `name` takes it (a numeric key as an integer); None when it cannot fit."""
    text = str(key)
    candidates: list[Any] = [text]
    if re.fullmatch(r"-?\d+", text):
        candidates.insert(0, int(text))
    return next((c for c in candidates if fits(tool, name, c)), None)


def collection(world: ServerWorld, kind: str) -> dict[str, Any] | None:
    found = world.collection(kind)
    return found if isinstance(found, dict) and found else None


def kind_of_ref(world: ServerWorld, arg: str) -> str | None:
    """The world's kind an `<kind>_id(s)` / `kindId(s)` argument (or `_identifier`, `_key`, `_slug`) names, when the
    world holds it."""
    m = re.fullmatch(r"(.+?)(?:_ids?|Ids?|IDs?|_uuids?|Uuids?|_gids?|Gids?|_iids?|Iids?|_identifiers?|Identifiers?|"
                     r"_keys?|Keys?|_slugs?|Slugs?)", arg)
    if not m:
        return None
    words = [singular_word(t) for t in name_tokens(m.group(1))]
    for kind in ("_".join(words[i:]) for i in range(len(words))):  # `relatedWorkItemId`: work_item, then item
        if kind in world.kinds and collection(world, kind):
            return kind
    if re.search(r"(?:_keys?|Keys?|_slugs?|Slugs?)$", arg):  # `repo_slug`: a key names its kind by a synonym too
        return next((k for k in world.kinds if same_entity(words[-1], k) and collection(world, k)), None)
    return None


def keyed_kind(world: ServerWorld, arg: str, card: CategoryCard | None) -> str | None:
    """The kind an argument names by the field that keys it (`symbol` of a market keyed by symbol), when the
    world holds it: a reference as an `<kind>_id` is."""
    entity = card.entity(arg) if card is not None else None
    return arg if entity is not None and entity.key_field == arg and collection(world, arg) else None


def held_name(tool: ToolSpec, arg: str, world: ServerWorld) -> Any:
    """For an argument named as a kind the world holds (`deck`, `database`), the name of its first named record
    that fits, as a person names one; None otherwise."""
    records = collection(world, snake(arg)) if snake(arg) in world.kinds else None
    names = (r.get(f) for r in list((records or {}).values())[:20] if isinstance(r, dict)
             for f in ("name", "title", f"{snake(arg)}_name"))
    return next((v for v in (fitted(tool, arg, n) for n in names if isinstance(n, str) and n) if v is not None), None)


def fill(tool: ToolSpec, world: ServerWorld, now: datetime, given: dict[str, Any] | None = None,
         skip: Iterable[str] = (), card: CategoryCard | None = None) -> dict[str, Any] | None:
    """The required arguments (from the schema; a reference to a kind the world holds, by its name or, under
    `card`, as its description names it as the engine reads it: its first record that fits), then `given` over
    them; None when the result does not validate."""
    given = given or {}
    flat = unwrapped(tool)
    if flat is not None and flat[1] not in given:  # `path={room_id}`: filled as the engine reads it
        wrapper = flat[1]
        inner = fill(flat[0], world, now, None, skip, card) or {}
        outer = {k: v for k, v in inner.items() if k in props_of(tool)}  # no wrapped name is also an outer one
        wrapped = {k: v for k, v in inner.items() if k not in outer}
        args = {**outer, wrapper: wrapped, **given}
        return args if validation_error(tool.input_schema, args) is None else None
    skipped = set(skip)
    args: dict[str, Any] = {}
    for name in required_of(tool):
        if name in given or name in skipped:
            continue
        kind = kind_of_ref(world, name) or keyed_kind(world, name, card)
        keyed = keyed_by(name, card) if kind is None and card is not None else None  # `handles`: CAD entities
        if keyed is not None and collection(world, keyed[0].name):
            kind = keyed[0].name
        described = described_kind(props_of(tool)[name], card) if kind is None and card is not None else None
        if described is not None and collection(world, described[0].name):
            kind = described[0].name
        records = collection(world, kind) if kind else None
        value = next((v for v in (fitted(tool, name, k) for k in list(records)[:20]) if v is not None), None) \
            if records else None
        if value is None and kind is None:  # `deck`, `database`: a record of that kind by its name
            value = held_name(tool, name, world)
        if value is None and records:  # a list of ids: the first key that fits as a one-item list
            value = next(([v] for k in list(records)[:20] for v in (k, int(k) if str(k).isdigit() else k)
                          if fits(tool, name, [v])), None)
        if value is None:
            try:
                value = example_value(props_of(tool)[name], name, root=tool.input_schema, now=now)
            except Exception:  # noqa: BLE001 - a schema the generator cannot read: the instance is not applicable
                return None
        args[name] = value
    args.update(given)
    return args if validation_error(tool.input_schema, args) is None else None


def camel(word: str) -> str:
    parts = word.split("_")
    return parts[0] + "".join(p.title() for p in parts[1:])


def own_id_arg(tool: ToolSpec, entity: EntityType, noun: str) -> str | None:
    props = props_of(tool)
    names = [f"{entity.name}_id", f"{camel(entity.name)}Id", f"{noun}_id", f"{camel(noun)}Id",
             entity.key_field if entity.key_field != "id" else "", "id"]
    return next((n for n in names if n and n in props), None)


def any_id_arg(tool: ToolSpec, entity: EntityType, noun: str) -> str | None:
    """The own id argument, else the first required id-like one, else the only optional id-like one."""
    own = own_id_arg(tool, entity, noun)
    if own is not None:
        return own
    found = next((n for n in required_of(tool) if _ID_ARG.match(n) and n not in _TOKEN_ARGS), None)
    if found is not None:
        return found
    optional = [n for n in props_of(tool) if _ID_ARG.match(n) and n not in _TOKEN_ARGS]
    return optional[0] if len(optional) == 1 else None


def arg_matching(tool: ToolSpec, pattern: re.Pattern[str]) -> str | None:
    return next((n for n in props_of(tool) if pattern.match(n)), None)


def nonsense_id(tool: ToolSpec, name: str, world: ServerWorld) -> Any:
    """A value the argument accepts that names no record of the server's world; None when none fits."""
    held = {str(k) for records in world.state.values() if isinstance(records, dict) for k in records}
    for value in (*NONSENSE_IDS, 987654321, 98765, 9999):
        for candidate in (value, int(value)) if isinstance(value, str) and value.isdigit() else (value,):
            if str(candidate) not in held and fits(tool, name, candidate):
                return candidate
    return None


def size_value(tool: ToolSpec, name: str, wanted: int) -> Any:
    """`wanted` clamped into the size argument's bounds (integer or string as it takes)."""
    schema = props_of(tool).get(name, {})
    low, high = schema.get("minimum"), schema.get("maximum")
    value = wanted
    if isinstance(high, int | float):
        value = min(value, int(high))
    if isinstance(low, int | float):
        value = max(value, int(low))
    return next((c for c in (value, str(value)) if fits(tool, name, c)), None)


# --- answers ----------------------------------------------------------------------------------------------
def content(result: ToolResult) -> Any:
    """The answer's data; a FastMCP answer of one string property holding JSON (`{"result": "{...}"}`) is read
    as that JSON, as its client reads it."""
    data = result.structured_content
    if data is None:
        data = parsed_text(result.text)
        if data is None:
            return None
    if isinstance(data, dict) and len(data) == 1:
        (inner,) = data.values()
        if isinstance(inner, str) and inner[:1] in ("{", "["):
            try:
                return json.loads(inner)
            except ValueError:
                return data
    return data


def parsed_text(text: str | None) -> Any:
    """A text answer's data: JSON, or rows in Python's repr as the sqlite server writes them (`str(rows)`), read
    as the agents read them (`agents.references.json_in_text`); None for prose."""
    try:
        return json.loads(text or "")
    except (ValueError, TypeError):
        return json_in_text(text)


def items_of(result: ToolResult) -> list[Any] | None:
    """The answer's records: the longest list two levels deep; None for a text answer with no structure."""
    data = content(result)
    if isinstance(data, list):
        return data
    if not isinstance(data, dict):
        return None
    lists = [v for v in data.values() if isinstance(v, list)]
    for v in data.values():
        if isinstance(v, dict):
            lists.extend(w for w in v.values() if isinstance(w, list))
    return max(lists, key=len) if lists else []


def found_items(result: ToolResult) -> str | None:
    """What a successful answer found (`3 items`, `no items but a total of 484`, `a text answer`); None
    for nothing."""
    items = items_of(result)
    if items is None:
        return None if _NOTHING.search(result.text or "") else "a text answer"
    if items:
        return "items"
    total = total_of(result)
    return "no items but a total > 0" if isinstance(total, int) and not isinstance(total, bool) and total > 0 \
        else None


def identity(item: Any) -> str:
    if isinstance(item, dict):
        for key in ("id", "key", "_id", "uuid"):
            if key in item and isinstance(item[key], str | int):
                return str(item[key])
        for key, value in item.items():
            if (key.endswith("_id") or key.endswith("Id")) and isinstance(value, str | int):
                return str(value)
    return json.dumps(item, sort_keys=True, default=str)


def identities(result: ToolResult) -> list[str]:
    return [identity(i) for i in items_of(result) or []]


def find_key(data: Any, names: list[str], depth: int = 0, given: frozenset[str] = frozenset()) -> Any:
    """The first value of a key in `names` (in that order of preference), searched three levels deep; values
    in `given` (the call's own arguments, echoed back) are passed over."""
    if depth > 3:
        return None
    if isinstance(data, dict):
        for name in names:
            value = data.get(name)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value) not in given:
                return value
        for value in data.values():
            found = find_key(value, names, depth + 1, given)
            if found is not None:
                return found
    if isinstance(data, list) and data:
        return find_key(data[0], names, depth + 1, given)
    return None


def shows_field(data: Any, name: str, value: Any, depth: int = 0) -> bool:
    if depth > 4:
        return False
    if isinstance(data, dict):
        if name in data and data[name] == value:
            return True
        return any(shows_field(v, name, value, depth + 1) for v in data.values())
    if isinstance(data, list):
        return any(shows_field(v, name, value, depth + 1) for v in data)
    return False


def cursor_of(result: ToolResult) -> Any:
    data = content(result)
    found = find_key(data, list(_CURSOR_KEYS)) if isinstance(data, dict) else None
    return found if found not in (None, "", 0) else None


def total_of(result: ToolResult) -> Any:
    data = content(result)
    if isinstance(data, dict):
        for key in _TOTAL_KEYS:
            if key in data:
                return data[key]
        for value in data.values():
            if isinstance(value, dict):
                for key in _TOTAL_KEYS:
                    if key in value:
                        return value[key]
    return None


def brief(result: ToolResult | None, width: int = 160) -> str:
    if result is None:
        return "-"
    head = f"error {result.error_class}: " if result.is_error else "ok: "
    text = (result.text or "").replace("\n", " ")
    return head + (text[:width] + ("..." if len(text) > width else ""))


# --- one check instance -------------------------------------------------------------------------------------
class EngineCrash(Exception):
    pass


@dataclass
class Run:
    """One check instance's calls in one fresh session."""

    engine: Any
    seed: int
    session: SessionLog = field(init=False)
    calls: list[tuple[ToolSpec, dict[str, Any], ToolResult]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.session = SessionLog(seed=self.seed)

    def call(self, tool: ToolSpec, args: dict[str, Any]) -> ToolResult:
        try:
            result = self.engine.respond_sync(tool, copy.deepcopy(args), self.session)
        except Exception as exc:  # noqa: BLE001 - an engine never raises for a call: a finding, not a crash
            raise EngineCrash(f"{tool.id}: {type(exc).__name__}: {exc}") from exc
        self.session.record(tool.id, args, result)
        self.calls.append((tool, args, result))
        return result


@dataclass
class Verdict:
    """One instance: applicable or why not, held or why not, sub-results, the calls it made."""

    check: str
    tool: str
    applicable: bool
    holds: bool = False
    reason: str = ""
    subs: dict[str, bool] = field(default_factory=dict)
    calls: list[tuple[ToolSpec, dict[str, Any], ToolResult]] = field(default_factory=list)
    example: str = ""
    origin: str = ""
    """where the tested tool's (first) answer came from"""


def na(check: str, tool: ToolSpec, reason: str) -> Verdict:
    return Verdict(check, tool.id, False, reason=reason)


def why(result: ToolResult, after: ToolResult | None = None, verb: str = "") -> str:
    """A failure's short class: the answer's verdict and where it came from (and the write's, `after`)."""
    origin = answer_origin(result) or "?"
    if after is not None:
        origin = f"{verb} {answer_origin(after) or '?'}, read {origin}"
    return f"error {result.error_class} ({origin})" if result.is_error else f"ok answer ({origin})"


# --- a server ---------------------------------------------------------------------------------------------
@dataclass
class ToolInfo:
    tool: ToolSpec
    op: str
    entity: EntityType
    noun: str

    @property
    def group(self) -> tuple[str, str]:
        return self.entity.name, self.noun


def common_prefix(tools: list[ToolSpec]) -> str | None:
    """The first name word most of a server's tools share and that is no verb (`sb_` of `sb_search`)."""
    firsts = Counter(t[0] for t in (name_tokens(x.name) for x in tools) if len(t) > 1)
    if not firsts:
        return None
    word, count = firsts.most_common(1)[0]
    return word if count >= 0.6 * len(tools) and len(tools) > 1 and verb_kind(word) is None else None


def name_noun(tool: ToolSpec, prefix: str | None, fallback: str) -> str:
    """The head noun of a tool's name: the server's prefix and the first verb dropped, cut at the first
    preposition (`get_cards_by_list_id` -> card, `add_card_to_list` -> card), stop words dropped, the last
    word left (`list_testcase_comments` -> comment); else `fallback` (the entity)."""
    words = [singular_word(t) for t in name_tokens(tool.name)]
    if prefix and words and words[0] == prefix:
        words = words[1:]
    verb = next((i for i, w in enumerate(words) if verb_kind(w) is not None), None)
    if verb is not None and len(words) > 1:  # `sb_book` keeps its only word
        words = words[:verb] + words[verb + 1:]
    cut = next((i for i, w in enumerate(words) if w in _PREPOSITIONS and i > 0), len(words))
    kept = [w for w in words[:cut] if w not in _STOP and not w.isdigit()]
    return kept[-1] if kept else fallback


@dataclass
class ServerReport:
    server: str
    card: str
    tools: int
    tested: int
    verdicts: list[Verdict] = field(default_factory=list)
    origins: Counter[str] = field(default_factory=Counter)
    crashes: list[str] = field(default_factory=list)


class ServerChecks:
    """Every check over one server's tools, on the seed's world."""

    def __init__(self, engine: Any, seed: int, server: str, tools: list[ToolSpec], tested: list[ToolSpec]) -> None:
        self.engine, self.seed, self.server = engine, seed, server
        world = engine.world(seed)
        self.world: ServerWorld | None = world.server(server)
        self.now = datetime.fromisoformat(world.now)
        prefix = common_prefix(tools)
        cards = Counter(engine.index.card_for(t).name for t in tools)
        self.card = cards.most_common(1)[0][0] if cards else "generic"
        self.all = [self._info(t, prefix) for t in tools]
        self.tested = [self._info(t, prefix) for t in tested]
        self.groups: dict[tuple[str, str], dict[str, list[ToolInfo]]] = {}
        for info in self.all:
            self.groups.setdefault(info.group, {}).setdefault(info.op, []).append(info)

    def fill(self, tool: ToolSpec, given: dict[str, Any] | None = None, skip: Iterable[str] = ()) -> dict[str, Any] | None:
        """`fill` on this server's world, references read under the tool's card as the engine reads them."""
        return fill(tool, self.world, self.now, given, skip, card=self.engine.card_of(tool))

    def _info(self, tool: ToolSpec, prefix: str | None) -> ToolInfo:
        card = self.engine.card_of(tool)  # the card the tool's rules read: its server's, with the kinds it names
        entity = entity_for(tool, card)
        return ToolInfo(tool, self._op(tool), entity, name_noun(tool, prefix, entity.name))

    def _op(self, tool: ToolSpec) -> str:
        """The operation its name says, except a create the engine runs as a change to, or an act on, existing
        records (`add_labels(card_id, label_ids)`, `add_recipe_to_list(recipe_id)`: it places, it makes nothing;
        `send_invoice(invoice_id)`: it sends one, `action`, whose unknown id is refused as a change's is), and a
        delete the engine runs as an act on the record it names (`delete_card_public_link`: the card stays)."""
        op = operation_kind(tool)
        rule = self.engine.rule_for(tool)[0] if op in ("create", "delete") else None
        return rule.op if rule is not None and rule.op in ("update", "action") else op

    def partner(self, info: ToolInfo, op: str, need_id: bool = False) -> ToolInfo | None:
        """The group's `op` tool: the one sharing most name words with `info`'s (`create_testcase_comment`
        reads back through `list_testcase_comments`, not `list_work_item_comments`), then fewest required
        arguments, then by name."""
        words = set(map(singular_word, name_tokens(info.tool.name)))
        found = [p for p in self.groups.get(info.group, {}).get(op, [])
                 if not need_id or own_id_arg(p.tool, p.entity, p.noun) is not None]
        return min(found, key=lambda p: (-len(words & set(map(singular_word, name_tokens(p.tool.name)))),
                                         len(required_of(p.tool)), p.tool.name)) if found else None

    def run(self) -> ServerReport:
        report = ServerReport(self.server, self.card, len(self.all), len(self.tested))
        if self.world is None:
            return report
        plan = []
        for info in self.tested:
            if info.op in ("get", "update", "delete", "action"):
                plan.append((self.unknown_id, info))
            if info.op == "create":
                plan.append((self.create_reads_back, info))
            if info.op == "update":
                plan.append((self.update_visible, info))
            if info.op == "delete":
                plan.append((self.delete_gone, info))
            if info.op == "search" or (info.op == "list" and arg_matching(info.tool, _QUERY_ARG)):
                plan.append((self.nonsense_search, info))
            if info.op == "list":
                plan.append((self.paging, info))
        for check, info in plan:
            run = Run(self.engine, self.seed)
            try:
                verdict = check(info, run)
            except EngineCrash as exc:
                verdict = Verdict(check.__name__, info.tool.id, True, False, reason="engine raised", example=str(exc))
                report.crashes.append(str(exc))
            verdict.calls = run.calls
            verdict.origin = next((answer_origin(r) or "none" for t, _, r in run.calls if t.id == info.tool.id), "")
            report.verdicts.append(verdict)
            for _, _, result in run.calls:
                report.origins[answer_origin(result) or "none"] += 1
            if run.calls:
                report.verdicts.append(self.determinism(verdict))
        return report

    def records(self, info: ToolInfo) -> dict[str, Any] | None:
        assert self.world is not None
        return collection(self.world, info.entity.name)

    # 1
    def unknown_id(self, info: ToolInfo, run: Run) -> Verdict:
        check, tool = "unknown_id", info.tool
        assert self.world is not None
        if info.entity.open_world:
            return na(check, tool, "an open-world entity (any key names a record)")
        arg = any_id_arg(tool, info.entity, info.noun)
        if arg is None:
            return na(check, tool, "no id argument found")
        bad = nonsense_id(tool, arg, self.world)
        if bad is None:
            return na(check, tool, "the id schema takes no nonsense value we make")
        args = self.fill(tool, {arg: bad})
        if args is None:
            return na(check, tool, "arguments could not be filled validly")
        result = run.call(tool, args)
        if result.error_class == "invalid_args":
            return na(check, tool, "the engine refused the arguments (invalid_args)")
        holds = result.is_error and result.error_class == "not_found"
        return Verdict(check, tool.id, True, holds, "" if holds else why(result),
                       example=f"{tool.id}({json.dumps(args, default=str)[:120]}) -> {brief(result)}")

    # 2
    def create_reads_back(self, info: ToolInfo, run: Run) -> Verdict:
        check, tool = "create_reads_back", info.tool
        assert self.world is not None
        if not names_its_kind(tool, self.engine.card_of(tool)):  # the card's first kind by default: no partner
            return na(check, tool, "the tool names no kind the world holds (`create_change_request` on a devops card)")
        get, lister = self.partner(info, "get", need_id=True), self.partner(info, "list")
        if get is None and lister is None:
            return na(check, tool, "no get or list tool of the same kind")
        marker_arg = next((n for n in _FREE_TEXT if n in props_of(tool) and fits(tool, n, MARK)), None)
        args = self.fill(tool, {marker_arg: MARK} if marker_arg else None)
        if args is None:
            return na(check, tool, "arguments could not be filled validly")
        before = self.walk(lister, run) if lister is not None and not marker_arg else None
        made = run.call(tool, args)
        if made.error_class == "invalid_args":
            return na(check, tool, "the engine refused the arguments (invalid_args)")
        if made.is_error:
            return Verdict(check, tool.id, True, False, f"create refused: {why(made)}",
                           example=f"{tool.id}({json.dumps(args, default=str)[:120]}) -> {brief(made)}")
        names = [f"{info.entity.name}_id", f"{camel(info.entity.name)}Id", f"{info.noun}_id", f"{camel(info.noun)}Id",
                 info.entity.key_field, "id", "key", "_id", "uuid"]
        key = find_key(content(made), names, given=frozenset(str(v) for v in args.values() if isinstance(v, str | int)))
        subs: dict[str, bool] = {}
        notes = []
        unpaged = False
        if get is not None and key is not None:
            arg = own_id_arg(get.tool, get.entity, get.noun)
            value = fitted(get.tool, arg, key) if arg else None
            get_args = self.fill(get.tool, {arg: value}) if value is not None else None
            if get_args is not None:
                got = run.call(get.tool, get_args)
                wanted = MARK if marker_arg else str(key)
                subs["by_get"] = not got.is_error and wanted in (got.text or "")
                if not subs["by_get"]:
                    notes.append(f"get {get.tool.name}({arg}={value!r}) -> {brief(got, 100)}")
        if lister is not None and (marker_arg or before):
            pages = self.walk(lister, run)
            if pages:
                if marker_arg:
                    seen = any(MARK in (p.text or "") for p in pages)
                else:
                    held = {i for p in before or [] for i in identities(p)}
                    seen = any(i not in held for p in pages for i in identities(p))
                subs["in_list"] = seen
                if not seen and paging_arg(lister.tool)[1] is None:
                    unpaged = True
                if not seen:
                    notes.append(f"list {lister.tool.name}: {len(pages)} page(s), "
                                 f"{'no marker' if marker_arg else 'no new item'}: {brief(pages[0], 100)}")
        if not subs:
            return na(check, tool, "the create's answer exposes no key, and no list could be read or compared")
        holds = all(subs.values())
        return Verdict(check, tool.id, True, holds, "" if holds else "not read back: " + ", ".join(
            s for s, ok in subs.items() if not ok) + f" (create {answer_origin(made)}"
            + ("; the list has no paging argument)" if unpaged else ")"), subs,
            example=f"{tool.id} -> {brief(made, 100)}; " + "; ".join(notes))

    def walk(self, lister: ToolInfo, run: Run) -> list[ToolResult] | None:
        """A list tool's pages (its size at its maximum, at most MAX_PAGES); None when it cannot be called."""
        assert self.world is not None
        tool = lister.tool
        size = arg_matching(tool, _SIZE)
        given: dict[str, Any] = {}
        if size:
            value = size_value(tool, size, 100)
            if value is not None:
                given[size] = value
        style, page_arg, start = paging_arg(tool)
        args = self.fill(tool, given, skip=[page_arg] if page_arg else ())
        if args is None:
            return None
        pages: list[ToolResult] = []
        position: Any = start
        for _ in range(MAX_PAGES):
            call = dict(args)
            if page_arg and position is not None:
                value = position if style == "cursor" else as_arg(tool, page_arg, position)
                if value is None:
                    break
                call[page_arg] = value
            if validation_error(tool.input_schema, call) is not None:
                break
            result = run.call(tool, call)
            if result.is_error or (pages and result.text == pages[-1].text):
                break
            pages.append(result)
            count = len(items_of(result) or [])
            if not page_arg or not count:
                break
            if style == "number":
                position = position + 1
            elif style == "offset":
                position = position + count
            else:
                position = cursor_of(result)
                if position is None:
                    break
        return pages

    # 3
    def update_visible(self, info: ToolInfo, run: Run) -> Verdict:
        check, tool = "update_visible", info.tool
        target = self.target(info, check)
        if isinstance(target, Verdict):
            return target
        arg, get, get_arg, (key, record) = target
        change = self.new_value(info, arg, record)
        if change is None:
            return na(check, tool, "no argument names a field of the record")
        fname, new = change
        outcome = self.write_then_get(check, tool, {arg: fitted(tool, arg, key), fname: new}, get, get_arg, key,
                                      "update", f"{arg}={key!r}, {fname}={new!r}", run)
        if isinstance(outcome, Verdict):
            return outcome
        done, got, example = outcome
        if got.is_error:
            return Verdict(check, tool.id, True, False, f"get after update: {why(got, done, 'update')}",
                           example=example)
        holds = shows_field(content(got), fname, new) or (isinstance(new, str) and new == NEW_TEXT and
                                                          NEW_TEXT in (got.text or ""))
        return Verdict(check, tool.id, True, holds, "" if holds else f"new value not shown: {why(got, done, 'update')}",
                       example=example)

    def target(self, info: ToolInfo, check: str, nth: int = 0) -> tuple[str, ToolInfo, str, tuple[str, Any]] | Verdict:
        """What an update or delete check acts on: the tool's own id argument, its get partner and that tool's
        id argument, and a world record whose key fits both (the `nth` that does, else the first); or why not."""
        tool = info.tool
        arg = own_id_arg(tool, info.entity, info.noun)
        get = self.partner(info, "get", need_id=True)
        if arg is None:
            return na(check, tool, "no own id argument")
        if get is None:
            return na(check, tool, "no get tool of the same kind")
        records = self.records(info)
        if not records:
            return na(check, tool, "the world holds no record of the kind")
        get_arg = own_id_arg(get.tool, get.entity, get.noun)
        assert get_arg is not None
        uses = [(tool, arg), (get.tool, get_arg)]
        picked = (self.fitting_key(records, uses, nth=nth) if nth else None) or self.fitting_key(records, uses)
        if picked is None:
            return na(check, tool, "no world key fits the id arguments' schemas")
        return arg, get, get_arg, picked

    def write_then_get(self, check: str, tool: ToolSpec, given: dict[str, Any], get: ToolInfo, get_arg: str, key: str,
                       verb: str, shown: str, run: Run) -> tuple[ToolResult, ToolResult, str] | Verdict:
        """The write, then the get of its record: (the write's answer, the get's, an example line); or the
        verdict when the check cannot apply or the write was refused."""
        assert self.world is not None
        args = self.fill(tool, given)
        get_args = self.fill(get.tool, {get_arg: fitted(get.tool, get_arg, key)})
        if args is None or get_args is None:
            return na(check, tool, "arguments could not be filled validly")
        done = run.call(tool, args)
        if done.error_class == "invalid_args":
            return na(check, tool, "the engine refused the arguments (invalid_args)")
        example = f"{tool.id}({shown}) -> {brief(done, 100)}"
        if done.is_error:
            return Verdict(check, tool.id, True, False, f"{verb} refused: {why(done)}", example=example)
        got = run.call(get.tool, get_args)
        return done, got, example + f"; {get.tool.name} -> {brief(got, 100)}"

    def fitting_key(self, records: dict[str, Any], uses: list[tuple[ToolSpec, str]],
                    nth: int = 0) -> tuple[str, Any] | None:
        found = 0
        for key, record in list(records.items())[:200]:
            if all(fitted(t, a, key) is not None for t, a in uses):
                if found == nth:
                    return key, record
                found += 1
        return None

    def new_value(self, info: ToolInfo, id_arg: str, record: Any) -> tuple[str, Any] | None:
        tool = info.tool
        fields = set(record) if isinstance(record, dict) else set()
        skip = {id_arg, *_TOKEN_ARGS}
        names = [n for n in props_of(tool) if n not in skip and not _PAGE_NUMBER.match(n) and not _SIZE.match(n)
                 and not _ID_ARG.match(n)]
        ranked = [n for n in names if n in fields] + [n for n in names if n not in fields and n in info.entity.fields]
        for name in ranked:
            schema = props_of(tool)[name]
            current = record.get(name) if isinstance(record, dict) else None
            candidates: list[Any] = []
            if isinstance(schema.get("enum"), list):
                candidates = [v for v in schema["enum"] if v != current and v is not None]
            elif isinstance(current, bool):
                continue
            elif isinstance(current, int | float):
                candidates = [current + 7]
            else:
                candidates = [NEW_TEXT]
            for value in candidates:
                if fits(tool, name, value):
                    return name, value
        return None

    # 4
    def delete_gone(self, info: ToolInfo, run: Run) -> Verdict:
        check, tool = "delete_gone", info.tool
        rule, origin = self.engine.rule_for(tool)
        if origin == "family" and rule is not None and rule.has:
            return na(check, tool, "a status transition (its family rule keeps the record, with its new status)")
        target = self.target(info, check, nth=1)  # not the first record: the update check may have changed it
        if isinstance(target, Verdict):
            return target
        arg, get, get_arg, (key, _) = target
        outcome = self.write_then_get(check, tool, {arg: fitted(tool, arg, key)}, get, get_arg, key, "delete",
                                      f"{arg}={key!r}", run)
        if isinstance(outcome, Verdict):
            return outcome
        done, got, example = outcome
        subs = {"get_not_found": got.is_error and got.error_class == "not_found"}
        lister = self.partner(info, "list")
        if lister is not None:
            pages = self.walk(lister, run)
            if pages:
                subs["not_in_list"] = not any(str(key) in identities(p) for p in pages)
        holds = all(subs.values())
        reason = "" if holds else ("get after delete: " + why(got, done, "delete") if not subs["get_not_found"]
                                   else f"still listed (delete {answer_origin(done)})")
        return Verdict(check, tool.id, True, holds, reason, subs, example=example)

    # 5
    def nonsense_search(self, info: ToolInfo, run: Run) -> Verdict:
        check, tool = "nonsense_search", info.tool
        assert self.world is not None
        if info.entity.open_world:
            return na(check, tool, "an open-world entity (web pages, search results: made up by design)")
        arg = arg_matching(tool, _QUERY_ARG)
        if arg is None:
            return na(check, tool, "no query argument")
        if not fits(tool, arg, NONSENSE_QUERY):
            return na(check, tool, "the query schema refuses the nonsense query")
        args = self.fill(tool, {arg: NONSENSE_QUERY})
        if args is None:
            return na(check, tool, "arguments could not be filled validly")
        result = run.call(tool, args)
        if result.error_class == "invalid_args":
            return na(check, tool, "the engine refused the arguments (invalid_args)")
        if result.is_error:
            holds = result.error_class == "not_found"
            reason = "" if holds else why(result)
        else:
            found = found_items(result)
            holds = found is None
            reason = "" if holds else f"{found} found ({answer_origin(result)})"
        return Verdict(check, tool.id, True, holds, reason, example=f"{tool.id}({arg}={NONSENSE_QUERY!r}) -> "
                       f"{brief(result)}")

    # 6
    def paging(self, info: ToolInfo, run: Run) -> Verdict:
        check, tool = "paging", info.tool
        assert self.world is not None
        style, page_arg, start = paging_arg(tool)
        if page_arg is None:
            return na(check, tool, "no paging argument")
        if style == "cursor" and page_arg in required_of(tool):
            return na(check, tool, "a required cursor")
        size = arg_matching(tool, _SIZE)
        given: dict[str, Any] = {}
        if size is not None and size != page_arg:
            value = size_value(tool, size, TEST_PAGE_SIZE)
            if value is not None:
                given[size] = value
        if style != "cursor":
            value = as_arg(tool, page_arg, start)
            if value is None:
                return na(check, tool, "page 1 does not fit the paging argument's schema")
            given[page_arg] = value
        args = self.fill(tool, given, skip=[page_arg])
        if args is None:
            return na(check, tool, "arguments could not be filled validly")
        first = run.call(tool, args)
        if first.is_error:
            return na(check, tool, f"page 1 answered an error ({first.error_class})")
        again = run.call(tool, args)
        subs = {"repeat_same": (again.text, again.is_error) == (first.text, first.is_error)}
        items = identities(first)
        second_args = dict(args)
        if style == "number":
            second_args[page_arg] = as_arg(tool, page_arg, start + 1)
        elif style == "offset":
            step = int(given[size]) if size in given else len(items)
            second_args[page_arg] = as_arg(tool, page_arg, start + step)
        else:
            cursor = cursor_of(first)
            second_args = {**args, page_arg: cursor} if cursor is not None else {}
        example = f"{tool.id}({json.dumps(args, default=str)[:100]}) -> {brief(first, 100)}"
        if second_args and validation_error(tool.input_schema, second_args) is None:
            second = run.call(tool, second_args)
            example += f"; {page_arg}={second_args[page_arg]!r} -> {brief(second, 100)}"
            if not second.is_error and items:
                subs["no_overlap"] = not set(items) & set(identities(second))
            totals = total_of(first), total_of(second)
            if totals[0] is not None and totals[1] is not None:
                subs["total_stable"] = totals[0] == totals[1]
        holds = all(subs.values())
        return Verdict(check, tool.id, True, holds, "" if holds else ", ".join(
            f"{s} fails" for s, ok in subs.items() if not ok) + f" ({answer_origin(first)})", subs, example=example)

    # 7
    def determinism(self, verdict: Verdict) -> Verdict:
        """The instance's calls again, in a fresh session: the same answers."""
        run = Run(self.engine, self.seed)
        first = verdict.calls
        try:
            for tool, args, _ in first:
                run.call(tool, args)
        except EngineCrash as exc:
            return Verdict("determinism", verdict.tool, True, False, "engine raised on replay", example=str(exc))
        diff = next((i for i, (a, b) in enumerate(zip(first, run.calls, strict=True))
                     if (a[2].text, a[2].is_error) != (b[2].text, b[2].is_error)), None)
        if diff is None:
            return Verdict("determinism", verdict.tool, True, True, origin=verdict.origin)
        tool = first[diff][0]
        return Verdict("determinism", verdict.tool, True, False, f"answer {diff + 1} differs ({verdict.check})",
                       example=f"{tool.id}: {brief(first[diff][2], 80)} vs {brief(run.calls[diff][2], 80)}",
                       origin=verdict.origin)


def as_arg(tool: ToolSpec, name: str, number: int) -> Any:
    """A page number or offset as the argument takes it (an integer, else its text); None when neither fits."""
    return next((c for c in (number, str(number)) if fits(tool, name, c)), None)


def paging_arg(tool: ToolSpec) -> tuple[str, str | None, Any]:
    """(style, the paging argument, page 1's value): number (the schema's default or minimum, else 1),
    offset (0), cursor (none given)."""
    for style, pattern in (("number", _PAGE_NUMBER), ("offset", _OFFSET), ("cursor", _CURSOR)):
        name = arg_matching(tool, pattern)
        if name is None:
            continue
        if style == "cursor":
            return style, name, None
        if not fits(tool, name, 0) and not fits(tool, name, 1):  # `from` / `start` as a date: no page number
            continue
        schema = props_of(tool)[name]
        if style == "offset":
            return style, name, 0
        default, low = schema.get("default"), schema.get("minimum")
        start = default if isinstance(default, int) and default in (0, 1) else low if low in (0, 1) else 1
        return style, name, start
    return "none", None, None


# --- tallies ------------------------------------------------------------------------------------------------
@dataclass
class Tally:
    holds: Counter[str] = field(default_factory=Counter)
    applicable: Counter[str] = field(default_factory=Counter)
    not_applicable: dict[str, Counter[str]] = field(default_factory=dict)
    failures: dict[str, Counter[str]] = field(default_factory=dict)
    subs: dict[str, Counter[str]] = field(default_factory=dict)
    by_origin: dict[str, Counter[str]] = field(default_factory=dict)
    """check -> `<origin>` and `<origin>:holds` counts, by the tested tool's answer origin"""
    origins: Counter[str] = field(default_factory=Counter)
    servers: int = 0
    tools: int = 0
    tested: int = 0

    def add(self, report: ServerReport) -> None:
        self.servers += 1
        self.tools += report.tools
        self.tested += report.tested
        self.origins.update(report.origins)
        for v in report.verdicts:
            if not v.applicable:
                self.not_applicable.setdefault(v.check, Counter())[v.reason] += 1
                continue
            self.applicable[v.check] += 1
            self.holds[v.check] += v.holds
            split = self.by_origin.setdefault(v.check, Counter())
            split[v.origin or "none"] += 1
            split[f"{v.origin or 'none'}:holds"] += v.holds
            if not v.holds:
                self.failures.setdefault(v.check, Counter())[v.reason] += 1
            for sub, ok in v.subs.items():
                counts = self.subs.setdefault(f"{v.check}.{sub}", Counter())
                counts["applicable"] += 1
                counts["holds"] += ok

    def share(self, check: str) -> float | None:
        return self.holds[check] / self.applicable[check] if self.applicable[check] else None

    def figures(self) -> dict[str, Any]:
        total = sum(self.origins.values())
        return {
            "servers": self.servers, "tools": self.tools, "tools_tested": self.tested,
            "checks": {c: {"holds": self.holds[c], "applicable": self.applicable[c], "share": self.share(c),
                           "not_applicable": sum(self.not_applicable.get(c, Counter()).values()),
                           "not_applicable_reasons": dict(self.not_applicable.get(c, Counter()).most_common()),
                           "failure_reasons": dict(self.failures.get(c, Counter()).most_common())} for c in CHECKS},
            "by_origin": {c: {o: {"holds": split[f"{o}:holds"], "applicable": split[o]}
                              for o in split if ":" not in o} for c, split in self.by_origin.items()},
            "subs": {k: {"holds": v["holds"], "applicable": v["applicable"],
                         "share": v["holds"] / v["applicable"] if v["applicable"] else None}
                     for k, v in sorted(self.subs.items())},
            "origins": {o: {"answers": self.origins[o], "share": self.origins[o] / total if total else None}
                        for o in (*ORIGINS, "none") if self.origins[o]},
            "answers": total,
        }


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def table(tally: Tally, indent: str = "") -> list[str]:
    lines = [f"{indent}{'check':<28} {'holds':>7} / {'appl.':<6} {'share':>7} {'n/a':>6}  most common failure"]
    for check in CHECKS:
        fails = tally.failures.get(check, Counter()).most_common(1)
        top = f"{fails[0][0]} ({fails[0][1]})" if fails else ""
        na_count = sum(tally.not_applicable.get(check, Counter()).values())
        lines.append(f"{indent}{LABELS[check]:<28} {tally.holds[check]:>7} / {tally.applicable[check]:<6} "
                     f"{pct(tally.share(check)):>7} {na_count:>6}  {top}")
        for sub in SUBS.get(check, ()):
            counts = tally.subs.get(f"{check}.{sub}", Counter())
            share = counts["holds"] / counts["applicable"] if counts["applicable"] else None
            lines.append(f"{indent}{'  · ' + sub:<28} {counts['holds']:>7} / {counts['applicable']:<6} "
                         f"{pct(share):>7}")
    lines.append(f"{indent}rule origins of the answers: {origin_shares(tally.origins) or '-'}")
    parts = []
    for check in CHECKS[:-1]:
        split = tally.by_origin.get(check, Counter())
        shown = [f"{o} {split[o + ':holds']}/{split[o]}" for o in (*ORIGINS, "none") if split[o]]
        if shown:
            parts.append(f"{check} " + ", ".join(shown))
    if parts:
        lines.append(f"{indent}holds by the tested tool's answer origin: " + "; ".join(parts))
    return lines


def card_table(cards: dict[str, Tally]) -> list[str]:
    """One row per card: servers, tools, holds/applicable per check, the answers' rule origins."""
    heads = [f"{i + 1}.{c.split('_')[0][:7]}" for i, c in enumerate(CHECKS)]
    lines = [f"{'card':<24} {'srv':>4} {'tools':>5} " + " ".join(f"{h:>11}" for h in heads) + "  origins"]
    for card, tally in sorted(cards.items(), key=lambda kv: (-kv[1].servers, kv[0])):
        cells = [f"{tally.holds[c]}/{tally.applicable[c]}" if tally.applicable[c] else "-" for c in CHECKS]
        total = sum(tally.origins.values())
        origins = " ".join(f"{o[:3]} {100 * n / total:.0f}%" for o, n in tally.origins.most_common()) if total else "-"
        lines.append(f"{card[:24]:<24} {tally.servers:>4} {tally.tested:>5} " + " ".join(f"{x:>11}" for x in cells)
                     + f"  {origins}")
    return lines


# --- running ------------------------------------------------------------------------------------------------
def sample(tools: list[ToolSpec], cap: int | None) -> list[ToolSpec]:
    """At most `cap` tools, spread over operation kinds (round robin in name order); all when no cap."""
    if cap is None or len(tools) <= cap:
        return list(tools)
    by_op: dict[str, list[ToolSpec]] = {}
    for tool in sorted(tools, key=lambda t: t.name):
        by_op.setdefault(operation_kind(tool), []).append(tool)
    out: list[ToolSpec] = []
    while len(out) < cap:
        for op in sorted(by_op):
            if by_op[op] and len(out) < cap:
                out.append(by_op[op].pop(0))
    return out


@dataclass
class Outcome:
    overall: Tally
    cards: dict[str, Tally]
    reports: list[ServerReport]
    sampled: int
    seconds: float
    tool_rules: Counter[str] = field(default_factory=Counter)
    """every tool of the tested servers by the rule it runs: `family, checks`, `inferred, checks the world` (a
    token, a find, a refusal by the world's state), `inferred, checks its arguments only` (`rules/arguments.py`),
    `inferred, reads/writes` (a list or an effect on the world, no check), `simulated, guarded` (the schema
    engine answers once the guard's checks pass: ids that must exist, arguments that must mean something) and
    `simulated` (`tool_rules`)"""

    def as_dict(self, examples: int = 3) -> dict[str, Any]:
        found: dict[str, dict[str, list[dict[str, str]]]] = {}
        for report in self.reports:
            for v in report.verdicts:
                if v.applicable and not v.holds:
                    kept = found.setdefault(v.check, {}).setdefault(v.reason, [])
                    if len(kept) < examples:
                        kept.append({"tool": v.tool, "calls": v.example})
        return {"overall": self.overall.figures(), "tool_rules": dict(self.tool_rules),
                "cards": {c: t.figures() for c, t in sorted(self.cards.items())},
                "servers": {r.server: {"card": r.card, "tools": r.tools, "tested": r.tested,
                                       "held": dict(Counter(v.check for v in r.verdicts if v.applicable and v.holds)),
                                       "applicable": dict(Counter(v.check for v in r.verdicts if v.applicable)),
                                       "crashes": r.crashes[:5]} for r in self.reports},
                "failure_examples": found, "servers_sampled": self.sampled, "seconds": self.seconds}


def harvested_setup(workspace: Path | None = None) -> tuple[Any, Any, list[ToolSpec]]:
    """(environment, the workspace (a new scratch folder when none is given), the harvested pool's tools)."""
    from cworld.environment import Environment, Workspace
    from cworld.registry.tools import environment_tools

    env = Environment.resolve()
    ws = Workspace(workspace or Path(tempfile.mkdtemp(prefix="cworld-invariants-")))
    return env, ws, environment_tools(env, ws).harvested


def measure(seed: int = 0, servers: list[str] | None = None, limit: int | None = None,
            tools_per_server: int | None = None, workspace: Path | None = None, progress: bool = False) -> Outcome:
    """Every check over the chosen harvested servers; the worlds go to `workspace`, else to a scratch folder
    removed afterwards."""
    if workspace is None:
        with tempfile.TemporaryDirectory(prefix="cworld-invariants-") as scratch:
            return measure(seed, servers, limit, tools_per_server, Path(scratch), progress)
    from cworld.controller.factory import world_engine
    from cworld.engine.cards.card import load_cards

    started = time.perf_counter()
    env, ws, pool = harvested_setup(workspace)
    by_server: dict[str, list[ToolSpec]] = {}
    for tool in pool:
        by_server.setdefault(tool.server, []).append(tool)
    names = sorted(by_server)
    if servers:
        missing = [s for s in servers if s not in by_server]
        if missing:
            raise SystemExit(f"not harvested servers: {', '.join(missing)}")
        names = [s for s in names if s in servers]
    if limit is not None:
        names = names[:limit]
    tools = [t for s in names for t in by_server[s]]
    engine = world_engine(env, ws, tools, load_cards(env.category_cards), by_server=True)
    overall, cards, reports, sampled = Tally(), {}, [], 0
    for i, name in enumerate(names):
        chosen = sample(by_server[name], tools_per_server)
        sampled += len(chosen) < len(by_server[name])
        report = ServerChecks(engine, seed, name, by_server[name], chosen).run()
        reports.append(report)
        overall.add(report)
        cards.setdefault(report.card, Tally()).add(report)
        if progress and (i + 1) % 25 == 0:
            print(f"  {i + 1}/{len(names)} servers ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    return Outcome(overall, cards, reports, sampled, time.perf_counter() - started, tool_rules(engine, tools))


def tool_rules(engine: Any, tools: list[ToolSpec]) -> Counter[str]:
    """How many tools run each kind of rule (the engine's own `rule_for`, the seam `cworld world rules` shows).
    An inferred rule whose every check is one of what services refuse in any call's arguments
    (`rules/arguments.py`: a limit below one, a URL without a scheme, an empty required path) is counted apart
    from one that checks the world (a token, a record that must exist, its state, a cursor it gave); a rule that
    can refuse nothing (its steps only bind values: `Rule.refuses`) checks nothing, family or inferred.
    A tool whose `action`/`operation` argument picks the operation (`rules/dispatch.py`) is answered by the rule of
    the operation a call picks: it counts as most of its operations' rules do (a tie as the tool's own rule)."""
    counts: Counter[str] = Counter()
    for tool in tools:
        variants = operation_variants(tool)
        if variants is None:
            counts[rule_kind(engine, tool)] += 1
            continue
        arg, values = variants
        kinds = Counter(rule_kind(engine, tool, {arg: value}) for value in values)
        top = kinds.most_common()
        counts[top[0][0] if len(top) == 1 or top[0][1] > top[1][1] else rule_kind(engine, tool)] += 1
    return counts


def rule_kind(engine: Any, tool: ToolSpec, arguments: dict[str, Any] | None = None) -> str:
    """Which kind of rule answers a call of the tool (with `arguments`, the rule they pick)."""
    rule, origin = engine.rule_for(tool, arguments)
    if origin == "simulated":  # the schema engine answers, after the guard's checks where it has any
        return "simulated, guarded" if engine.guard_for(tool).refuses else "simulated"
    if rule is None or origin not in ("family", "inferred"):
        return origin
    if not rule.refuses:
        return f"{origin}, reads/writes"
    if origin == "family":
        return "family, checks"
    own = argument_only(engine, tool)  # the checks of meaning it would get anyway
    world = any(c not in own for c in rule.check if c.let is None)
    return "inferred, checks the world" if world else "inferred, checks its arguments only"


def argument_only(engine: Any, tool: ToolSpec) -> list[Any]:
    """The checks of meaning `rules/arguments.py` gives this tool (none reads the world)."""
    props: dict[str, Any] = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or [])
    entity = entity_for(tool, engine.card_of(tool))
    return [*argument_checks(props, required), *blank_checks(props, required), *value_checks(entity, props)]


def rules_line(counts: Counter[str]) -> str:
    total = sum(counts.values()) or 1
    return "tools by the rule they run: " + " · ".join(
        f"{name} {n:,} ({n / total:.0%})" for name, n in counts.most_common())


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--servers", nargs="+", help="harvested servers (default: every one)")
    parser.add_argument("--limit-servers", type=int, help="the first N servers (by name)")
    parser.add_argument("--tools-per-server", type=int,
                        help="test at most N tools per server, spread over operation kinds (default: all)")
    parser.add_argument("--per-card", action="store_true", help="a block of figures per category card")
    parser.add_argument("--examples", type=int, default=2, help="failure examples printed per check")
    parser.add_argument("--workspace", type=Path, help="where the worlds are built (default: a scratch folder)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    opts = parse(argv)
    outcome = measure(opts.seed, opts.servers, opts.limit_servers, opts.tools_per_server, opts.workspace,
                      progress=not opts.quiet)
    total = outcome.overall
    cap = (f"; at most {opts.tools_per_server} tools per server: {outcome.sampled} servers sampled"
           if opts.tools_per_server else "; every tool tested")
    print(f"world invariants, seed {opts.seed}: {total.servers} harvested servers, {total.tested}/{total.tools} tools"
          f"{cap}; {len(outcome.cards)} cards ({outcome.seconds:.0f} s)")
    print("holds / applicable per check instance; n/a = instances a check could not be applied to (reasons in "
          "--json); determinism covers every instance of checks 1-6 that made calls")
    for line in table(total):
        print(line)
    print(rules_line(outcome.tool_rules))
    if opts.per_card:
        print()
        for line in card_table(outcome.cards):
            print(line)
    data = outcome.as_dict(max(opts.examples, 3))
    if opts.examples:
        print("\nfailure examples:")
        for check in CHECKS:
            reasons = data["failure_examples"].get(check, {})
            ranked = [r for r, _ in total.failures.get(check, Counter()).most_common()]
            for reason in ranked[:opts.examples]:
                print(f"  [{check}] {reason}: {reasons[reason][0]['calls'][:300]}")
    crashes = [c for r in outcome.reports for c in r.crashes]
    if crashes:
        print(f"\nengine raised {len(crashes)} times, e.g. {crashes[0][:200]}")
    if opts.json:
        opts.json.write_text(json.dumps({"seed": opts.seed, "tools_per_server": opts.tools_per_server, **data},
                                        indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
