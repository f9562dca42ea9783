"""Build the world of a seed: every server's records, before any task and independent of every task.

A stateful sandbox app's world is its seeded state, the one a live episode of the seed starts from. Any
other server of the tool list (harvested, catalog, recorded real servers) gets a world generated from the
category card most of its tools get: one collection per entity kind the card declares, named by the
kind's plural (`contact` -> `contacts`, `person` -> `people`; the kind itself when no plural reads back
as it, `status`), with tens to hundreds of records of Faker values (`plausible.record_values`, through
`state.new_record`) whose `<kind>_id` fields name existing records. Stateless servers hold no world.
Every draw takes its own `derive_rng(seed, purpose)`, so a server's world depends on the seed, the
server and its card only: same seed, same world, whichever servers are built together.
Saved as `<workspace>/worlds/seed-N/SERVER.json` (docs/world-engine.md, "The world").
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from itertools import islice
from pathlib import Path
from typing import Any

import yaml

from cworld.data_model import ToolSpec
from cworld.engine.cards.assign import CardIndex
from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.engine.cards.operations import kind_named, reads_signed_in_user, singular_word
from cworld.engine.world.base import SECRET_FIELDS, ServerWorld, World
from cworld.engine.world.idformat import card_format
from cworld.engine.world.layout import SEP, at
from cworld.engine.world.named import named_kinds, with_named_kinds
from cworld.engine.world.names import NAME_FIELDS, fill_template, name_records
from cworld.engine.world.settings import held_settings
from cworld.engine.world.state import Collection, new_record
from cworld.environment import Workspace
from cworld.errors import UsageError
from cworld.sandbox.framework.app import SandboxApp
from cworld.sandbox.framework.session import SandboxSession, seeded_start
from cworld.schemas.plausible import session_clock
from cworld.seeding import derive_rng

#: Records per kind when no size is given: drawn per (seed, server, kind) by `default_size`.
DEFAULT_SIZE = (20, 200)
#: Records per kind drawn whole; the rest borrow their costly fields (`POOLED_TYPES`) from these.
POOL = 32
POOLED_TYPES = frozenset({"url", "path", "text"})
#: Repeats of held natural keys after which a kind is complete (its key values ran out).
MAX_REPEATS = 50
WORLDS_FOLDER = "worlds"
_REF = re.compile(r"^(.+?)_ids?$")
_SEQUENCE_ID = re.compile(r"^([A-Za-z]+)_(\d+)$")
_DRAWN_PARTS = ("{sha}", "{hex8}", "{uuid}")
#: How `Collection.natural_key` makes a taken key unique: `main-1`, `notes-2.txt`.
_REPEAT_SUFFIX = re.compile(r"-\d+(?=(\.[A-Za-z0-9]+)?$)")


# --- the sandbox apps -------------------------------------------------------------------------------
@cache
def _apps() -> dict[str, type[SandboxApp]]:
    from cworld.sandbox.catalog import all_apps

    return {app.name: app for app in all_apps()}


def stateful_apps() -> dict[str, type[SandboxApp]]:
    return {name: app for name, app in _apps().items() if app.stateful}


def app_kinds(app: type[SandboxApp]) -> dict[str, str]:
    """Card entity kind -> the app's collection (`product` -> `catalog`): `entity_kinds` reversed."""
    return {kind: collection for collection, kind in app.entity_kinds.items()}


def sandbox_world(seed: int) -> dict[str, ServerWorld]:
    """Every stateful app's seeded state, from the same session a live episode of `seed` starts with."""
    session = SandboxSession(seed, list(_apps().values()))
    counters = session.id_counters()
    return {name: ServerWorld(server=name, state=session.state[name], kinds=app_kinds(app), card=None,
                              ids=_counters_used(session.state[name], counters), source="sandbox",
                              reference=session.app(name).world_reference())
            for name, app in stateful_apps().items()}


def _counters_used(state: Any, counters: dict[str, int]) -> dict[str, int]:
    """The session's id counters whose prefix the app's ids use: the counters are session-wide (the
    next comment continues after every app's), so each app keeps the global number of its prefixes."""
    found: set[str] = set()
    _prefixes(state, found)
    return {prefix: n for prefix, n in counters.items() if prefix in found}


