"""Filling a tool's arguments by schema matching: from earlier results and from the facts of the request.

- An id-like argument (`card_id`, `token`, `person_ids`, `to` described as "contact ids") is looked up in
  earlier results: every item holding a field of that name (or the `X_id` its description names), the one
  whose other fields best match the intent's names and quoted strings winning, results of the same server
  and later results first.
- What the person dictates wins over anything composed: a title argument takes the record's dictated
  name (`titled "..."`), a text argument its dictated text (`saying "..."`), an argument named like a
  stated value takes it (`rate '92'` -> `rate`, `due date 2026-07-18` -> `due_date`); such values are sent
  even when optional, as the person asked for them.
- Anything else comes from the request: credentials by label, e-mail addresses, search words from the
  intent's names, amounts and counts by unit, dates (the year from dates seen in results), currency codes,
  enum values by word overlap, titles from quoted strings, message bodies composed by the agent.

Only the tool's schema (names, types, descriptions, enums) and what the agent observed are used.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any, Literal

from cworld.agents.intents import Facts, Intent, Rule, words_of
from cworld.agents.schedule import MOMENTS, fits_room, open_time, room_size, slot_moment
from cworld.data_model import ToolSpec

_ID_WORDS = re.compile(r"\b([a-z]+) ids?\b")
_ISO_YEAR = re.compile(r"\b(20\d\d)-\d\d-\d\d")
_SEARCH_ARGS = {"query", "q", "search", "keyword", "keywords", "term", "company", "name", "text_query", "symbol_or_name"}
_TEXT_ARGS = {"text", "body", "message", "content", "comment", "memo", "note", "notes", "summary", "description"}
_TITLE_ARGS = {"title", "subject", "name", "label", "heading"}
_TITLE_WORDS = _TITLE_ARGS | {"summary", "headline", "caption"}
"""The last word of an argument that takes a dictated title (`display_name`, `FileName`, an event's summary)."""
_TEXT_WORDS = (_TEXT_ARGS - {"summary"}) | {"description", "markdown", "prompt"}
_DATE_WORDS = {"date", "due", "start", "deadline", "when", "day", "departure", "depart", "at", "remind"}
_ORIGIN_WORDS = {"from", "origin", "source", "departure"}
_DESTINATION_WORDS = {"to", "destination", "arrival", "dest"}

Pick = Literal["matched", "latest"]
"""How an id is chosen among earlier results: the item matching the intent's names best, or the latest one."""


@dataclass
class Record:
    """One usable result the agent observed."""

    tool: str
    payload: Any

    @property
    def server(self) -> str:
        return self.tool.split("/", 1)[0]


@dataclass
class FillContext:
    memory: list[Record]
    facts: Facts
    """Facts of the whole request (credentials stated in another sentence than the one that needs them)."""
    reads_results: bool = True
    compose: Callable[[Intent], str] = lambda intent: intent.text
    excluded: dict[str, set[str]] = field(default_factory=dict)
    """argument -> values an error message ruled out."""
    pick: Pick = "matched"
    optional: bool = True
    """Whether optional arguments it can fill confidently are sent too (else only the required ones)."""
    rules: list[Rule] = field(default_factory=list)
    """The request's rules for picking one record (`the one with the earliest created at`), any clause's."""


def properties(spec: ToolSpec) -> dict[str, dict[str, Any]]:
    return dict((spec.input_schema or {}).get("properties", {}) or {})


def required(spec: ToolSpec) -> list[str]:
    return list((spec.input_schema or {}).get("required", []) or [])


def fill(spec: ToolSpec, intent: Intent, ctx: FillContext) -> tuple[dict[str, Any], list[str]]:
    """The arguments the agent can fill, and the required ones it could not."""
    args: dict[str, Any] = {}
    needed = required(spec)
    props = properties(spec)
    said = dictation(spec, intent.facts)
    number = _tally(ctx) if any(isinstance(v, str) and _NUMBER_SLOT.match(v) for v in said.values()) else None
    if number is not None:  # "saying "N records have ...", with N the number": the agent counts
        said = {k: _NUMBER_SLOT.sub(str(number), v, count=1) if isinstance(v, str) else v for k, v in said.items()}
    found = _worked_out(ctx) if ctx.facts.letters else {}
    if found:  # "saying "Triage: X was picked", with X the name of the one the rule picks"
        said = {k: _LETTER.sub(lambda m: found.get(m.group(0), m.group(0)), v) if isinstance(v, str) else v
                for k, v in said.items()}
    timed = open_time(intent, props)
    if "room_id" in props and "room" in intent.words and not spec.is_read_only:
        needed = [*needed, "room_id"]  # "book it with a room": the room is asked for
    for name, prop in props.items():
        if name in ("cc", "bcc") and name not in needed and not intent.words & {"cc", "bcc", "copy"}:
            continue  # nobody is copied in unless the person says so
        if timed and name in MOMENTS:  # no time of day given: the earliest free slot that day
            value = slot_moment(ctx.memory, intent, name) if ctx.reads_results else None
        else:
            value = fill_one(spec, name, prop, intent, ctx, said.get(name), own_server=name not in needed)
        if value is not None and (name in needed or name in said or (ctx.optional and _confident(name, prop))):
            args[name] = value
    return args, [n for n in needed if n not in args]


def dictation(spec: ToolSpec, facts: Facts) -> dict[str, Any]:
    """The tool's arguments the person dictated: the title (required title arguments, else the first one),
    the text likewise, and arguments whose words end a stated value's name (`due date` -> `due_date`)."""
    props = properties(spec)
    needed = set(required(spec))
    out: dict[str, Any] = {}
    for values, kinds in ((facts.titled, _TITLE_WORDS), (facts.saying, _TEXT_WORDS)):
        names = [n for n in props if _arg_words(n)[-1:] and _arg_words(n)[-1] in kinds and n not in out
                 and not id_like(n, props[n])]
        chosen = [n for n in names if n in needed] or names[:1]
        if values:
            out.update(dict.fromkeys(chosen, values[0]))
    for name, prop in props.items():
        words = _arg_words(name)
        if name in out or not words or id_like(name, prop) and not name.endswith(("date", "time")):
            continue
        for phrase, value in facts.fields.items():
            if phrase.split()[-len(words):] == words:
                out[name] = value
                break
    return out


_NUMBER_SLOT = re.compile(r"^N(?= )")
_LETTER = re.compile(r"(?<![\w'])[A-Z](?![\w'])")
_LABELS = ("name", "title", "subject", "label", "display_name", "summary")


def _worked_out(ctx: FillContext) -> dict[str, str]:
    """What each dictated letter stands for, from what the agent has read: the name of the record the
    request's rule picks in the latest list that holds the rule's field, or a field's value in the latest
    answer that shows it. A letter the agent cannot work out stays as it is."""
    out: dict[str, str] = {}
    for letter, what in ctx.facts.letters.items():
        value = _picked_name(ctx) if what == "picked" else _latest_field(ctx, what.split())
        if value is not None:
            out[letter] = value
    return out


def _picked_name(ctx: FillContext) -> str | None:
    for record in reversed(ctx.memory):
        for items in _lists_in(record.payload):
            at = next((i for r in ctx.rules if (i := ruled(items, r)) is not None), None)
            if at is not None:
                name = next((items[at][k] for k in _LABELS if isinstance(items[at].get(k), str)), None)
                if name:
                    return str(name)
    return None


def _latest_field(ctx: FillContext, wanted: list[str]) -> str | None:
    for record in reversed(ctx.memory):
        for item in _records_in(record.payload):
            key = next((k for k in item if _arg_words(k) == wanted), None)
            if key is not None and isinstance(item[key], str | int | float) and not isinstance(item[key], bool):
                return str(item[key])
    return None


def _nested(value: Any) -> Iterator[Any]:
    """Every dict and list inside an answer (itself included), the outermost first."""
    if isinstance(value, dict | list):
        yield value
        for child in value.values() if isinstance(value, dict) else value:
            yield from _nested(child)


def _records_in(value: Any) -> Iterator[dict[str, Any]]:
    """Every record (dict) inside an answer, the outermost first."""
    return (node for node in _nested(value) if isinstance(node, dict))


def _tally(ctx: FillContext) -> int | None:
    """How many listed records hold the value the request asks about (`how many ... have state 'ACTIVE'`),
    counted in the latest answer that lists records with that field."""
    if ctx.facts.tally is None or not ctx.reads_results:
        return None
    wanted, value = ctx.facts.tally[0].split(), ctx.facts.tally[1].lower()
    for record in reversed(ctx.memory):
        for items in _lists_in(record.payload):
            key = next((k for k in items[0] if _arg_words(k) == wanted or k.lower() == "".join(wanted)), None)
            if key is not None:
                return sum(str(i.get(key, "")).lower() == value for i in items)
    return None


def _lists_in(value: Any) -> Iterator[list[dict[str, Any]]]:
    """Every list of records inside an answer, the outermost first."""
    return (node for node in _nested(value) if isinstance(node, list) and node
            and all(isinstance(v, dict) for v in node))


def _arg_words(name: str) -> list[str]:
    """An argument's name as lower-case words: `dueDate`, `due_date` -> [due, date]."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").replace("-", " ").lower().split()


def fill_one(spec: ToolSpec, name: str, prop: dict[str, Any], intent: Intent, ctx: FillContext,
             said: Any = None, own_server: bool = False) -> Any:
    """One argument's value; `own_server`: an id is copied only from the tool's own server's answers (an
    optional id is a reference within the service, never a mail thread's id sent to a chat post)."""
    kind = _type(prop)
    is_id = id_like(name, prop)
    value = said
    if value is None and name in _SEARCH_ARGS and intent.facts.names and _PERSON.search(f"{spec.name} {spec.description}".lower()):
        value = _unfound(intent.facts.names, ctx)  # a people search looks for a person the clause names
    if value is None and ctx.reads_results and is_id and _type(prop) == "array" and len(intent.facts.names) > 1 \
            and _PERSON.search(f"{name} {prop.get('description', '')}".lower()):
        return _each_named(spec, name, prop, intent, ctx)
    if value is None and ctx.reads_results and is_id:
        value = from_results(spec, name, prop, intent, ctx, own_server)
    if value is None and ctx.reads_results and name in SECRETS:
        value = secret_in(ctx.memory, name)
    if value is None:
        value = from_request(name, prop, intent, ctx, is_id)
    ruled_out = ctx.excluded.get(name, set())
    if value is None or str(value) in ruled_out or str([value]) in ruled_out:
        return None
    quoted = intent.facts.quoted
    if kind == "array" and isinstance(value, str) and value in quoted and not is_id:
        return quoted[quoted.index(value):]  # "with the items 'Confirm details', 'Close out'": all of them
    if kind == "array" and not isinstance(value, list):
        return [value]
    return _coerce(value, kind)


# --- earlier results -------------------------------------------------------------------------------
def result_keys(name: str, prop: dict[str, Any]) -> list[str]:
    """The result fields an argument may be copied from: its own name, its singular, the ids it describes."""
    keys = [name]
    if name.endswith("_ids"):
        keys.append(name[:-1])
    described = _ID_WORDS.findall(str(prop.get("description", "")).lower())
    keys += [f"{word}_id" for word in described if word not in ("an", "the", "own", "of")]
    return list(dict.fromkeys(keys))


def from_results(spec: ToolSpec, name: str, prop: dict[str, Any], intent: Intent, ctx: FillContext,
                 own_server: bool = False) -> Any:
    keys = result_keys(name, prop)
    ruled_out = ctx.excluded.get(name, set())
    best: tuple[int, float, int, int] | None = None
    value: Any = None
    rules = [r for r in (intent.rule, *ctx.rules) if r is not None]
    for index, record in enumerate(ctx.memory):
        holders = list(_holders(record.payload, keys))
        picked = next((i for r in rules if (i := ruled([item for item, _ in holders], r)) is not None), None)
        for position, (item, key) in enumerate(holders):
            candidate = item[key]
            if str(candidate) in ruled_out or isinstance(candidate, dict | list) or candidate in (None, ""):
                continue
            same = record.server == spec.server
            if (name == "token" or own_server) and not same or not names_fit(name, prop, item, intent):
                continue
            if name == "room_id" and not fits_room(item, intent) or not kind_fits(name, item, intent):
                continue
            fit = match_score(item, intent) if ctx.pick == "matched" else 0.0
            fit += 10.0 if position == picked else 0.0
            fit -= room_size(item) if name == "room_id" else 0.0  # the smallest room that seats everyone
            rank = (int(same), fit, index, -position)
            if best is None or rank > best:
                best, value = rank, candidate
    return value


_PERSON = re.compile(r"^(to|cc|bcc)$|user|person|member|contact|attendee|recipient|assignee|payee|guest|invitee")


def names_fit(name: str, prop: dict[str, Any], item: dict[str, Any], intent: Intent) -> bool:
    """An argument naming a person takes the id of someone the clause names (never my own profile's id, nor
    the first person a listing shows); a clause that names nobody puts no condition."""
    if not intent.facts.names or not _PERSON.search(f"{name} {prop.get('description', '')}".strip().lower()):
        return True
    texts = [str(v).lower() for v in item.values() if isinstance(v, str)]
    return any(n.lower() in t for n in intent.facts.names for t in texts)


def kind_fits(name: str, item: dict[str, Any], intent: Intent) -> bool:
    """An id of a kind the clause names by name ("in my Team folder" for `folder_id`, "the 'Ideas' watchlist")
    comes from a record that matches that name; a clause that names no such record puts no condition."""
    kind = name.removesuffix("_ids").removesuffix("_id")
    if kind == name or kind not in intent.words:
        return True
    said = [*intent.facts.quoted, *intent.facts.tags, *intent.facts.proper]  # what a record is called, not people
    named = [e for e in said if re.search(rf"{re.escape(e)}'?\s+{re.escape(kind)}\b|\b{re.escape(kind)}\s+[#']?"
                                          rf"{re.escape(e)}", intent.text, re.IGNORECASE)]
    if not named:
        return True
    texts = [str(v).lower() for v in item.values() if isinstance(v, str)]
    return any(e.lower() in t or (len(t) > 3 and t in e.lower()) for e in named for t in texts)


def holds_all(payloads: list[Any], name: str, intent: Intent) -> bool:
    """Whether the answers hold a fitting value for argument `name` for every person the clause names (a
    meeting with two guests needs both looked up), else for the clause as a whole."""
    if len(intent.facts.names) > 1 and _PERSON.search(name):
        ones = [replace(intent, facts=replace(intent.facts, names=[n])) for n in intent.facts.names]
        return all(any(holds(p, name, one) for p in payloads) for one in ones)
    return any(holds(p, name, intent) for p in payloads)


def holds(value: Any, name: str, intent: Intent) -> bool:
    """Whether an answer holds a value for argument `name` that fits the clause (its person, if it names one)."""
    return any(names_fit(name, {}, item, intent) and kind_fits(name, item, intent)
               for item, _ in _holders(value, result_keys(name, {})))


def _unfound(names: list[str], ctx: FillContext) -> str:
    """The first name the clause gives that no answer read so far shows (the next person to look up)."""
    seen = " ".join(str(r.payload) for r in ctx.memory).lower()
    return next((n for n in names if n.lower() not in seen), names[0])


def _each_named(spec: ToolSpec, name: str, prop: dict[str, Any], intent: Intent, ctx: FillContext) -> Any:
    """Ids of every person the clause names ("with Nicholas Carter and Benjamin Suzuki"), or None while one
    is still to be looked up."""
    out = []
    for person in dict.fromkeys(intent.facts.names):
        one = replace(intent, facts=replace(intent.facts, names=[person]))
        value = from_results(spec, name, prop, one, ctx)
        if value is None:
            return None
        out.append(value)
    return out


SECRETS = {"password", "passcode", "pin", "code"}
"""Arguments a person may only have been told in a message ("The password is maple-orbit-42")."""


def secret_in(memory: list[Record], name: str) -> str | None:
    """The secret a message the agent read states (`The password is X`, `password: X`), the latest first."""
    said = re.compile(rf"\b{name}\s*(?:is|:)\s*([^\s,;]+)", re.IGNORECASE)
    for record in reversed(memory):
        for text in _texts(record.payload):
            found = said.search(text)
            if found and found.group(1).rstrip(".!?'\")").lower() not in ("somewhere", "in", "the", "a"):
                return found.group(1).rstrip(".!?'\")")
    return None


def _texts(value: Any) -> Iterator[str]:
    """Every string inside an answer."""
    for node in _nested(value):
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, str):
                yield child


