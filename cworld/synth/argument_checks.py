"""Arguments valid by meaning (issue 34, item 3): rules every harvested-pool draft (offline or LLM) is held to.

A schema says a `check_out` is a string; a person knows it comes after the `check_in`. These rules read
each plan step's arguments by what they mean, and each failed rule is an `Issue` whose message says what
to change (so it is the revision's feedback):

- *date_order*: a range is ordered (an end, a check-out, a `to` date not before its start), and where
  something is booked or scheduled (a write, or a tool whose name books, reserves or schedules) its dates
  are not before the world's today;
- *id_kind*: an id argument takes an id of the kind it names, read off the step that found it: a
  `card_id` filled from `list_time_cards` is a time card's id, not a card's;
- *recipient*: a step that sends a message fills an argument saying to whom (an address, a channel, a
  thread), and an address the plan states is one the request states;
- *upload_content*: a step that uploads or writes a file fills the content it holds, not only a name;
- *search_finds*: a search whose answer a later step picks a record from by name searched for that
  name (a search never finds what it did not ask for).
"""

from __future__ import annotations

import re
from datetime import date
from typing import TYPE_CHECKING, Any

from cworld.data_model.references import REFERENCE
from cworld.engine.cards.operations import name_tokens, singular_word, verb_kind
from cworld.synth.offline.schema_links import id_entity, same_entity
from cworld.synth.offline.schema_values import snake

if TYPE_CHECKING:
    from cworld.data_model import PlanStep, ToolSpec
    from cworld.synth.checks import CheckReport
    from cworld.synth.draft import Draft
    from cworld.synth.toolset import ToolUniverse

#: (start, end) argument stems of a range: the end must not come first.
RANGES = (("start", "end"), ("check_in", "check_out"), ("checkin", "checkout"), ("from", "to"),
          ("begin", "end"), ("departure", "return"), ("arrival", "departure"), ("since", "until"),
          ("start", "due"))
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}")
_BOOKS = re.compile(r"(^|_)(book|books|booking|reserve|reservation|schedule|appointment|event|meeting|rsvp|hold)(_|$)")
SENDS = re.compile(r"(^|_)(send|reply|forward|email|mail|message|dm|notify|sms)(_|$)")
"""A tool that sends something to someone: it needs its recipient."""
_TO = re.compile(r"(^|_)(to|cc|bcc|recipient|recipients|email|emails|to_email|channel|channel_id|chat_id|user_id|"
                 r"thread_id|conversation_id|phone|phone_number|number|target|room_id|group_id|address)$")
_UPLOADS = re.compile(r"(^|_)(upload|write|put|save|attach|create_file|add_file)(_|$)")
_CONTENT = re.compile(r"(^|_)(content|contents|body|data|file_content|text|base64|bytes|source|file|url)$")
_QUERY = re.compile(r"(^|_)(query|q|search|search_query|keywords?|term|terms|search_term|text_query)$")
_SELECTOR = re.compile(r"\{\{\s*([A-Za-z0-9_\-]+)\.[^}\[]*\[([A-Za-z0-9_]+)=([^\]]+)\]")
_GENERIC_LISTS = frozenset({"items", "results", "result", "data", "records", "list", "entries", "rows", "values"})


def check_arguments(draft: Draft, universe: ToolUniverse, report: CheckReport) -> None:
    """The five rules above, on every step of the draft's plan."""
    steps = {s.id: s for s in draft.gold_plan}
    today = _today(draft)
    problems: dict[str, list[str]] = {}
    for step in draft.gold_plan:
        spec = universe.tools.get(step.tool)
        if spec is None:
            continue
        for code, found in (("date_order", date_problems(step, spec, today)),
                            ("id_kind", id_problems(step, spec, steps, universe)),
                            ("recipient", recipient_problems(step, spec, draft.query)),
                            ("upload_content", upload_problems(step, spec)),
                            ("search_finds", search_problems(step, steps, universe))):
            problems.setdefault(code, []).extend(found)
    for code, found in problems.items():
        if found:
            report.add("arguments", code, f"{_ADVICE[code]}: {'; '.join(found[:3])}")


