"""What every harvested tool can do to its server's world, read off the world engine's rules (issue 34).

A goal shape (`cworld.synth.goal_shapes`) asks for steps by what they do: *look* at a record, *change*
it, *remove* it, *make* one, *find* records of a kind. A tool is a `Unit` of one of these when the world
engine runs it by a family or inferred rule (never one it only simulates from the schema), and:

- the records it names are those of its rule's `find` checks (`find: target, in: issues, key:
  args['issue_id']`), and each such argument means that kind: `issueId` names an issue, a bare `id`
  names what the tool's own name says (`get_issue(id)`); `inventoryLevelId` filed under products, or a
  time card's id taken for a task-board card, is no unit (the id-kind rule of `request_checks`);
- every other required argument can be filled honestly (a plain value, the goal's title or text, a
  search for a record's name); a credential or a config value leaves the tool out;
- every record it names has a name a person can say, and the world's keys fit its schema.

A family rule that locates a record by what the call names (the browser's `element_key(coll('element'),
arg_ref)`: a ref, a selector or an accessible name) names that record by that argument. A tool whose
`action`/`operation` argument picks the operation is a unit per operation (`Unit.fixed`).

*Finders* are the server's list reads of a kind (their rule lists the kind's collection) that need
nothing the request must state: the plan finds a record's id with one before using it. A unit *plays a
part* (the issue's measure) when its rule checks something (`Unit.plays`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.cards.operations import name_tokens, operation_kind, singular_word, verb_kind
from cworld.engine.rules.dispatch import operation_variants
from cworld.engine.world.named import thin_kinds
from cworld.synth.argument_checks import SENDS
from cworld.synth.offline.goal_roles import (
    CREDENTIAL,
    DATE,
    LABEL,
    QUERY,
    Roles,
    _fits,
    _noun,
    _plain,
)
from cworld.synth.offline.schema_links import id_entity, same_entity
from cworld.synth.offline.schema_values import is_text_param, snake

USES = ("look", "change", "remove", "make", "find")
_GENERIC_KEYS = frozenset({"id", "uuid", "key", "name", "slug", "handle", "number", "ref", "value"})
_ARG = re.compile(r"""^args\[['"]([^'"]+)['"]\]$""")
_ARGS = re.compile(r"""args\[['"]([^'"]+)['"]\]""")
_VALUE = re.compile(r"(^|_)(value|input)$")
_GOT = re.compile(r"""args\.get\(['"]([^'"]+)['"]""")
_DESTRUCTIVE = re.compile(r"(^|_)(delete|remove|drop|destroy|purge|trash|archive|clear)(_|$)")
"""Read on the snake-case name: `drop_table`, `deleteUser`, never `power-off-droplet`."""
_NEVER = re.compile(r"(^|[_\-])(kill|terminate|wipe|revoke|reset|shutdown|format|exec|eval|run_?sql)", re.I)
CONTENT = re.compile(r"(^|_)(content|contents|body|data|file_content|text|base64)$")
"""Arguments that carry what an upload or a write holds."""
RECIPIENT = re.compile(r"(^|_)(to|cc|recipient|recipients|to_email|email_to|user_email)$")
DATES = ("start", "end", "check_in", "check_out", "begin", "due", "when")
_NOT_WHEN = re.compile(r"(^|_)(birth|dob|created|updated|modified|expir|expire|invoice|order|issued|published)(_|$)")
_WHEN = re.compile(r"(^|_)(start|end|due|check_in|check_out|date|day|begin|until|when|time|deadline|at)$")


@dataclass(frozen=True)
class Unit:
    """A tool and how each of its arguments is filled (argument names as the schema spells them)."""

    tool: ToolSpec
    op: str
    use: str
    card: str
    kind: str | None = None
    target: str | None = None
    refs: dict[str, str] = field(default_factory=dict)
    labels: tuple[str, ...] = ()
    texts: tuple[str, ...] = ()
    queries: tuple[str, ...] = ()
    plain: tuple[str, ...] = ()
    plays: bool = False
    thin: bool = False
    """Its record kind is one the world holds only by name (`world.named.thin_kinds`): a goal can find or
    look at such a record (a look or a find unit), but a rule cannot pick one, a condition read one, nor a
    change note anything on one (the world keeps no field but its name)."""
    by_name: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Arguments its rule finds a record by the value of a field (`database` by the database's name): argument
    -> those fields. The plan passes the record's name where it is one of them, as a person says it."""
    fixed: dict[str, Any] = field(default_factory=dict)
    """Arguments every call passes as they are: the operation a multi-operation tool runs (`operation: get`)."""
    describes: tuple[str, ...] = ()
    """Arguments that describe the record a locator names, in words (`element` beside `ref`): the plan passes
    the record's name."""

    @property
    def id(self) -> str:
        return self.tool.id

    @property
    def server(self) -> str:
        return self.tool.server

    @property
    def carries(self) -> bool:
        """It can take what the goal carries (a title, a text)."""
        return bool(self.labels or self.texts)


class ActionSpace:
    """Units of the harvested tools on a world engine (`RulesEngine`), indexed by use; built once per run."""

    def __init__(self, engine: Any, tools: list[ToolSpec], roles: Roles) -> None:
        self.engine, self.roles = engine, roles
        self.units: dict[str, Unit] = {}
        self.finders: dict[tuple[str, str], list[ToolSpec]] = defaultdict(list)
        self.left_out: dict[str, str] = {}
        """Tool id -> why it is no unit (`simulated`, `id_not_kind`, `needs_value`, ...): what a measurement of
        the pool (`benchmarks/synth_breadth.py`) counts, so the biggest blocker is named, not guessed."""
        by_server: dict[str, list[ToolSpec]] = defaultdict(list)
        for tool in tools:
            by_server[tool.server].append(tool)
        for server, own in sorted(by_server.items()):
            self._server(server, own)

    def by_use(self, use: str) -> list[Unit]:
        return [u for u in self.units.values() if u.use == use]

    def records(self, server: str, kind: str) -> list[Any]:
        """The first 50 records of `kind` in the server's world of seed 0 (every seed's world has the same
        kinds and fields; only the values differ)."""
        world = self.engine.world(0).server(server)
        records = world.collection(kind) if world is not None else None
        return list((records or {}).values())[:50]

    def finder(self, server: str, kind: str) -> ToolSpec | None:
        found = self.finders.get((server, kind))
        return found[0] if found else None

    def _server(self, server: str, tools: list[ToolSpec]) -> None:
        kinds = self.roles.kinds(server)
        collections = {c: k for k, c in kinds.items()}
        world = self.engine.world(0).server(server)
        thin = thin_kinds(world) if world is not None else set()  # only names: nothing to decide on
        for tool in sorted(tools, key=lambda t: t.id):
            variants = operation_variants(tool)
            if variants is None:
                unit = self._unit_of(tool, self.engine.rule_for(tool), kinds, collections, thin)
                if unit is not None:
                    self.units[tool.id] = unit
                continue
            self._variants(tool, *variants, kinds, collections, thin)

    def _variants(self, tool: ToolSpec, arg: str, variants: dict[str, ToolSpec], kinds: dict[str, str],
                  collections: dict[str, str], thin: set[str]) -> None:
        """A tool whose `action`/`operation` argument picks the operation (`manage_issue(operation='get'|...)`):
        a unit per operation, read as the tool named for it (`get_manage_issue`, `dispatch.py`), whose calls
        pass that operation (`Unit.fixed`)."""
        why: list[str] = []
        made = False
        for value, named in sorted(variants.items()):
            unit = self._unit_of(named, self.engine.rule_for(tool, {arg: value}), kinds, collections, thin,
                                 finds=False)
            reason = self.left_out.pop(named.id, None)
            if unit is None:
                why += [reason] if reason else []
                continue
            self.units[f"{tool.id}#{value}"] = replace(unit, tool=tool, fixed={arg: value},
                                                       card=self.engine.index.card_for(tool).name)
            made = True
        if why and not made:
            self.left_out[tool.id] = why[0]

    def _unit_of(self, tool: ToolSpec, found: tuple[Any, str], kinds: dict[str, str], collections: dict[str, str],
                 thin: set[str], finds: bool = True) -> Unit | None:
        """The tool's unit under its rule `found` (rule, origin), or None with the reason in `left_out`; a list
        read of a named kind it registers as a finder unless `finds` is False (a call needing more than its
        plain arguments)."""
        rule, origin = found
        if rule is None or origin == "simulated" or _NEVER.search(tool.name):
            self.left_out[tool.id] = "never" if rule is not None and origin != "simulated" else "simulated"
            return None
        if rule.list_ is not None:
            kind = collections.get(rule.list_.from_, rule.list_.from_ if rule.list_.from_ in kinds else None)
            if finds and kind and not _required_beyond_plain(tool) and self.roles.named(tool.server, kind):
                self.finders[(tool.server, kind)].append(tool)
            unit = self._reader(tool, rule, kind, kinds, collections) if kind else self._out(tool, "list_no_kind")
        else:
            unit = self._unit(tool, rule, kinds, collections)
        if unit is not None and unit.kind in thin and unit.use not in ("look", "find"):
            unit = self._out(tool, "thin_kind")  # its rule keeps nothing but the name: a change is lost
        elif unit is not None and unit.use not in ("look", "find") and (rule.read_only or not rule.do):
            # `figma_set_text(nodeId)`: the kind holds no text to set; `create_comment` where the world holds
            # no comments: the call is checked, but the plan's one write would leave the world as it was
            unit = self._out(tool, "keeps_nothing")
        return replace(unit, thin=unit.kind in thin) if unit is not None and unit.kind in thin else unit

    def _out(self, tool: ToolSpec, why: str) -> Unit | None:
        """Leave the tool out for `why` (kept in `left_out`): no unit."""
        self.left_out[tool.id] = why
        return None

    def _unit(self, tool: ToolSpec, rule: Any, kinds: dict[str, str], collections: dict[str, str]) -> Unit | None:
        op = operation_kind(tool)
        found = _found_args(rule, kinds, collections)
        use = _use(tool, op, bool(found), bool(rule.read_only), writes=bool(rule.do) and not rule.read_only)
        if use is None:
            return self._out(tool, "names_no_record")
        if use in ("remove", "change") and (_ON_MATCHES.search(tool.name) or any(
                snake(p) in _MATCH_ARGS for p in (tool.input_schema.get("properties") or {}))):
            return self._out(tool, "acts_on_matches")  # `delete-many(connectionId, filter)`: not the record named
        target = next((a for a, _ in found), None) if use != "make" else None
        kind = dict(found).get(target) if target else None
        located = _located(rule)  # a locator's argument names the record its rule resolves it to
        if target is not None and target not in located and not self._means(target, kind or "", tool):
            return self._out(tool, "id_not_kind")
        refs = {a: k for a, k in found if a != target}
        if any(a not in located and not self._means(a, k, tool) for a, k in refs.items()):
            return self._out(tool, "id_not_kind")
        # a locator's companion that describes what it names (`browser_type(element, ref)`) takes the record's name
        describes = tuple(p for p in (tool.input_schema.get("properties") or {}) if target in located
                          and p != target and snake(p) == kind)
        kept = set(_ARGS.findall(repr(rule.do))) | set(_GOT.findall(repr(rule.do))) if use == "change" else set()
        filled = _fill(tool, use, {*dict(found), *describes}, kept)
        if filled is None:
            return self._out(tool, "needs_value")
        labels, texts, queries, plain = filled
        if use == "change":  # a note the rule does not keep is lost: the change would change nothing
            labels, texts = tuple(a for a in labels if a in kept), tuple(a for a in texts if a in kept)
        if use == "make" and not (labels or texts):
            return self._out(tool, "make_no_text")
        unit = Unit(tool, op, use, self.engine.index.card_for(tool).name, kind, target, refs, labels, texts,
                    queries, plain, plays=rule.refuses, by_name=_by_field(rule), describes=describes)
        return unit if self._fit(unit) else self._out(tool, "unnamed_or_keys")

    def _reader(self, tool: ToolSpec, rule: Any, kind: str, kinds: dict[str, str],
                collections: dict[str, str]) -> Unit | None:
        """A list or search read of a kind a person names: it finds the record a goal starts from (a search
        by the record's name, a list by picking it). A list scoped to a record of another kind its rule
        checks (`list_expenses_for_project(project_id)`) takes that record as the request names it."""
        if not id_means(f"{kind}s", kind, tool) and _noun(tool, kind) is None:
            return self._out(tool, "list_not_kind")
        refs = {a: k for a, k in _found_args(rule, kinds, collections) if k != kind}
        if any(not self._means(a, k, tool) for a, k in refs.items()):
            return self._out(tool, "id_not_kind")
        filled = _fill(tool, "find", set(refs))
        if filled is None:
            return self._out(tool, "needs_value")
        if not self.roles.named(tool.server, kind):
            return self._out(tool, "unnamed_or_keys")
        _, _, queries, plain = filled
        if not queries and verb_kind(tool.name) == "search":
            return self._out(tool, "search_no_query")  # used as a listing, it never asked for what a plan picks
        unit = Unit(tool, operation_kind(tool), "find", self.engine.index.card_for(tool).name, kind, None, refs,
                    (), (), queries, plain, plays=rule.refuses, by_name=_by_field(rule))
        return unit if self._fit(unit) else self._out(tool, "unnamed_or_keys")

    def _means(self, arg: str, kind: str, tool: ToolSpec) -> bool:
        """The argument names a record of `kind`: by its name (`id_means`), or because the world keys that
        kind's records by their own field of the argument's name (`symbol` of a stock keyed by its ticker, `url`
        of a page keyed by its address): the argument takes exactly what the record is known by."""
        return id_means(arg, kind, tool) or self._keyed_by(tool.server, kind, arg)

    def _keyed_by(self, server: str, kind: str, arg: str) -> bool:
        if snake(arg) in _GENERIC_KEYS:  # every record has an `id`: it says nothing of which kind
            return False
        world = self.engine.world(0).server(server)
        records = world.collection(kind) if world is not None else None
        first = next(iter((records or {}).items()), None)
        if first is None or not isinstance(first[1], dict):
            return False
        key, record = first
        return any(snake(name) == snake(arg) and str(value) == str(key) for name, value in record.items())

    def _fit(self, unit: Unit) -> bool:
        """Every record the unit names can be named, and the world's keys fit the arguments' schemas."""
        world = self.engine.world(0).server(unit.server)
        props = (unit.tool.input_schema or {}).get("properties") or {}
        named = {**({unit.target: unit.kind} if unit.target and unit.kind else {}), **unit.refs}
        for arg, kind in named.items():
            if not self.roles.named(unit.server, kind):
                return False
            records = world.collection(kind) if world is not None else None
            key = next(iter(records), None) if records else None
            if key is None or not _fits(key_value(records, key), props.get(arg) or {}):
                return False
        return True


def key_value(records: Any, key: str) -> Any:
    """The record's key as its tools take it: a world numbered for tools that take integers (`1`, `2`) keys
    its collection by the string and shows the number as the record's `id`."""
    record = records.get(key) if isinstance(records, dict) else None
    shown = record.get("id") if isinstance(record, dict) else None
    return shown if isinstance(shown, int) and not isinstance(shown, bool) and str(shown) == key else key


def _found_args(rule: Any, kinds: dict[str, str], collections: dict[str, str]) -> list[tuple[str, str]]:
    """(argument, world kind) of each `find` check of the rule keyed by an argument, and of each record a
    family rule locates by an argument (`_located`), target first."""
    found = [(arg, kind, True) for arg, kind in _located(rule).items() if kind in kinds]
    for check in rule.check:
        if check.find is None or not check.key or check.optional:
            continue
        match = _ARG.match(check.key.strip()) or _BY_FIELD.search(check.key.strip())
        kind = collections.get(check.in_ or "") or (check.in_ if check.in_ in kinds else None)
        if match and kind:
            found.append((match.group(1), kind, check.find == "target"))
    found.sort(key=lambda f: not f[2])
    return [(a, k) for a, k, _ in found]


#: A family rule's lookup of a record by what the call names, refused below when it finds none:
#: `el: element_key(coll('element'), arg_ref)` (the browser card: a ref, a selector or an accessible name).
_LOCATOR = re.compile(r"""^\w+_key\(coll\(['"](\w+)['"]\), (\w+)\)$""")


def _located(rule: Any) -> dict[str, str]:
    """Argument -> the kind of the record the rule locates by it (`_LOCATOR`) and refuses the call without
    (`fail: el is None`): the argument names that record, whatever its own name says (`target`, `selector`)."""
    aliases: dict[str, str] = {}
    located: dict[str, tuple[str, str]] = {}
    refused: set[str] = set()
    for check in rule.check:
        for name, expr in (check.let or {}).items():
            text = str(expr).strip()
            arg, locator = _ARG.match(text), _LOCATOR.match(text)
            if arg:
                aliases[name] = arg.group(1)
            elif locator and locator.group(2) in aliases:
                located[name] = (aliases[locator.group(2)], locator.group(1))
        if check.fail and re.fullmatch(r"\s*(\w+) is None\s*", check.fail):
            refused.add(check.fail.split()[0])
    return {arg: kind for name, (arg, kind) in located.items() if name in refused}


#: A write on every record a filter matches (`delete-many`, `bulk_update`), not on the record its id names.
_ON_MATCHES = re.compile(r"(^|[_\-])(many|all|bulk|batch)($|[_\-])", re.I)
_MATCH_ARGS = frozenset({"filter", "filters", "where", "query", "match"})
#: A find by a field's value, else by the key given, as `infer.found_by_field` writes it:
#: `([k for k, v in coll.items() if ... args['x'] ...] + [args['x']])[0]`.
_BY_FIELD = re.compile(r"""\+ \[args\[['"]([^'"]+)['"]\]\]\)\[0\]$""")
_FIELD_READ = re.compile(r"""v\.get\(['"]([^'"]+)['"]\)""")


def _by_field(rule: Any) -> dict[str, tuple[str, ...]]:
    """Argument -> the fields its rule finds a record by (`norm(v.get('name')) == norm(args['database'])`)."""
    out: dict[str, tuple[str, ...]] = {}
    for check in rule.check:
        match = _BY_FIELD.search((check.key or "").strip()) if check.find else None
        if match:
            out[match.group(1)] = tuple(_FIELD_READ.findall(check.key or ""))
    return out


#: Words of an action that only reads: such a call whose rule reads the record it names looks at it. Any other
#: action a service carries out, whatever the world keeps of it (`application-stop`, `reserve_item`,
#: `power-off-droplet`), is never a look: no plan may call it to look something up.
_READS = re.compile(
    r"(^|_)(read|reader|get|scrape|crawl|extract|analy[sz]e|analysis|classify|summari[sz]e|summary|transcribe|"
    r"screenshot|snapshot|export|describe|inspect|validate|sample|outline|info|one|metadata|stats|explain|"
    r"compare|preview|lookup|resolve|detect|parse|evaluate|estimate|calculate|compute|query|view|show|download|"
    r"fetch|look|probe|scan|usage|overview|comments|vision|audit|diff|search|find|list|count|status|details?|"
    r"history|logs?|check|verify|lint)(_|$)")


def _use(tool: ToolSpec, op: str, names_record: bool, read_only: bool = False, writes: bool = False) -> str | None:
    """What the tool does to the record it names; an action whose rule only reads it (`jina_reader(url)`,
    `scrape(url)`) looks at it where its name says it reads (`_READS`), never where it carries something out
    the world does not keep; one whose name reads as a get but whose rule writes the record
    (`browser_check(selector)` ticks a checkbox) changes it."""
    if op == "create":
        return "make"
    if not names_record:
        return None
    if (op == "get" and not writes) or (op == "action" and read_only and _READS.search(snake(tool.name)) is not None):
        return "look"
    if op == "delete" or _DESTRUCTIVE.search(snake(tool.name)):
        return "remove"
    if op in ("update", "action"):
        return "change"
    return None


def id_means(arg: str, kind: str, tool: ToolSpec) -> bool:
    """The argument names a record of `kind`: its own stem says so (`issueId`, `issue_number`), or, a bare
    `id`/`key`, the tool's name does (`get_issue(id)`). A time card's id is no task-board card's."""
    if snake(arg) == kind:  # `database` names a database (by its name)
        return True
    stem = id_entity(arg)
    if stem is None:
        key = snake(arg)
        words = key.split("_")
        stem = words[0] if len(words) == 2 and words[1] in ("number", "key", "name", "slug", "handle") else None
    if stem is not None:
        stem = singular_word(stem)
        tokens = [singular_word(w) for w in kind.split("_")]
        return same_entity(stem, kind) or stem in tokens or stem == kind.replace("_", "")
    return _noun(tool, kind) is not None or kind in {singular_word(w) for w in name_tokens(tool.name)}


def _fill(tool: ToolSpec, use: str, found: set[str],
          kept: Collection[str] = ()) -> tuple[tuple[str, ...], ...] | None:
    """(labels, texts, queries, plain) for the arguments beyond the records it names; None when a required
    one cannot be filled honestly. A change's `value` its rule writes into the record (`kept`: a field's
    `fill(selector, value)`) carries the goal's text."""
    schema = tool.input_schema or {}
    props: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    labels: list[str] = []
    texts: list[str] = []
    queries: list[str] = []
    plain: list[str] = []
    writes = use in ("make", "change")
    for name, prop in props.items():
        if name in found:
            continue
        key, prop = snake(name), prop if isinstance(prop, dict) else {}
        string = prop.get("type") in (None, "string") and "enum" not in prop
        if CREDENTIAL.search(key):
            if name in required:
                return None
        elif writes and LABEL.search(key) and string:
            labels.append(name)
        elif writes and (is_text_param(name) or (name in kept and _VALUE.search(key))) and string:
            texts.append(name)
        elif not writes and QUERY.search(key) and string and name in required:
            queries.append(name)
        elif name in required:
            if not _plain(key, prop):
                return None
            plain.append(name)
    if len(queries) > 1:
        return None
    if writes and SENDS.search(snake(tool.name)) and not any(RECIPIENT.search(snake(p)) for p in plain):
        plain.extend(_recipient(props)[:1])
    if use == "find" and not queries and verb_kind(tool.name) == "search":
        queries = _optional_query(props)
    return tuple(labels), tuple(texts), tuple(queries), tuple(plain)


def _recipient(props: dict[str, Any]) -> list[str]:
    """A send's optional address argument (`send_message(to?: [string])`, `send_invoice(invoice_id, to?)`):
    the person says whom it goes to, as the recipient rule asks, rather than a message sent to no one."""
    found = []
    for name, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        items = prop.get("items")
        item_type = items.get("type") if isinstance(items, dict) else None
        addresses = prop.get("type") in (None, "string") or (prop.get("type") == "array"
                                                             and item_type in (None, "string"))
        if RECIPIENT.search(snake(name)) and addresses and "enum" not in prop:
            found.append(name)
    return found


def _optional_query(props: dict[str, Any]) -> list[str]:
    """A search's query argument when none is required (`search_issues(query?)`): the plan searches for
    the record it names, as the search_finds rule asks, rather than listing with an empty query."""
    for name, prop in props.items():
        if QUERY.search(snake(name)) and isinstance(prop, dict) and prop.get("type") in (None, "string") \
                and "enum" not in prop:
            return [name]
    return []


def _required_beyond_plain(tool: ToolSpec) -> bool:
    schema = tool.input_schema or {}
    props = schema.get("properties") or {}
    return any(not _plain(snake(k), props.get(k) or {}) for k in schema.get("required") or [])


def date_args(tool: ToolSpec) -> list[str]:
    """The tool's date arguments (`check_in`, `start_date`, `due`), in schema order."""
    props = (tool.input_schema or {}).get("properties") or {}
    return [n for n, p in props.items() if isinstance(p, dict) and _takes_text(p) and (
            DATE.search(snake(n)) or p.get("format") in ("date", "date-time") or snake(n) in DATES)]


def _takes_text(prop: dict[str, Any]) -> bool:
    """The argument, or one branch of its `anyOf`/`oneOf`, takes a string: a date written as the request says
    it can be given. `due_date: anyOf [integer, null]` takes milliseconds (ClickUp), which no request states."""
    branches = prop.get("anyOf") or prop.get("oneOf") or [prop]
    types = [b.get("type") for b in branches if isinstance(b, dict)]
    return any(t is None or t == "string" or (isinstance(t, list) and "string" in t) for t in types)


def when_args(tool: ToolSpec) -> list[str]:
    """Date arguments that say when the thing happens (a start, a due date), not when a paper was made (an
    invoice date, an expiry): what a schedule sets."""
    return [n for n in date_args(tool) if _WHEN.search(snake(n)) and not _NOT_WHEN.search(snake(n))]


def noun_of(tool: ToolSpec, kind: str | None) -> str:
    """What the tool's name calls its record (`create_voice_agent` -> voice agent; a name that puts the verb
    last, `boond_contacts_create`, the words before it but the server's prefix), else the world kind."""
    from cworld.engine.cards.operations import verb_kind

    if kind:
        return kind.replace("_", " ")
    words = name_tokens(tool.name)
    verb = next((i for i, w in enumerate(words) if verb_kind(w) is not None), None)
    nouns = [w for i, w in enumerate(words) if verb is not None and i > verb and len(w) > 1]
    while nouns and nouns[0] in _STOP:
        nouns.pop(0)
    if not nouns and verb is not None:
        server = name_tokens(tool.server)  # `boond_` of boondmanager is the server's prefix, no noun
        nouns = [w for w in words[:verb] if len(w) > 1 and w not in _STOP
                 and not any(s.startswith(w) or w.startswith(s) for s in server)][-2:]
    if not nouns and SENDS.search(snake(tool.name)):
        return "message"  # `send(to, text)`: what it sends is a message
    return " ".join(singular_word(w) for w in nouns[:3]) if nouns else ""


_STOP = frozenset({"of", "for", "to", "the", "a", "an", "by", "in", "on", "with", "new", "safe", "mcp", "api", "v2"})


def verb_of(tool: ToolSpec) -> str:
    """The verb the tool's name starts with, as a person would say it (`close_issue` -> close)."""
    from cworld.engine.cards.operations import verb_kind

    words = name_tokens(tool.name)
    known = next((w for w in words if verb_kind(w) is not None and len(w) > 2), None)
    if known is not None:
        return known
    server = set(name_tokens(tool.server))  # `clawnx_block_user` on clawnch: the prefix is no verb
    return next((w for w in words if not any(w in s or s in w or w[:4] == s[:4] for s in server)), "update")
