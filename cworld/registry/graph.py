"""The tool dependency graph: which tools must or usually run before which (ComplexMCP §4.1).

A networkx `DiGraph` over tool ids (`server/name`); an edge `a -> b` means "run `a` before `b`", with
attributes `kind` (`requires`: b fails without a; `produces`: a gives a value b takes), `via` (the
field that flows), `origin` (`declared` by a sandbox app, or `schema`: inferred) and `note`.

Schema edges link a tool whose output holds an identifier to a tool whose input takes it. Identifiers are
fields named like `<entity>_id` (also `_ids`, `_uid`, `_number`, `_code`, `_token`, `_name`), a bare `id`
or `name` whose entity is the list or object holding it (`messages[].id` -> `message_id`; `$ref` names count),
and a bare `token`. To keep false edges out:

- a tool that *takes* a key never counts as producing it (`get_message` echoes `message_id`; it does not
  create it);
- when some producers of a key name its entity (`list_messages` for `message_id`), only they count;
  otherwise, when some are read-only lookups, only those (a write that echoes `thread_id` is no source);
- a bare `name` parameter is never a consumer; a tool that creates consumes only ids, tokens and names
  of other things (`create_branch(branch_name)`, `add_traveller(passport_number)` take new values;
  `add_observations(entityName)` looks an entity up); `first_name` / `display_name` are never identifiers;
- a tool that deletes (`delete_`, `remove_`, ..., or `destructive_hint` with such a verb) produces nothing:
  the ids it returns name what is gone;
- producer and consumer must share a server, unless the key is specific: at least two entity words
  (`calendar_event_id`) and an `id`/`number`/`code` suffix, and neither end is a schema-only catalog (a
  catalog describes one real service, whose ids mean nothing to another: a portal's `cart_item_id` is not
  the shop's);
- a key that more than `MAX_ANONYMOUS_PRODUCERS` tools of one server return, none of them naming its
  entity, is a field of a shared response envelope (every list of a portal returning `record_id`,
  `fields[].name`), not the output of a lookup: it makes no edges;
- declared edges win: a schema edge is only added where an app declared none between the same pair.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx
from pydantic import BaseModel

from cworld.data_model.jsonl import write_text_atomic
from cworld.data_model.tools import ToolSpec
from cworld.registry.index.documents import split_identifier

GRAPH_FILE = "graph.json"
KEY_SUFFIXES = frozenset({"id", "uid", "number", "code", "token", "name"})
SPECIFIC_SUFFIXES = frozenset({"id", "number", "code"})
#: Container names that say nothing about the entity inside: `items[].id` takes its entity from elsewhere.
GENERIC_CONTAINERS = frozenset({"item", "result", "data", "entry", "record", "row", "match", "hit", "value", "page", "list", "output"})
_VERB_TEXT = """get read fetch show open view list search find lookup look update edit set change delete remove
cancel create add make new send reply forward move mark star dismiss apply request book select quote"""
VERBS = frozenset(_VERB_TEXT.split())
#: Verbs of tools that make a new thing: their `*_name` parameters name the new thing, they look nothing up.
CREATOR_VERBS = frozenset({"create", "add", "new", "make", "register", "insert"})
#: `first_name` and friends are attributes of a person, not names that identify something to look up.
NAME_ATTRIBUTES = frozenset({"first", "last", "full", "display", "middle", "given", "family", "nick", "user"})
IRREGULAR_PLURALS = {"people": "person", "children": "child", "men": "man", "women": "woman"}
#: Verbs of tools whose returned ids name what they removed: never the source of a value.
DELETE_VERBS = frozenset({"delete", "remove", "drop", "destroy", "purge", "erase"})
#: Beyond this many producers of a key on one server, none naming its entity, the key is an envelope field.
MAX_ANONYMOUS_PRODUCERS = 6
MAX_DEPTH = 2
MAX_PREREQS = 10


@dataclass(frozen=True)
class Link:
    before: str
    after: str
    kind: str
    via: str | None
    origin: str
    note: str = ""


class PrereqRef(BaseModel):
    """One prerequisite of a tool: which tool, how it relates, through what field, how far back."""

    tool_id: str
    kind: str
    via: str | None = None
    origin: str = "schema"
    depth: int = 1
    needed_by: str = ""


# --- identifier keys ------------------------------------------------------------------------------
def singular(word: str) -> str:
    if word in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def entity_of(text: str | None) -> list[str]:
    """`messages` -> [message]; `OrderSummary` -> [order, summary]; generic containers -> []."""
    if not text:
        return []
    words = [singular(w) for w in split_identifier(text)]
    return [] if not words or (len(words) == 1 and words[0] in GENERIC_CONTAINERS) else words


def field_key(name: str, context: list[str]) -> str | None:
    """The identifier key a field names, or None. `contactId` -> contact_id; `id` in `messages` -> message_id."""
    words = [singular(w) for w in split_identifier(name)]
    if not words:
        return None
    suffix = "id" if words[-1] in ("id", "uid") else words[-1]
    if suffix not in KEY_SUFFIXES:
        return None
    entity = words[:-1] or (context if suffix in ("id", "name") else [])
    if not entity and suffix != "token":
        return None
    return "_".join([*entity, suffix])


def key_entity(key: str) -> list[str]:
    return key.split("_")[:-1]


# --- walking schemas ---------------------------------------------------------------------------------
def _resolve(node: Any, root: dict[str, Any]) -> tuple[Any, str | None]:
    """Follow a local `$ref` (`#/$defs/Name`); also returns the referenced name, a hint of the entity."""
    if isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        target: Any = root
        for part in node["$ref"][2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return target, node["$ref"].rsplit("/", 1)[-1]
    return node, None


def _variants(node: Any) -> list[Any]:
    """A node and the alternatives of its `anyOf` / `oneOf` (Optional[Model] hides the model there)."""
    if not isinstance(node, dict):
        return []
    return [node, *node.get("anyOf", []), *node.get("oneOf", [])]


def output_fields(schema: dict[str, Any] | None) -> Iterator[tuple[str, list[str]]]:
    """Every (field name, entity context) of an output schema, nested objects and array items included."""
    if not schema:
        return
    seen: set[int] = set()

    def walk(node: Any, context: list[str], depth: int) -> Iterator[tuple[str, list[str]]]:
        for variant in _variants(node):
            variant, ref_name = _resolve(variant, schema)
            if not isinstance(variant, dict) or id(variant) in seen or depth > 6:
                continue
            seen.add(id(variant))
            here = context or entity_of(ref_name) or entity_of(variant.get("title"))
            for name, sub in (variant.get("properties") or {}).items():
                yield name, here
                yield from walk(sub, entity_of(name), depth + 1)
            if "items" in variant:
                yield from walk(variant["items"], context, depth + 1)
            seen.discard(id(variant))

    yield from walk(schema, [], 0)


def tool_entity(name: str) -> list[str]:
    """The noun a tool acts on: `get_contact` -> [contact], `list_messages` -> [message]."""
    words = [singular(w) for w in split_identifier(name) if w not in VERBS]
    return words


def produced_keys(tool: ToolSpec) -> set[str]:
    if _is_deleter(tool):
        return set()
    fallback = tool_entity(tool.name)
    keys = {field_key(name, ctx or fallback) for name, ctx in output_fields(tool.output_schema)}
    return {k for k in keys if k} - set(consumed_keys(tool))


def _is_deleter(tool: ToolSpec) -> bool:
    words = split_identifier(tool.name)
    return bool(DELETE_VERBS & set(words[:2]))


def _is_creator(tool: ToolSpec) -> bool:
    words = split_identifier(tool.name)
    return bool(words) and words[0] in CREATOR_VERBS


def input_fields(schema: dict[str, Any] | None, fallback: list[str]) -> Iterator[tuple[str, list[str]]]:
    """(parameter name, entity context) of every input parameter, inside objects and array items too
    (`observations[].entityName`); top-level parameters take the tool's own entity as context."""

    def walk(node: Any, context: list[str], depth: int) -> Iterator[tuple[str, list[str]]]:
        for variant in _variants(node):
            variant, _ = _resolve(variant, schema or {})
            if not isinstance(variant, dict) or depth > 3:
                continue
            for name, sub in (variant.get("properties") or {}).items():
                yield name, context
                yield from walk(sub, entity_of(name), depth + 1)
            if "items" in variant:
                yield from walk(variant["items"], context, depth + 1)

    yield from walk(schema, fallback, 0)