def _prefixes(value: Any, found: set[str]) -> None:
    if isinstance(value, dict):
        for key, sub in value.items():
            _prefixes(key, found)
            _prefixes(sub, found)
    elif isinstance(value, list):
        for sub in value:
            _prefixes(sub, found)
    elif isinstance(value, str) and (match := _SEQUENCE_ID.match(value)):
        found.add(match.group(1))


# --- generated worlds -------------------------------------------------------------------------------
def collection_name(kind: str) -> str:
    """The kind's plural when `singular_word` reads it back as the kind (`journal_entries`, `people`),
    else the kind itself: one name per kind, and the engine's own singular finds the kind again."""
    return next((plural for plural in _plurals(kind) if singular_word(plural) == kind), kind)


def _plurals(kind: str) -> Iterator[str]:
    if kind == "person":
        yield "people"
    if kind.endswith("y") and kind[-2:-1] not in ("a", "e", "i", "o", "u"):
        yield kind[:-1] + "ies"
    if kind.endswith(("s", "x", "ch", "sh")):
        yield kind + "es"
    yield kind + "s"


def references(card: CategoryCard, entity: EntityType) -> list[tuple[str, bool, str]]:
    """(field, is a list, kind) for each field of `entity` that points at records of a card kind."""
    out = []
    for name, kind in entity.fields.items():
        match = _REF.match(name)
        target = kind_named(card, match.group(1)) if match and kind in ("id", "list[id]") else None
        if target is not None:
            out.append((name, kind == "list[id]", target))
    return out


def build_order(card: CategoryCard) -> list[EntityType]:
    """Referenced kinds before the kinds that name them (contacts before deals); a cycle keeps card order."""
    order: list[EntityType] = []

    def visit(entity: EntityType, path: frozenset[str]) -> None:
        if entity in order or entity.name in path:
            return
        for _, _, target in references(card, entity):
            visit(card.entity(target) or entity, path | {entity.name})
        if entity not in order:
            order.append(entity)

    for entity in card.entities:
        visit(entity, frozenset())
    return order


def generated_world(server: str, card: CategoryCard, seed: int, size: int | None = None,
                    tools: Iterable[ToolSpec] = ()) -> ServerWorld:
    """A server's world of its card's kinds and of the kinds its `tools`' id arguments name that the card
    lacks (`named.py`); `size` records per kind, else 20-200 drawn per kind. Dates fall near the seed's
    clock, the one the sandbox apps start at."""
    tools = list(tools)
    named = named_kinds(card, tools)
    with session_clock(seeded_start(seed)):
        collections = _generate(server, with_named_kinds(card, named), seed, size)
    kinds = {kind: collection_name(kind) for kind in collections}
    state: dict[str, Any] = {kinds[k]: c.records for k, c in collections.items()}
    me = _signed_in(collections, tools)
    if me is not None:  # `get_me` reads the one user the session is signed in as, the same on every call
        state[SIGNED_IN] = me
    # what the server holds once (Gmail's vacation responder): read and set by the same noun
    state.update(held_settings(tools, {*kinds, *kinds.values(), *state},
                               lambda noun: derive_rng(seed, f"world:{server}:settings:{noun}")))
    return ServerWorld(server=server, state=state, kinds=kinds,
                       card=card.name, ids=_last_numbers(collections.values()), source="generated",
                       named_kinds=[k.model_dump(exclude_defaults=True) for k in named])


SIGNED_IN = "me"
"""Where a generated world points at the user its session is signed in as (`me: usr_0001`), as a loaded one may."""
_PEOPLE = ("user", "member", "staff", "employee", "person", "profile")
_OWNERS = ("organizer", "owner", "owner_id", "organizer_id", "created_by", "creator", "creator_id")


def _signed_in(collections: dict[str, Collection], tools: list[ToolSpec]) -> str | None:
    """Who the session is signed in as, where a tool reads the signed-in user (`get_me`, `whoami`) and the world
    holds people: the person who owns the most records where records name their owner or organizer (the
    signed-in user's calendar is theirs), else the first person. None where no tool asks who is signed in, or
    where records name owners none of the people is (a pointer would make their events someone else's)."""
    if not any(reads_signed_in_user(t) for t in tools):
        return None
    people = next((c.records for k in _PEOPLE if (c := collections.get(k)) is not None and c.records), None)
    if people is None:
        return None
    owners = Counter(str(r.get(f)) for c in collections.values() for r in islice(c.records.values(), 500)
                     if isinstance(r, dict) for f in _OWNERS if r.get(f) not in (None, ""))
    if not owners:
        return str(next(iter(people)))
    said = {str(k): k for k in people} | {str(v): k for k, p in people.items() if isinstance(p, dict)
                                           for v in (p.get("name"), p.get("email")) if v}
    owner = next((said[o] for o, _ in owners.most_common() if o in said), None)
    return None if owner is None else str(owner)