_ADVICE = {
    "date_order": "dates must make sense: a range ends after it starts, and what is booked or scheduled is "
                  "not in the past of the world's today",
    "id_kind": "an id argument takes an id of the kind it names, found by a step that lists that kind",
    "recipient": "a message needs its recipient (an address, a channel or a thread), and an address the plan "
                 "uses must be one the request states",
    "upload_content": "an upload or a file write needs the content it holds, not only a name",
    "search_finds": "a search must ask for what the plan then picks from its answer: search for that name",
}


def _today(draft: Draft) -> date | None:
    text = str(getattr(draft.scenario, "today", "") or "")
    try:
        return date.fromisoformat(text[:10]) if _ISO.match(text) else None
    except ValueError:
        return None


def _day(value: Any) -> date | None:
    if isinstance(value, str) and _ISO.match(value) and not REFERENCE.search(value):
        try:
            return date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None


def _books(spec: ToolSpec) -> bool:
    return bool(_BOOKS.search(snake(spec.name))) or spec.category in ("travel", "service_bookings", "calendar")


def date_problems(step: PlanStep, spec: ToolSpec, today: date | None) -> list[str]:
    days = {snake(k): (k, d) for k, v in step.arguments.items() if (d := _day(v)) is not None}
    found = []
    for start, end in RANGES:
        first = next((v for k, v in days.items() if _stem_is(k, start)), None)
        last = next((v for k, v in days.items() if _stem_is(k, end)), None)
        if first and last and last[1] < first[1]:
            found.append(f"{step.id}: {last[0]} {last[1]} is before {first[0]} {first[1]}")
    writes = not spec.is_read_only and verb_kind(spec.name) not in ("get", "list", "search")
    if today is not None and (writes or _books(spec)) and _books(spec):
        found += [f"{step.id}: {name} {day} is before today ({today})" for name, day in days.values() if day < today
                  and not re.search(r"birth|dob|issued|created|since|from_date", snake(name))]
    return found


def ends_range(name: str) -> bool:
    """The argument is the end of a range (an end, a check-out, a due date): a draft fills it after the
    range's start, whatever order the schema lists them in (`dueDate` before `start`)."""
    key = snake(name)
    return any(_stem_is(key, end) for _, end in RANGES) and not any(_stem_is(key, start) for start, _ in RANGES)


def _stem_is(key: str, stem: str) -> bool:
    return key == stem or key.startswith(stem + "_") or key.endswith("_" + stem) or key == f"{stem}_date"


def id_problems(step: PlanStep, spec: ToolSpec, steps: dict[str, PlanStep], universe: ToolUniverse) -> list[str]:
    found = []
    for arg, value in step.arguments.items():
        if not isinstance(value, str) or not REFERENCE.search(value):
            continue
        source = _source_noun(value, steps, universe)
        if not takes_kind(arg, spec, source):
            stem = str(id_stem(arg, spec))
            found.append(f"{step.id}: {arg} takes a {stem.replace('_', ' ')} id, but {value} is a "
                         f"{str(source).replace('_', ' ')}'s")
    return found


def id_stem(arg: str, spec: ToolSpec) -> str | None:
    """The kind an id argument names: its own stem (`card_id`), or for a bare `id` what the tool acts on."""
    return id_entity(arg) or (_noun(spec) if snake(arg) in ("id", "ids") else None)


def takes_kind(arg: str, spec: ToolSpec, source: str | None) -> bool:
    """The id_kind rule: `spec`'s argument `arg` may take an id of a `source` record (the list it was picked
    from, or what the tool that answered it lists). The sampler chooses finders by it too, so a draw whose
    finder lists another kind (`list_time_cards` for a `card_id`) is not composed only to be refused."""
    stem = id_stem(arg, spec)
    return stem is None or not source or _same_kind(stem, source)


def listed_kind(spec: ToolSpec) -> str | None:
    """What a list read's answer holds by its name (`list_time_cards` -> time_card), as the rule reads it."""
    return _noun(spec)


def _noun(spec: ToolSpec) -> str | None:
    """What a tool's name acts on: the words after its verb (`list_time_cards` -> time_card)."""
    words = name_tokens(spec.name)
    verb = next((i for i, w in enumerate(words) if verb_kind(w) is not None), None)
    nouns: list[str] = []
    for word in words[verb + 1:] if verb is not None else []:
        if word in _PREPOSITIONS:  # `list_files_in_scope` lists files
            break
        nouns.append(singular_word(word))
    return "_".join(nouns) or None