def _reference_in_creator(key: str, tool: ToolSpec) -> bool:
    """What a creating tool looks up: ids and tokens, and names of *other* things (`add_observations`
    takes an existing entity's name; `create_branch(branch_name)` names the branch it makes)."""
    if key.endswith(("_id", "token")):
        return True
    return key.endswith("_name") and not set(key_entity(key)) <= set(tool_entity(tool.name))


def consumed_keys(tool: ToolSpec) -> dict[str, str]:
    """key -> parameter name, for the input parameters that take an identifier."""
    out: dict[str, str] = {}
    creator = _is_creator(tool)
    for param, context in input_fields(tool.input_schema, tool_entity(tool.name)):
        key = field_key(param, context)
        if key is None or (creator and not _reference_in_creator(key, tool)):
            continue
        if key.endswith("_name") and (param in ("name", "names") or key_entity(key)[0] in NAME_ATTRIBUTES):
            continue
        out.setdefault(key, param)
    return out


# --- inference ----------------------------------------------------------------------------------------------
def _is_specific(key: str) -> bool:
    return len(key_entity(key)) >= 2 and key.rsplit("_", 1)[-1] in SPECIFIC_SUFFIXES


def _names_entity(tool: ToolSpec, key: str) -> bool:
    entity = key_entity(key)
    return bool(entity) and set(entity) <= set(tool_entity(tool.name))