def _generate(server: str, card: CategoryCard, seed: int, size: int | None) -> dict[str, Collection]:
    keys: dict[str, list[str]] = {e.name: [] for e in card.entities}
    refs: Callable[[str], list[str]] = lambda stem: keys.get(kind_named(card, stem) or "", [])  # noqa: E731
    collections: dict[str, Collection] = {}
    for entity in build_order(card):
        coll = collections[entity.name] = Collection(entity, card_format(entity), refs=refs)
        purpose = f"world:{server}:{entity.name}"
        count = size if size is not None else default_size(derive_rng(seed, f"{purpose}:size"))
        count = min(count, entity.max_records) if entity.max_records is not None else count
        _fill(coll, count, derive_rng(seed, purpose), keys[entity.name])
        name_records(coll, derive_rng(seed, f"{purpose}:names"))  # names from the kind's vocabulary
        _named_by_path(coll)
        _files_named_by_title(coll, FILE_SUFFIXES.get(card.name))
    _close_references(card, collections, keys, derive_rng(seed, f"world:{server}:references"))
    _agree_with_parents(card, collections)
    return {e.name: collections[e.name] for e in card.entities}


def _named_by_path(coll: Collection) -> None:
    """A record kept at a path (a file, a scene object) is named by the path's last part: `summer.docx` at
    `/workspace/court/summer.docx`, not a word drawn apart from it (`season`)."""
    fields = coll.entity.fields
    if fields.get("path") != "path" or fields.get("name") != "word":
        return
    for record in coll.records.values():
        if isinstance(record, dict) and isinstance(record.get("path"), str) and record["path"].strip("/"):
            record["name"] = record["path"].rstrip("/").rsplit("/", 1)[-1]


#: The file a category's record is kept in, where its tools name records by file name (`get_document_info(filename)`).
FILE_SUFFIXES = {"documents": ".docx", "spreadsheets": ".xlsx", "presentations": ".pptx"}


def _files_named_by_title(coll: Collection, suffix: str | None) -> None:
    """A record a service names by its file name (`world/named.py` gives it a `filename` where the tools take one)
    is kept in a file named as its title: `Q3 budget review.docx`, not a path drawn apart from it."""
    titled = next((f for f in NAME_FIELDS if f in coll.entity.fields), None)
    if "filename" not in coll.entity.fields or titled is None or coll.key_field == "filename":
        return
    for record in coll.records.values():
        if not isinstance(record, dict) or not str(record.get(titled) or "").strip():
            continue
        drawn = str(record.get("filename") or "")
        ext = suffix or (("." + drawn.rsplit(".", 1)[-1]) if "." in drawn.rsplit("/", 1)[-1] else ".txt")
        stem = re.sub(r'[\\/:*?"<>|]+', "-", str(record[titled])).strip()
        record["filename"] = f"{stem}{ext}"


def default_size(rng: random.Random) -> int:
    """Records of a kind when no size is asked for: 20-200, log-uniform, so most collections hold tens
    and some hundreds, as in a real account (a few projects, many issues)."""
    low, high = DEFAULT_SIZE
    return round(math.exp(rng.uniform(math.log(low), math.log(high))))


def _fill(coll: Collection, count: int, rng: random.Random, keys: list[str]) -> None:
    """The card's examples first, then fresh records up to `count`; `keys` grows with them, so a kind
    that names its own kind (a reply's parent) points at earlier records only. A natural key whose values
    run out (there are only so many time zones) ends the kind early rather than invent `Europe/Paris-1`."""
    for example in coll.entity.examples[:count]:
        _add(coll, new_record(coll, rng, dict(example)), keys)
    make, misses = _record_maker(coll, rng), 0
    while len(coll.records) < count and misses < MAX_REPEATS:
        misses += not _add(coll, make(), keys)


