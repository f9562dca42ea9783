"""What part a harvested tool can play in a goal: find a record, act on it, or tell someone.

A request a person would make needs steps whose effect is real in the world and whose every argument is
something the person knows or an earlier step found. So a tool is drawn only when the world engine runs
it on the server's world (a declared or inferred rule, not the schema engine's simulation) and each of
its required arguments can be filled honestly:

- an id of a kind the server's world holds (`vaultId`, `list_id`): a record of that world, named in the
  request by its name and found by a list read of the same server when there is one;
- a title, name or subject, or free text: what the goal carries from step to step (writes only);
- a search query: a record's name from the world (reads only);
- an enum, a bounded number, a boolean, a date, or a value Faker draws by the parameter's name (an email,
  a city, a company, a person).

Anything else (credentials, config, ids of things the world does not hold, free-form values the schema
only has placeholders for) leaves the tool out: its step would carry `api key 'example'` or `team id '1'`.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from functools import cache
from typing import Any

import jsonschema

from cworld.data_model import ToolSpec
from cworld.engine.cards.operations import entity_for, name_tokens, operation_kind, singular_word, verb_kind
from cworld.engine.rules.arguments import OFFSET_ARGS, PAGE_ARGS
from cworld.schemas import fake
from cworld.synth.offline.schema_links import id_entity, same_entity
from cworld.synth.offline.schema_values import is_text_param, snake

READS = ("list", "search")
WRITES = ("create", "update")
CREDENTIAL = re.compile(r"(^|_)(token|secret|api_?key|apikey|password|passwd|credential|credentials|auth|"
                        r"webhook|private_key|client_id|client_secret|cookie|session)(_|$)")
LABEL = re.compile(r"(^|_)(title|name|subject|summary|headline|label|display_name|caption)$")
QUERY = re.compile(r"(^|_)(query|q|search|search_query|keywords?|term|terms|search_term|text_query)$")
FAKER = re.compile(r"(^|_)(email|city|location|country|company|organi[sz]ation|phone|first_name|last_name|"
                   r"full_name|author|assignee)$")
RECIPIENT = re.compile(r"(^|_)(to|cc|recipient|recipients)$")
COORDINATE = re.compile(r"(^|_)(latitude|lat|longitude|lon|lng)$")
DATE = re.compile(r"(^|_)(date|day|due|due_date|deadline|start|end|start_date|end_date|start_time|end_time|when)$")
_SENDS = frozenset({"send", "post", "reply", "publish"})
_SENT = frozenset({"message", "post", "email", "comment", "note"})


@dataclass(frozen=True)
class ToolRole:
    """A tool that can be a step of a goal, and how each of its arguments is filled."""

    tool: ToolSpec
    op: str
    card: str
    entity: str
    #: argument -> the world kind whose record key it takes (existing records)
    kind_args: dict[str, str] = field(default_factory=dict)
    #: the argument naming the record an update changes (also in `kind_args`)
    own_key: str | None = None
    label_args: tuple[str, ...] = ()
    text_args: tuple[str, ...] = ()
    query_args: tuple[str, ...] = ()
    #: required arguments filled with plain values (enum, number, boolean, date, Faker by name)
    plain_args: tuple[str, ...] = ()
    #: what the tool's own name calls its records (`issue` for `create_issue` on a card world)
    noun: str = ""

    @property
    def word(self) -> str:
        """How the request names the records: the tool's own noun, else the card's entity."""
        return (self.noun or self.entity).replace("_", " ")

    @property
    def reads(self) -> bool:
        return self.op in READS

    @property
    def takes_data(self) -> bool:
        """A write the goal can carry its finding into: a create with a title or text, an update with text
        (an update that could only rename its record after the finding serves no goal a person has). A
        comment must name what it is on (a comment "on the task board" is on nothing)."""
        if self.word == "comment" and not self.kind_args:
            return False
        return bool(self.text_args) if self.op == "update" else bool(self.label_args or self.text_args)


class Roles:
    """Roles of harvested tools on the world engine `engine` (a `RulesEngine`), cached per tool."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self._cache: dict[str, ToolRole | None] = {}
        self.refused: set[str] = set()
        """Tools the probe refused once (a key the schema does not take, a search that misses): never drawn
        again in this run."""

    def kinds(self, server: str) -> dict[str, str]:
        """Card entity kind -> collection of the server's world (the layout is the same for every seed)."""
        world = self.engine.world(0).server(server)
        return dict(world.kinds) if world is not None else {}

    def of(self, tool: ToolSpec) -> ToolRole | None:
        if tool.id in self.refused:
            return None
        if tool.id not in self._cache:
            self._cache[tool.id] = self._classify(tool)
        return self._cache[tool.id]

    def named(self, server: str, kind: str) -> bool:
        """The server's world holds records of `kind` a person can name (a title, a name): a read of it
        can find what a goal is about, and a record argument of that kind can be named in the request."""
        world = self.engine.world(0).server(server)
        records = world.collection(kind) if world is not None else None
        if not records:
            return False
        return any(isinstance(r, dict) and label_field(r) for r in list(records.values())[:20])

    def fit(self, role: ToolRole) -> bool:
        """Every record the tool reads or names can be named."""
        kinds = set(role.kind_args.values()) | ({role.entity} if role.reads else set())
        return all(self.named(role.tool.server, k) for k in kinds)

    def finders(self, tools: list[ToolSpec], kind: str) -> list[ToolSpec]:
        """Reads of `tools` that list records of `kind` and need nothing the request must state."""
        found = []
        for tool in tools:
            role = self.of(tool)
            if role and role.reads and role.entity == kind and not role.kind_args and not role.query_args:
                found.append(tool)
        return found

    def _classify(self, tool: ToolSpec) -> ToolRole | None:
        _, origin = self.engine.rule_for(tool)
        op = operation_kind(tool)
        if origin == "simulated" or op not in READS + WRITES:
            return None
        card = self.engine.index.card_for(tool)
        entity = entity_for(tool, card).name
        noun = _noun(tool, entity)
        if noun is None:
            return None
        role = _fill_plan(tool, op, card.name, entity, self.kinds(tool.server))
        if role is not None and noun != entity:
            role = replace(role, noun=noun)
        return role if role is not None and self._keys_fit(role) and self.fit(role) else None

    def _keys_fit(self, role: ToolRole) -> bool:
        """Every record argument's schema takes the keys the server's world gives that kind (a world keyed
        `SKU-0014` cannot fill an integer `product_id`)."""
        world = self.engine.world(0).server(role.tool.server)
        props = (role.tool.input_schema or {}).get("properties") or {}
        for arg, kind in role.kind_args.items():
            records = world.collection(kind) if world is not None else None
            key = next(iter(records), None) if records else None
            if key is None or not _fits(key, props.get(arg) or {}):
                return False
        return True