def ruled(items: list[dict[str, Any]], rule: Rule) -> int | None:
    """The position of the item a stated rule picks (the earliest `created at`, the highest priority, the
    cheapest within a limit), or None when the items do not hold the field it names."""
    wanted = rule.field.split()
    field_name = next((k for k in (items[0] if items else {}) if _arg_words(k) == wanted
                       or k.lower() == "".join(wanted)), None)
    if field_name is None:
        return None
    values = [(item.get(field_name), i) for i, item in enumerate(items)]
    numbers = [(v, i) for v, i in values if isinstance(v, int | float) and not isinstance(v, bool)]
    texts = [(v, i) for v, i in values if isinstance(v, str) and v]
    if rule.limit is not None:
        numbers = [(v, i) for v, i in numbers if v <= rule.limit]
        return max(numbers)[1] if numbers else None
    pool: list[tuple[Any, int]] = list(numbers) if numbers else list(texts)
    if len(pool) < 2:
        return None
    ordered = sorted(pool, key=lambda p: (p[0], -p[1]))
    return ordered[-1][1] if rule.highest else ordered[0][1]


def _holders(value: Any, keys: list[str]) -> Iterator[tuple[dict[str, Any], str]]:
    """Every dict inside `value` with one of `keys`, depth first, in order."""
    for record in _records_in(value):
        key = next((k for k in keys if k in record), None)
        if key is not None:
            yield record, key