def _preferred(producers: list[ToolSpec], key: str) -> list[ToolSpec]:
    """Producers that name the key's entity; else the read-only ones (lookups, not side effects); else all
    — unless, none naming it, more than `MAX_ANONYMOUS_PRODUCERS` return it: an envelope field, no source."""
    naming = [p for p in producers if _names_entity(p, key)]
    if naming:
        return naming
    pool = [p for p in producers if p.annotations.read_only_hint] or producers
    per_server = Counter(p.server for p in pool)
    return [p for p in pool if per_server[p.server] <= MAX_ANONYMOUS_PRODUCERS]


def infer_links(tools: Iterable[ToolSpec]) -> list[Link]:
    """Producer -> consumer edges from schemas, under the precision rules of the module docstring."""
    tools = list(tools)
    producers: dict[str, list[ToolSpec]] = defaultdict(list)
    for tool in tools:
        for key in produced_keys(tool):
            producers[key].append(tool)
    links = []
    for consumer in tools:
        for key, param in consumed_keys(consumer).items():
            candidates = [p for p in producers.get(key, []) if p.id != consumer.id]
            if not _is_specific(key) or consumer.server_kind == "catalog":
                candidates = [p for p in candidates if p.server == consumer.server]
            candidates = [p for p in candidates if p.server == consumer.server or p.server_kind != "catalog"]
            for producer in _preferred(candidates, key):
                links.append(Link(producer.id, consumer.id, "produces", param, "schema", f"gives {key}"))
    return links


# --- the graph ---------------------------------------------------------------------------------------------------
def _declared_links(declared: Iterable[Any]) -> list[Link]:
    return [Link(e.before, e.after, e.kind, e.via, "declared", getattr(e, "note", "")) for e in declared]