def _fits(value: Any, prop: dict[str, Any]) -> bool:
    try:
        jsonschema.validate(value, {k: v for k, v in prop.items() if k != "$ref"})
    except jsonschema.ValidationError:
        return False
    except jsonschema.SchemaError:
        return True
    return True


def _noun(tool: ToolSpec, entity: str) -> str | None:
    """The word of the tool's name for what it reads or writes, when it is the card entity the world
    engine files it under or a synonym of it (`create_card` and `create_issue` make a card; `list_tasks`
    lists cards); a tool whose first verb is `send`/`post` on a card whose entity is a message names one
    too (`create_send_as` does not: it makes an alias). The verb itself is no noun (`list_workspaces`
    lists no list). A tool whose name says neither may be misread by the inferred rule
    (`create_category` filed as a message, `list_accounts` as events), so it is left out (None)."""
    words = [singular_word(w) for w in name_tokens(tool.name)]
    verb = next((i for i, w in enumerate(words) if verb_kind(w) is not None), None)
    nouns = [w for i, w in enumerate(words) if i != verb]
    if all(part in nouns for part in entity.split("_")):
        return entity
    if entity in _SENT and verb is not None and words[verb] in _SENDS:
        return entity
    return next((w for w in nouns if len(w) > 2 and w != entity and same_entity(w, entity)), None)


def _fill_plan(tool: ToolSpec, op: str, card: str, entity: str, kinds: dict[str, str]) -> ToolRole | None:
    schema = tool.input_schema or {}
    props: dict[str, Any] = schema.get("properties", {}) or {}
    required = [k for k in schema.get("required", []) or [] if k in props]
    reads = op in READS
    kind_args: dict[str, str] = {}
    own_key = _own_key(entity, props, kinds) if op == "update" else None
    if op == "update" and own_key is None:
        return None
    if own_key:
        kind_args[own_key] = entity
    labels: list[str] = []
    texts: list[str] = []
    queries: list[str] = []
    plain: list[str] = []
    for name in props:
        key, prop = snake(name), props[name] if isinstance(props[name], dict) else {}
        if name == own_key:
            continue
        if CREDENTIAL.search(key):
            if name in required:
                return None
            continue
        kind = _world_kind(name, kinds)
        if kind is not None and reads and kind == entity:  # a list of lists filtered by a list: no goal
            if name in required:
                return None
        elif kind is not None and kind != entity or kind is not None and reads:
            if name in required:
                kind_args[name] = kind
        elif FAKER.search(key) or RECIPIENT.search(key):
            if name in required:
                if not _plain(key, prop):
                    return None
                plain.append(name)
        elif reads and QUERY.search(key) and _is_string(prop):
            queries.append(name)
        elif not reads and LABEL.search(key) and _is_string(prop):
            labels.append(name)
        elif not reads and is_text_param(name) and _is_string(prop):
            texts.append(name)
        elif name in required:
            if not _plain(key, prop):
                return None
            plain.append(name)
    if not reads and not (labels or texts):
        return None
    if reads and any(q in required for q in queries) and len(queries) > 1:
        return None
    return ToolRole(tool, op, card, entity, kind_args, own_key, tuple(labels), tuple(texts), tuple(queries),
                    tuple(plain))