def match_score(item: dict[str, Any], intent: Intent) -> float:
    """How well an item fits the intent: an exact name 3, a contained one 2, else the share of shared words."""
    texts = [str(v).lower() for v in item.values() if isinstance(v, str)]
    score = 0.0
    for entity in intent.facts.entities():
        low = entity.lower()
        if low in texts:
            score = max(score, 3.0)
        elif any(low in t or (len(t) > 3 and t in low) for t in texts):
            score = max(score, 2.0)
    words = set().union(*(words_of(t) for t in texts)) if texts else set()
    return score + len(words & intent.words) / (len(intent.words) or 1)


# --- the request ------------------------------------------------------------------------------------
def from_request(name: str, prop: dict[str, Any], intent: Intent, ctx: FillContext, id_like: bool = False) -> Any:
    """A value the request states; an id-like argument takes only a labelled one (an id is never a name)."""
    facts, every = intent.facts, ctx.facts
    tokens = set(name.lower().split("_"))
    kind = _type(prop)
    description = str(prop.get("description", "")).lower()
    if prop.get("enum"):
        return _enum(prop["enum"], intent)
    if kind == "boolean":
        words = tokens - {"only", "include", "is", "has", "with"}
        return True if words and words <= intent.words else None
    for label in (name, name.removesuffix("_id"), name.replace("_", " ")):
        if label in facts.labelled or label in every.labelled:
            return facts.labelled.get(label) or every.labelled[label]
    if "email" in tokens or (name in ("login", "username", "user") and every.emails):
        emails = facts.emails or every.emails
        return emails[0] if emails else None
    if id_like:
        return None
    if kind in ("integer", "number"):
        return _cap(tokens, description, every) if tokens & {"max", "maximum"} else _number(tokens, description, facts)
    if "currency" in tokens:
        return _currency(tokens, facts)
    if tokens & _DATE_WORDS or "yyyy-mm-dd" in description:
        return _date(name, description, facts, ctx)
    if "channel" in tokens and facts.tags:
        return facts.tags[0]
    places = facts.proper
    if tokens & {"city", "location", "place"} and (places or facts.names):
        return (places or facts.names)[0]
    if tokens & _ORIGIN_WORDS and places:
        return places[0]
    if tokens & _DESTINATION_WORDS and len(places) > 1:
        return places[1]
    if name in _TEXT_ARGS:
        return ctx.compose(intent)
    if name in _SEARCH_ARGS or "search" in description or "words to find" in description:
        entities = facts.entities()
        return entities[0] if entities else None
    if name in _TITLE_ARGS:
        return facts.quoted[0] if facts.quoted else _title(intent)
    return None