def _record_maker(coll: Collection, rng: random.Random) -> Callable[[], dict[str, Any]]:
    """Records drawn whole up to `POOL`, then records whose costly fields those lend (`_pooled_record`)."""
    lenders: list[tuple[EntityType, list[dict[str, Any]]]] = []

    def make() -> dict[str, Any]:
        if len(coll.records) < POOL:
            return new_record(coll, rng, _sequence_key(coll) or _vocabulary_key(coll, rng))
        if not lenders:
            lenders.append((_cheap_view(coll.entity), list(coll.records.values())))
        return _pooled_record(coll, *lenders[0], rng)

    return make


def _add(coll: Collection, record: dict[str, Any], keys: list[str]) -> bool:
    """Put a new record; False for a natural key `Collection.natural_key` had to make unique (`main-1`), or
    one held already (a name the kind's vocabulary repeats): the kind's values ran out, and a world does not
    invent `Europe/Paris-1`."""
    drawn = str(record.get(coll.key_field))
    if drawn in coll.records or (_drawn_key(coll) and _REPEAT_SUFFIX.search(drawn)):
        return False
    key = coll.put(record)
    if len(keys) < len(coll.records):
        keys.append(key)
    return True


def _drawn_key(coll: Collection) -> bool:
    """The kind is keyed by a drawn value (a path, a branch, a time zone), not by a sequence."""
    kind = coll.entity.fields.get(coll.key_field, "string")
    return coll.key_field != "id" and kind not in ("int", "sha") and coll.entity.id_format == "{prefix}_{n:04d}"


def _cheap_view(entity: EntityType) -> EntityType:
    """The entity without its costly fields (urls, paths, texts), whose values a pool lends; the key
    field stays, so every record still draws its own key."""
    fields = {name: kind for name, kind in entity.fields.items()
              if name == entity.key_field or kind.removeprefix("list[").rstrip("]") not in POOLED_TYPES}
    return entity.model_copy(update={"fields": fields})