_PREPOSITIONS = frozenset({"in", "for", "by", "of", "from", "with", "on", "at", "to", "under", "within"})


def _source_noun(value: str, steps: dict[str, PlanStep], universe: ToolUniverse) -> str | None:
    """The kind a reference's value is of: the list it is picked from (`{{s1.time_cards[...]...}}`), else
    what the step that answered it lists (`list_time_cards`)."""
    match = re.search(r"\{\{\s*([A-Za-z0-9_\-]+)((?:\.[A-Za-z0-9_]+)*)", value)
    if match is None:
        return None
    parts = [p for p in match.group(2).split(".") if p and not p.isdigit()]
    lists = [p for p in parts if snake(p) not in _GENERIC_LISTS and not snake(p).endswith("id")]
    if lists:
        return singular_word(snake(lists[-1]))
    source = steps.get(match.group(1))
    spec = universe.tools.get(source.tool) if source is not None else None
    return _noun(spec) if spec is not None else None


def _same_kind(stem: str, source: str) -> bool:
    stem, source = singular_word(snake(stem)), singular_word(snake(source))
    if stem == source or same_entity(stem, source):
        return True
    head = source.rsplit("_", 1)[-1]
    # a compound names another kind (a time card is no card); the head alone is the same kind only when
    # the stem is the compound's own word (`issue` of `github_issue`: a qualifier naming the service)
    return head == stem and not _KINDED.search(source)


_KINDED = re.compile(r"^(time|credit|gift|report|rate|price|line|time_?card|sub|work|payment|tax|draft|"
                     r"template|test|saved|custom)_")


def recipient_problems(step: PlanStep, spec: ToolSpec, query: str) -> list[str]:
    name = snake(spec.name)
    if not SENDS.search(name) or verb_kind(spec.name) in ("get", "list", "search"):
        return []
    props = (spec.input_schema or {}).get("properties") or {}
    wanted = [k for k in props if _TO.search(snake(k))]
    if not wanted:
        return []
    filled = [k for k in wanted if step.arguments.get(k) not in (None, "", [])]
    if not filled:
        return [f"{step.id}: {spec.name} sends to no one ({', '.join(wanted[:3])} empty)"]
    found = []
    for k in filled:
        for value in _flat(step.arguments[k]):
            if "@" in value and not REFERENCE.search(value) and value.lower() not in query.lower():
                found.append(f"{step.id}: {k} {value!r} is not in the request")
    return found


def _flat(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


def upload_problems(step: PlanStep, spec: ToolSpec) -> list[str]:
    if not _UPLOADS.search(snake(spec.name)) or not re.search(r"file|upload|object|blob|document|attachment",
                                                              snake(spec.name) + " " + snake(spec.description[:80])):
        return []
    props = (spec.input_schema or {}).get("properties") or {}
    content = [k for k in props if _CONTENT.search(snake(k))]
    if not content:
        return []
    if not any(step.arguments.get(k) not in (None, "", [], {}) for k in content):
        return [f"{step.id}: {spec.name} gets no content ({', '.join(content[:3])} empty)"]
    return []


def search_problems(step: PlanStep, steps: dict[str, PlanStep], universe: ToolUniverse) -> list[str]:
    found = []
    for value in _flat_all(step.arguments):
        for source_id, _, picked in _SELECTOR.findall(value):
            source = steps.get(source_id)
            spec = universe.tools.get(source.tool) if source is not None else None
            if source is None or spec is None:
                continue
            queries = [str(v) for k, v in source.arguments.items() if _QUERY.search(snake(k)) and isinstance(v, str)]
            if verb_kind(spec.name) != "search" and not queries:
                continue
            wanted = picked.strip().lower()
            if not any(q.lower() in wanted or wanted in q.lower() for q in queries if q.strip()):
                shown = queries[0] if queries else "nothing"
                found.append(f"{step.id} picks '{picked}' from {source_id}, which searched for {shown!r}")
    return found


def _flat_all(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _flat_all(v)]
    if isinstance(value, list):
        return [s for v in value for s in _flat_all(v)]
    return [value] if isinstance(value, str) else []