_ENUM_WORDS = {"viewer": {"read", "view"}, "editor": {"edit"}, "commenter": {"comment"}}
"""Words a person uses for an access role ("read only", "can edit")."""


def _enum(values: list[Any], intent: Intent) -> Any:
    """The value whose words the clause uses (or, for a role, the words a person says for it)."""
    scored = [(len((words_of(str(v)) | _ENUM_WORDS.get(str(v).lower(), set())) & intent.words), -i, v)
              for i, v in enumerate(values)]
    best = max(scored, default=(0, 0, None))
    return best[2] if best[0] > 0 else None


def _number(tokens: set[str], description: str, facts: Facts) -> float | int | None:
    if tokens & {"amount", "price", "total", "sum", "value"} and facts.amounts:
        return facts.amounts[0]
    stems = {t[:4] for t in tokens} | {w[:4] for w in re.findall(r"[a-z]+", description)[:6]}
    for number, unit in facts.counts:
        if unit[:4] in stems and unit[:4] in {t[:4] for t in tokens}:
            return number
    return None


def _cap(tokens: set[str], description: str, facts: Facts) -> float | None:
    """A `max_*` argument takes the limit the person set on what it measures (`max_rate`, "highest nightly
    rate": "without paying more than 243.10 a night"), matched by word stems."""
    words = (tokens | words_of(description)) - {"max", "maximum", "highest", "the", "a", "of", "per"}
    stems = {w[:4] for w in words if len(w) > 3}
    return next((amount for amount, said in facts.caps if stems & {w[:4] for w in said if len(w) > 3}), None)