def _pooled_record(coll: Collection, view: EntityType, pool: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """A record drawn as `new_record` draws one (its own person, place, numbers, dates, names and
    references), but with each costly field taken from a random record of the pool: a url costs
    Faker ~0.5 ms, the rest of a record ~0.1 ms. Lent lists are copies: records never share one."""
    lent = {name: _copied(rng.choice(pool).get(name)) for name in coll.entity.fields if name not in view.fields}
    drawn = Collection(view, coll.fmt, records=coll.records, next_number=coll.next_number, refs=coll.refs)
    record = new_record(drawn, rng, {**(_sequence_key(coll) or _vocabulary_key(coll, rng) or {}), **lent})
    return {name: record[name] for name in ("id", *coll.entity.fields) if name in record}


def _vocabulary_key(coll: Collection, rng: random.Random) -> dict[str, Any] | None:
    """A kind keyed by its name (a bucket, a table) takes the name from its vocabulary, as `name_records` names
    the others (which keep their keys): a bucket 'analytics-exports-4821', not the lorem word 'job'. When every
    draw is taken the name repeats, and `_add` ends the kind there: a drawing has its few dimension styles, not
    the lorem word 'measure' beside them."""
    if coll.key_field not in NAME_FIELDS or not coll.entity.vocabulary:
        return None
    name = ""
    for _ in range(8):
        name = fill_template(rng.choice(coll.entity.vocabulary), rng)
        if name not in coll.records:
            break
    return {coll.key_field: name}


def _copied(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _sequence_key(coll: Collection) -> dict[str, Any] | None:
    """The next id of an id-keyed kind, made without the rng: `IdFormat.make` draws a sha, a hex8 and a
    uuid for every id (so the engine's rng stream never moves), a quarter of a record's cost here."""
    fmt = coll.fmt
    if coll.key_field != "id" or any(part in fmt.template for part in _DRAWN_PARTS):
        return None
    key = fmt.template.format(prefix=fmt.prefix, n=coll.next_number)
    return {"id": int(key) if fmt.numeric or coll.entity.fields.get("id") == "int" else key}


def _close_references(card: CategoryCard, collections: dict[str, Collection], keys: dict[str, list[str]],
                      rng: random.Random) -> None:
    """References no record could fill while its kind was built (a cycle, a kind's first record naming
    its own kind) point at existing records after all, or at nothing: no id names a missing record."""
    for kind, coll in collections.items():
        for name, many, target in references(card, coll.entity):
            known = set(keys[target])
            choices = keys[target] if target != kind else []
            for record in coll.records.values():
                record[name] = _closed(record.get(name), many, known, choices, rng)


def _agree_with_parents(card: CategoryCard, collections: dict[str, Collection]) -> None:
    """A record that names a parent and that parent's own parent names the same one: an Airtable record's base
    is its table's base, a repository's file is in that repository's organization. Kinds are set in build
    order, so a parent agrees with its own parents before its children read it."""
    for entity in build_order(card):
        coll = collections.get(entity.name)
        if coll is None:
            continue
        refs = [(name, target) for name, many, target in references(card, entity) if not many]
        for name, target in refs:
            parent_coll = collections.get(target)
            if parent_coll is None:
                continue
            above = [(theirs, kind) for theirs, many, kind in references(card, parent_coll.entity) if not many]
            shared = [(mine, theirs) for mine, other in refs if other != target for theirs, kind in above if kind == other]
            if not shared:
                continue
            for record in coll.records.values():
                parent = parent_coll.records.get(str(record.get(name)))
                for mine, theirs in shared:
                    if isinstance(parent, dict) and parent.get(theirs) not in (None, ""):
                        record[mine] = parent[theirs]


def _closed(value: Any, many: bool, known: set[str], choices: list[str], rng: random.Random) -> Any:
    if not many:
        return value if str(value) in known else (rng.choice(choices) if choices else None)
    kept = [v for v in value if str(v) in known] if isinstance(value, list) else []
    return kept or (rng.sample(choices, min(len(choices), rng.randint(1, 2))) if choices else [])


def _last_numbers(collections: Iterable[Collection]) -> dict[str, int]:
    """Id prefix -> the last number its sequence used, for kinds whose ids are numbered."""
    out: dict[str, int] = {}
    for coll in collections:
        if "{n" in coll.fmt.template and coll.next_number > 1:
            prefix = coll.fmt.prefix or coll.entity.id_prefix
            out[prefix] = max(out.get(prefix, 0), coll.next_number - 1)
    return out


# --- the world of a seed ----------------------------------------------------------------------------
def world_now(seed: int) -> str:
    """The seed's clock start, ISO 8601 UTC: the sandbox's, so every server shares one clock."""
    return seeded_start(seed).strftime("%Y-%m-%dT%H:%M:%SZ")


def server_cards(tools: Iterable[ToolSpec], cards: dict[str, CategoryCard]) -> dict[str, CategoryCard]:
    """Each server's card: the one most of its tools get (a tie goes to the first name)."""
    index = CardIndex(cards)
    votes: dict[str, Counter[str]] = {}
    for tool in tools:
        votes.setdefault(tool.server, Counter())[index.card_for(tool).name] += 1
    return {server: cards[max(sorted(count), key=count.__getitem__)] for server, count in votes.items()}


def world_servers(tools: Iterable[ToolSpec], cards: dict[str, CategoryCard]) -> list[str]:
    """The servers a world holds: every stateful app, and every server of `tools` that is no sandbox app."""
    generated = [s for s in server_cards(tools, cards) if s not in _apps()]
    return sorted({*stateful_apps(), *generated})


def build_world(seed: int, tools: Iterable[ToolSpec], cards: dict[str, CategoryCard], size: int | None = None,
                servers: Iterable[str] | None = None) -> World:
    """The world of `seed`: the sandbox apps' seeded states and a generated world for every other server
    of `tools` (`servers`: only those). `size` is records per generated kind (the apps keep their own)."""
    wanted = set(servers) if servers is not None else None
    world = World(seed=seed, now=world_now(seed))
    tools = list(tools)
    if wanted is None or wanted & set(stateful_apps()):
        world.servers.update({k: v for k, v in sandbox_world(seed).items() if wanted is None or k in wanted})
    by_server: dict[str, list[ToolSpec]] = {}
    for tool in tools:
        by_server.setdefault(tool.server, []).append(tool)
    for server, card in sorted(server_cards(tools, cards).items()):
        if server not in _apps() and (wanted is None or server in wanted):
            world.servers[server] = generated_world(server, card, seed, size, by_server[server])
    return world


def world_folder(workspace: Workspace | Path) -> Path:
    root = workspace.root if isinstance(workspace, Workspace) else Path(workspace)
    return root / WORLDS_FOLDER


def load_or_build(workspace: Workspace | Path, seed: int, tools: Iterable[ToolSpec], cards: dict[str, CategoryCard],
                  servers: Iterable[str] | None = None) -> World:
    """The saved world of `seed` (only `servers`, when given); servers it misses are built and saved
    beside it, so the first call builds and every later one loads the same world. A sandbox app's world
    is rebuilt every time from the seed (0.05-0.5 s): it must be the state a live episode starts from
    under the code that runs it; a saved world of an older format is rebuilt; loaded records are kept."""
    tools = list(tools)
    folder = world_folder(workspace)
    wanted = list(servers) if servers is not None else world_servers(tools, cards)
    world = World.load(folder, seed, wanted) or World(seed=seed, now=world_now(seed))
    for name, sw in list(world.servers.items()):
        if sw.source == "sandbox":  # the apps' code makes their worlds: always the live seeded state, never a stale copy
            del world.servers[name]
    missing = [s for s in wanted if s not in world.servers]
    if missing or not (folder / f"seed-{seed}").is_dir():
        built = build_world(seed, tools, cards, servers=missing)
        built.save(folder)
        world.servers.update(built.servers)
    return world


class ServerByServerWorld(World):
    """The world of `seed`, loaded (or built and saved) one server at a time, when a server is first asked
    for: the same records as `load_or_build` (a server's world depends on the seed, the server, its card and its tools
    only), for a caller that touches a few servers of many seeds (the harvested-pool synthesizer: a task's
    plan reaches 3-5 of ~190 servers, each task has its own seed; a run over the harvested pool, whose
    episodes reach a few of 321). `servers` holds the servers loaded so far; `preload` names those loaded
    at once (a run's engine: the sandbox apps, whose state the grader reads even when no call reached them).
    """

    def __init__(self, workspace: Workspace | Path, seed: int, tools: Iterable[ToolSpec],
                 cards: dict[str, CategoryCard], preload: Iterable[str] = ()) -> None:
        super().__init__(seed=seed, now=world_now(seed))
        self._workspace, self._cards = workspace, cards
        self._tools: dict[str, list[ToolSpec]] = {}
        for tool in tools:
            self._tools.setdefault(tool.server, []).append(tool)
        preload = [name for name in preload if name in self._tools or name in stateful_apps()]
        if preload:  # in one build: the apps' seeded states come from one session
            tools_of = [t for name in preload for t in self._tools.get(name, [])]
            self.servers.update(load_or_build(workspace, seed, tools_of, cards, servers=preload).servers)

    def server(self, name: str) -> ServerWorld | None:
        if name not in self.servers and (name in self._tools or name in stateful_apps()):
            loaded = load_or_build(self._workspace, self.seed, self._tools.get(name, []), self._cards, servers=[name])
            self.servers.update(loaded.servers)
        return self.servers.get(name)


# --- a user's own records ---------------------------------------------------------------------------
def load_records_file(server: str, path: Path, card: CategoryCard, kinds: dict[str, str] | None = None) -> ServerWorld:
    """A server's world from a JSON or YAML file `{kind or collection: [records] | {key: record}}`; list
    records are keyed by the kind's key field (or `id`; an id-keyed record without one gets the next id
    of the card's format). `kinds` (kind -> collection) is a layout of the server's own (a sandbox app's)."""
    layout = {e.name: (kinds or {}).get(e.name, collection_name(e.name)) for e in card.entities}
    collections: dict[str, Collection] = {}
    data = _read_records(path)
    singletons = _singletons(data.pop(STATE_KEY, None), path)
    nested = _nested_layout(data.pop(LAYOUT_KEY, None), singletons, card, path, server)
    by_fields = _record_keys(data.pop(KEYS_KEY, None), card, path)
    for name, records in data.items():
        entity = _entity_of(name, card, layout, path, server)
        coll = collections.setdefault(entity.name, Collection(entity, card_format(entity)))
        fields = by_fields.get(entity.name)
        if fields and isinstance(records, list):  # keyed by what each record holds (`from|relationType|to`)
            records = {"|".join(str(r.get(f)) if isinstance(r, dict) else "" for f in fields): r for r in records}
        for key, record in _keyed(records, coll, f"{path}: {name}", with_key=kinds is None):
            _check_fields(record, entity, f"{path}: {name}[{key!r}]")
            coll.records[str(key)] = record
            coll.note_key(key)
    state: dict[str, Any] = {layout[k]: c.records for k, c in collections.items()}
    clash = sorted(set(state) & set(singletons))
    if clash:
        raise UsageError(f"{path}: '{STATE_KEY}' names {', '.join(clash)}, which the file also gives as records; "
                         "rename the singleton")
    if "auth" not in singletons and _holds_accounts(collections.values()):
        singletons["auth"] = {}  # where a login keeps its session token, which every later call must carry
    return ServerWorld(server=server, state={**state, **singletons},
                       kinds={**{k: layout[k] for k in collections}, **nested}, card=card.name,
                       ids=_last_numbers(collections.values()), source=f"loaded:{path.name}",
                       keys={layout[k]: f for k, f in by_fields.items()})


#: The entry of a world file that names the kinds whose records are keyed by what they hold (`{relation: [from,
#: relationType, to]}`), as the service keys them: a record made in a run is keyed the same way.
KEYS_KEY = "keys"


def _record_keys(value: Any, card: CategoryCard, path: Path) -> dict[str, list[str]]:
    """A world file's `keys` (kind -> fields), checked against the card: one line naming what is wrong."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"{path}: '{KEYS_KEY}' must map kinds to the fields that key their records, "
                         "e.g. {relation: [from, relationType, to]}")
    found: dict[str, list[str]] = {}
    for kind, fields in value.items():
        entity = next((e for e in card.entities if e.name == str(kind) or f"{e.name}s" == str(kind)), None)
        if entity is None:
            raise UsageError(f"{path}: {KEYS_KEY}.{kind} names no kind of the card {card.name} "
                             f"({', '.join(e.name for e in card.entities)})")
        if not isinstance(fields, list) or not fields or any(f not in entity.fields for f in fields):
            raise UsageError(f"{path}: {KEYS_KEY}.{kind} must list fields of a {entity.name} "
                             f"({', '.join(entity.fields)})")
        found[entity.name] = [str(f) for f in fields]
    return found


def _holds_accounts(collections: Iterable[Collection]) -> bool:
    """Whether some record holds a secret a login checks (a password, a pin)."""
    return any(f in record for c in collections for record in islice(c.records.values(), 20) for f in SECRET_FIELDS)


#: The entry of a world file that holds what is not a collection of records: the signed-in user (`me:
#: usr_0002`), session tokens (`auth`), settings, balances, counters, relations, trees.
STATE_KEY = "state"


#: The entry of a world file that names collections kept inside a singleton (`{cart_item: cart.items}`: a
#: cart's lines, held in `state.cart` beside its coupon), so the card's rules run on them as on any collection.
LAYOUT_KEY = "layout"


def _nested_layout(value: Any, singletons: dict[str, Any], card: CategoryCard, path: Path,
                   server: str) -> dict[str, str]:
    """Kind -> path of the file's `layout` entries; each names a card kind and a `{key: record}` map inside a
    singleton of `state` (a list of records is keyed as a kind's records are), whose records fit the card."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"{path}: '{LAYOUT_KEY}' must map kinds to paths inside '{STATE_KEY}', e.g. "
                         "{cart_item: cart.items}")
    found: dict[str, str] = {}
    for kind, where in value.items():
        entity = _entity_of(str(kind), card, {}, path, server)
        parent, _, field = str(where).rpartition(SEP)
        holder = at(singletons, parent) if parent else None
        if not isinstance(holder, dict) or not field:
            raise UsageError(f"{path}: {LAYOUT_KEY}.{kind} is {where!r}, which names no object inside "
                             f"'{STATE_KEY}'; give the path of its records there, e.g. cart.items")
        coll = Collection(entity, card_format(entity))
        keyed = {}
        for key, record in _keyed(holder.get(field) or {}, coll, f"{path}: {STATE_KEY}.{where}", with_key=True):
            _check_fields(record, entity, f"{path}: {STATE_KEY}.{where}[{key!r}]")
            keyed[str(key)] = record
        holder[field] = keyed
        found[entity.name] = str(where)
    return found


def _singletons(value: Any, path: Path) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and k.isidentifier() for k in value):
        raise UsageError(f"{path}: '{STATE_KEY}' must be an object of named values, e.g. {{me: usr_0002, "
                         "settings: {theme: dark}}")
    return value


#: What a loaded value must be, per card field type (None is always allowed: a field not known yet).
_FIELD_TYPES: dict[str, tuple[type, ...]] = {"int": (int,), "float": (int, float), "money": (int, float, str),
                                             "bool": (bool,)}


def _check_fields(record: dict[str, Any], entity: EntityType, where: str) -> None:
    """A loaded record's values fit the card's field types (an int where the card says int, a list for a
    list field); a wrong one is one line naming the record and the field."""
    for name, declared in entity.fields.items():
        value = record.get(name)
        if value is None:
            continue
        wanted = (list,) if declared.startswith("list[") else _FIELD_TYPES.get(declared)
        if wanted is not None and (not isinstance(value, wanted) or (bool not in wanted and isinstance(value, bool))):
            raise UsageError(f"{where}: field '{name}' is {value!r}, but card '{entity.name}' declares it "
                             f"{declared}; fix the value")


def user_world(server: str, path: Path, seed: int, card: CategoryCard) -> ServerWorld:
    """`cworld world load`: the file's records as the server's world. A sandbox app keeps the rest of its
    seeded state (its user, its cart, the collections the file does not give), so its tools still run."""
    app = stateful_apps().get(server)
    if app is None:
        return load_records_file(server, path, card)
    loaded = load_records_file(server, path, card, app_kinds(app))
    base = sandbox_world(seed)[server]
    ids = {p: max(base.ids.get(p, 0), loaded.ids.get(p, 0)) for p in {*base.ids, *loaded.ids}}
    return ServerWorld(server=server, state={**base.state, **loaded.state}, kinds={**base.kinds, **loaded.kinds},
                       card=None, ids=dict(sorted(ids.items())), source=loaded.source, keys=loaded.keys)


def _read_records(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise UsageError(f"{path}: no such file; give a JSON or YAML file of {{kind: [records...]}}")
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text) if path.suffix.lower() in (".yaml", ".yml") else json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not readable ({exc})") from None
    if not isinstance(data, dict) or not data:
        raise UsageError(f"{path}: expected an object {{kind: [records...] | {{key: record}}}}, one entry per kind")
    return data


def _entity_of(name: str, card: CategoryCard, layout: dict[str, str], path: Path, server: str) -> EntityType:
    """The card kind a file's entry names: the kind, its collection, or a plural of it."""
    by_collection = {collection: kind for kind, collection in layout.items()}
    kind = name if card.entity(name) else by_collection.get(name) or singular_word(name)
    entity = card.entity(kind)
    if entity is None:
        declared = ", ".join(e.name for e in card.entities) or "none"
        raise UsageError(f"{path}: '{name}' is not an entity kind of card '{card.name}' (server {server}); "
                         f"it declares: {declared}")
    return entity


def _keyed(records: Any, coll: Collection, where: str, with_key: bool) -> Iterator[tuple[Any, dict[str, Any]]]:
    """(key, record) pairs of a list or a {key: record} map; `with_key`: a record without its key gets
    it, as generated records hold theirs (a sandbox app's layout keeps records as the file gives them)."""
    if isinstance(records, dict):
        items: list[tuple[Any, Any]] = list(records.items())
    elif isinstance(records, list):
        items = [(_own_key(record, coll, f"{where}[{i}]"), record) for i, record in enumerate(records)]
    else:
        raise UsageError(f"{where}: expected a list of records or a {{key: record}} object")
    taken = _explicit_keys(items, coll, where)
    rng = derive_rng(0, f"world:load:{coll.entity.name}")
    for key, record in items:
        if key is None:
            key = _fresh_key(coll, rng, taken)
        owned = not with_key or coll.key_field in record or "id" in record
        yield key, record if owned else {coll.key_field: key, **record}


def _own_key(record: Any, coll: Collection, where: str) -> Any:
    if not isinstance(record, dict):
        raise UsageError(f"{where}: a record must be an object")
    key = record.get(coll.key_field, record.get("id"))
    if key is None and coll.key_field != "id":
        raise UsageError(f"{where}: the record has no '{coll.key_field}' (or 'id'), which keys a {coll.entity.name}")
    return key


def _explicit_keys(items: list[tuple[Any, Any]], coll: Collection, where: str) -> set[str]:
    """The keys the file gives, each once; the id sequence continues after them."""
    taken: set[str] = set()
    for key, record in items:
        if not isinstance(record, dict):
            raise UsageError(f"{where}: record {key!r} is not an object")
        if key is not None and str(key) in taken:
            raise UsageError(f"{where}: two records have the key {key!r}")
        if key is not None:
            taken.add(str(key))
            coll.note_key(key)
    return taken


def _fresh_key(coll: Collection, rng: random.Random, taken: set[str]) -> Any:
    key = coll.new_key(rng)
    while str(key) in taken:
        key = coll.new_key(rng)
    taken.add(str(key))
    return key