def build_graph(tools: Iterable[ToolSpec], declared: Iterable[Any] = ()) -> nx.DiGraph:
    """Nodes are the tools; edges the declared prerequisites (ends outside `tools` are skipped and listed in
    `graph.graph["skipped"]`) plus the inferred schema edges."""
    tools = list(tools)
    graph = nx.DiGraph(skipped=[])
    for tool in tools:
        graph.add_node(tool.id, server=tool.server, name=tool.name, read_only=bool(tool.annotations.read_only_hint))
    for link in _declared_links(declared):
        if link.before in graph and link.after in graph:
            graph.add_edge(link.before, link.after, kind=link.kind, via=link.via, origin=link.origin, note=link.note)
        else:
            graph.graph["skipped"].append(f"{link.before} -> {link.after}")
    for link in infer_links(tools):
        if not graph.has_edge(link.before, link.after):
            graph.add_edge(link.before, link.after, kind=link.kind, via=link.via, origin=link.origin, note=link.note)
    return graph


def declared_prerequisites() -> list[Any]:
    """Every sandbox app's declared edges, with both ends as tool ids."""
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.specs import app_prerequisites

    return [edge for app in all_apps() for edge in app_prerequisites(app)]


def save_graph(graph: nx.DiGraph, path: Path) -> None:
    data = nx.node_link_data(graph, edges="edges")
    write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False))


def load_graph(path: Path) -> nx.DiGraph:
    return nx.node_link_graph(json.loads(path.read_text(encoding="utf-8")), directed=True, edges="edges")


def _edge_order(graph: nx.DiGraph, before: str, after: str) -> tuple[int, int, int, str]:
    """requires before produces; among producers, read-only lookups, then declared edges, then by id."""
    data = graph.edges[before, after]
    lookup = bool(graph.nodes[before].get("read_only"))
    return (data.get("kind") != "requires", not lookup, data.get("origin") != "declared", before)


def _ordered_predecessors(graph: nx.DiGraph, after: str) -> list[str]:
    return sorted(graph.predecessors(after), key=lambda before: _edge_order(graph, before, after))


def _expands(graph: nx.DiGraph, before: str, after: str, vias_done: set[tuple[str, str]]) -> bool:
    """Whether to look further back from `before`. A `requires` edge: always. A `produces` edge offers one
    way among several to get a value, so only the preferred producer of each (consumer, via) is followed:
    `cancel_order` needs an `order_id` from `list_orders` *or* `checkout`, not checkout's own needs too."""
    data = graph.edges[before, after]
    if data.get("kind") == "requires":
        return True
    key = (after, str(data.get("via")))
    if key in vias_done:
        return False
    vias_done.add(key)
    return True


def prerequisites(graph: nx.DiGraph, tool_id: str, depth: int = MAX_DEPTH, limit: int = MAX_PREREQS) -> list[PrereqRef]:
    """Tools that must or can run before `tool_id`, nearest first: at each distance `requires` edges before
    `produces` edges (read-only lookups first, declared before inferred); at most `limit`, at most `depth`
    steps back, following only the preferred producer of each value further back."""
    if tool_id not in graph:
        return []
    found: list[PrereqRef] = []
    seen = {tool_id}
    frontier = [tool_id]
    vias_done: set[tuple[str, str]] = set()
    for level in range(1, depth + 1):
        next_frontier = []
        for after in frontier:
            for before in _ordered_predecessors(graph, after):
                if before in seen:
                    continue
                seen.add(before)
                data = graph.edges[before, after]
                found.append(PrereqRef(tool_id=before, kind=data.get("kind", "produces"), via=data.get("via"),
                                       origin=data.get("origin", "schema"), depth=level, needed_by=after))
                if _expands(graph, before, after, vias_done):
                    next_frontier.append(before)
        frontier = next_frontier
    return found[:limit]