def _currency(tokens: set[str], facts: Facts) -> str | None:
    if not facts.currencies:
        return None
    if tokens & {"from", "source", "base"}:
        return facts.currencies[-1] if len(facts.currencies) > 1 else None
    return facts.currencies[0]


def _date(name: str, description: str, facts: Facts, ctx: FillContext) -> str | None:
    if not facts.dates:
        return None
    ends = bool(set(name.lower().split("_")) & {"out", "end", "until", "return"})
    when = facts.dates[1] if ends and len(facts.dates) > 1 else facts.dates[0]
    year = when.year or next(iter(ctx.facts.years), None) or _year_seen(ctx.memory)  # the person's own dates first
    if year is None:
        return None
    day = f"{year:04d}-{when.month:02d}-{when.day:02d}"
    nights = next((n for n, unit in facts.counts if unit in ("nights", "night")), None)
    if ends and len(facts.dates) == 1 and nights:  # "from Monday 6 April for 3 nights"
        day = (date.fromisoformat(day) + timedelta(days=nights)).isoformat()
    if ("yyyy-mm-dd" in description and "t" not in description.split("yyyy-mm-dd", 1)[1][:2]) or name == "date":
        return day
    return f"{day}T{when.hour or 17:02d}:{when.minute:02d}"


def _year_seen(memory: list[Record]) -> int | None:
    """The year of the user's world, from the dates in what the tools answered (the latest wins ties)."""
    years: dict[int, int] = {}
    for record in memory:
        for year in _ISO_YEAR.findall(str(record.payload)):
            years[int(year)] = years.get(int(year), 0) + 1
    return max(years, key=lambda y: (years[y], y)) if years else None