def _own_key(entity: str, props: dict[str, Any], kinds: dict[str, str]) -> str | None:
    """The argument of an update naming the record it changes: `<entity>_id`, `<entity>Id` or `id`."""
    if entity not in kinds:
        return None
    for name in props:
        if snake(name) in (f"{entity}_id", "id"):
            return name
    return None


def _world_kind(name: str, kinds: dict[str, str]) -> str | None:
    """The world kind an id argument names (`vaultId` -> vault), when the server's world holds it."""
    entity = id_entity(name)
    if entity is None:
        return None
    entity = singular_word(entity)
    return entity if entity in kinds else None


def _is_string(prop: dict[str, Any]) -> bool:
    return prop.get("type") in (None, "string") and "enum" not in prop


def _plain(key: str, prop: dict[str, Any]) -> bool:
    """A required value a request can state honestly without a world record."""
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if prop.get("enum") or kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return "id" not in key.split("_")
    if kind in (None, "string"):
        return bool(FAKER.search(key) or DATE.search(key) or RECIPIENT.search(key)
                    or prop.get("format") in ("date", "date-time", "email"))
    return False


def plain_value(name: str, prop: dict[str, Any], rng: random.Random, today: date) -> Any:
    """A value for a plain argument (`_plain` holds it is one): an enum's member, a bounded number, a
    date near the world's today, or what Faker draws for the parameter's name."""
    key, kind = snake(name), prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if prop.get("enum"):
        return rng.choice(prop["enum"])
    if kind == "boolean":
        return bool(prop.get("default", False))
    coordinate = COORDINATE.search(key) if kind == "number" else None
    if coordinate is not None:  # a place on the globe: a real one's (the engine refuses a latitude of 123)
        where = fake.place(rng)
        return round(where.latitude if coordinate.group(2).startswith("lat") else where.longitude, 4)
    if kind in ("integer", "number") and key in PAGE_ARGS + OFFSET_ARGS:
        # the first page, as a person's first call asks for it (page 57 of a short list holds nothing)
        first = 1 if key in PAGE_ARGS and (prop.get("minimum", 1) or 0) >= 1 else 0
        return prop.get("default", first) if isinstance(prop.get("default"), int) else first
    if kind in ("integer", "number"):
        low, high = prop.get("minimum", 1), prop.get("maximum", 10 if re.search(r"limit|max|count|size|top", key)
                                                      else 100)
        return rng.randint(int(low), max(int(low), int(high)))
    if prop.get("format") == "email" or RECIPIENT.search(key):
        address = fake.person(rng).email
        return [address] if kind == "array" else address
    if DATE.search(key) or prop.get("format") in ("date", "date-time"):
        day = today + timedelta(days=rng.randint(2, 20))
        return f"{day.isoformat()}T10:00:00Z" if prop.get("format") == "date-time" else day.isoformat()
    return _faker(key, rng)


def _faker(key: str, rng: random.Random) -> str:
    person = fake.person(rng)
    if "email" in key:
        return person.email
    if re.search(r"city|location", key):
        return fake.place(rng).city
    if "country" in key:
        return fake.place(rng).country
    if re.search(r"company|organi", key):
        return fake.company(rng)
    if "phone" in key:
        return fake.phone(rng)
    return {"first_name": person.first_name, "last_name": person.last_name}.get(key, person.name)


LABELS = ("title", "name", "subject", "summary", "display_name", "full_name", "headline", "label", "caption", "symbol")
"""Fields a person names a record by, best first: a stock or a trading pair that has no name is named by its
symbol ('NWSC', 'BTC/USDT'), as people do."""
_SAFE_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 .,:()/+#-]{2,70}$")
"""A name the request can quote and a reference can select by: no quote, no `[ ] = ~ &`."""


def label_field(record: dict[str, Any]) -> str | None:
    """The field a person names this record by, when its value reads as a name."""
    for name in LABELS:
        value = record.get(name)
        if isinstance(value, str) and _SAFE_LABEL.match(value) and _reads_as_name(value):
            return name
    return None


def _reads_as_name(value: str) -> bool:
    """Not a url or an email, nor a word too short to name anything (`your`), nor a sentence (a summary
    someone wrote is no name: "Join figure attention citizen doctor.")."""
    if "@" in value or "://" in value:
        return False
    words = value.split()
    if len(words) > 8 or len(words) > 4 and value.endswith("."):
        return False
    return len(words) > 1 or len(value) >= 5 or value[:1].isupper() or any(c.isdigit() for c in value)


def filler(value: str) -> bool:
    """A lone lowercase word of Faker's lorem list (a channel named `perhaps`): a generated world's filler,
    named only when nothing better is there."""
    return value.islower() and " " not in value and value in _lorem_words()


@cache
def _lorem_words() -> frozenset[str]:
    from faker.providers.lorem.en_US import Provider

    return frozenset(Provider.word_list)