def _title(intent: Intent) -> str:
    words = intent.text.rstrip(".!?").split()
    return "Follow up: " + " ".join(words[:8])


def _confident(name: str, prop: dict[str, Any]) -> bool:
    """An optional argument worth sending: ids, dates, counts, enums and search words, not free text."""
    return name not in _TEXT_ARGS


def id_like(name: str, prop: dict[str, Any]) -> bool:
    """An argument that takes an id copied from a result; a search's words never do ("words from a name")."""
    description = str(prop.get("description", "")).lower()
    if name in _SEARCH_ARGS and not name.endswith(("_id", "_ids")):
        return False
    return (name.endswith(("_id", "_ids")) or name in ("token", "symbol", "handle", "code", "to", "from")
            or bool(_ID_WORDS.search(description)) or "from " in description)


def _type(prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    if kind is None:
        kinds = [p.get("type") for p in prop.get("anyOf", []) if p.get("type") != "null"]
        kind = kinds[0] if kinds else "string"
    return str(kind)


def _coerce(value: Any, kind: str) -> Any:
    try:
        if kind == "integer":
            return int(float(value))
        if kind == "number":
            return float(value)
    except (TypeError, ValueError):
        return None
    if kind == "string" and not isinstance(value, str):
        return str(value)
    return value
