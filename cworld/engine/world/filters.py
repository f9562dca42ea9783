"""What a list or search call's arguments ask of a record, and how to make a record answer them.

`matches(record, args)` is the filter a list/search applies: query words, equality on the record's fields,
time windows (`start_date`/`end_date`, one `date`), ranges (`max_price`, `min_stars`, `min_capacity`) and
flags (`in_stock_only`, `overdue_only`, `unread_only`). `satisfy(record, args, ...)` is its inverse: it
changes a record nobody has seen yet so that it matches, which is how a grounded search gets a plausible
result (docs/world-engine.md, "Grounding"). Arguments a record has no field for are ignored by both:
paging, tokens, a hotel search's stay dates.
"""

from __future__ import annotations

import math
import random
import re
from datetime import datetime, timedelta
from typing import Any

from cworld.engine.cards.card import EntityType
from cworld.schemas.plausible import clock, surname

QUERY_ARGS = ("query", "q", "search", "keyword", "keywords", "term", "pattern", "text_query")
PAGE_ARGS = ("page", "page_size", "per_page", "limit", "offset", "max_results", "cursor", "count", "max_count",
             "start_index", "max_length", "sort", "sort_by", "order", "direction")
#: Arguments that bound a time window, and the record fields that hold a record's time.
AFTER_ARGS = ("start_date", "from_date", "after", "since", "date_from", "start_time", "time_min")
BEFORE_ARGS = ("end_date", "to_date", "before", "until", "date_to", "end_time", "time_max")
TIME_FIELDS = ("start", "starts_at", "date", "ts", "at", "departs_at", "depart_at", "created_at", "placed_at",
               "published_at", "due")
#: (start, end) field pairs kept in order: an event never ends before it starts.
TIME_PAIRS = (("start", "end"), ("starts_at", "ends_at"), ("departs_at", "arrives_at"), ("check_in", "check_out"),
              ("start_time", "end_time"), ("start_date", "end_date"), ("depart_at", "arrive_at"))
TIME_PAIRS_FLAT = frozenset(f for pair in TIME_PAIRS for f in pair)
_SQL = re.compile(r"^\s*(select|with|insert|update|delete|create|drop|alter|pragma)\b", re.IGNORECASE)
_RANGE = re.compile(r"^(?:(min|max)_(.+)|(.+)_(min|max))$")
_DAY = re.compile(r"^20\d\d-\d\d-\d\d$")
#: Text-like card field types, in the order a query's words are best written into.
_TEXT_KINDS = ("title", "name", "company", "text", "string", "word", "tag")


def skipped(key: str, value: Any) -> bool:
    """Arguments that never filter: paging, empty values, nested objects and lists."""
    return key in PAGE_ARGS or value in (None, "", []) or isinstance(value, dict | list)


def query_of(args: dict[str, Any]) -> str | None:
    """The free-text query of a call, unless it is SQL (a statement to run, not words to look for)."""
    found = next((args[k] for k in QUERY_ARGS if isinstance(args.get(k), str) and args[k].strip()), None)
    return None if found is None or _SQL.match(found) else found


def moment_of(record: dict[str, Any]) -> tuple[str, str] | None:
    """(field, ISO text) of the record's own time, if it has one."""
    return next(((f, str(record[f])) for f in TIME_FIELDS if isinstance(record.get(f), str) and record[f][:2] == "20"),
                None)


# --- matching ------------------------------------------------------------------------------------------
def matches(record: dict[str, Any], args: dict[str, Any]) -> bool:
    if not _in_window(record, args):
        return False
    return all(_holds(record, key, value) for key, value in args.items() if not skipped(key, value))


def _in_window(record: dict[str, Any], args: dict[str, Any]) -> bool:
    """Dates compare as ISO text: a record is in the window when its time is within the bounds given."""
    found = moment_of(record)
    if found is None:
        return True
    moment = found[1]
    after = next((str(args[k]) for k in AFTER_ARGS if isinstance(args.get(k), str)), None)
    before = next((str(args[k]) for k in BEFORE_ARGS if isinstance(args.get(k), str)), None)
    if after and moment[: len(after)] < after:
        return False
    return not (before and moment[: len(before)] > before)


def _holds(record: dict[str, Any], key: str, value: Any) -> bool:
    if key in AFTER_ARGS or key in BEFORE_ARGS:
        return True
    if key in QUERY_ARGS:
        return not isinstance(value, str) or bool(_SQL.match(value)) or _has_words(record, value)
    if isinstance(value, str) and value.startswith("/") and str(record.get(key, "")).startswith("/"):
        return str(record[key]).startswith(value.rstrip("/") + "/") or record[key] == value
    ranged = _range_holds(record, key, value)
    if ranged is not None:
        return ranged
    if key.endswith("_only"):
        flagged = _flag_holds(record, key.removesuffix("_only"), value)
        return True if flagged is None else flagged
    if key in record:
        return _equal(record[key], value)
    if isinstance(value, str) and _DAY.match(value) and key not in TIME_PAIRS_FLAT:
        return _on_day(record, value)  # `date=2026-04-26` asks for the record's own time on that day
    return True


def _has_words(record: dict[str, Any], query: str) -> bool:
    haystack = " ".join(str(v) for v in record.values()).lower()
    return all(w in haystack for w in _words(query))


def _words(query: str) -> list[str]:
    return [w for w in re.split(r"[\s*?]+", query.lower()) if w]


def _equal(have: Any, want: Any) -> bool:
    if isinstance(have, dict | list):
        return True
    if isinstance(want, str) and _DAY.match(want) and isinstance(have, str) and have[:10] == want:
        return True
    if isinstance(want, int | float) and not isinstance(want, bool) and isinstance(have, int | float):
        return float(have) == float(want)
    return str(have).lower() == str(want).lower()


def _on_day(record: dict[str, Any], day: str) -> bool:
    found = moment_of(record)
    return found is None or found[1][:10] == day


def _range_field(record: dict[str, Any], key: str) -> tuple[str, str] | None:
    """`max_price` -> ('max', 'price'); the record field it bounds (`price`, or one ending in it)."""
    match = _RANGE.match(key)
    if match is None:
        return None
    side, stem = (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
    field = stem if isinstance(record.get(stem), int | float) else next(
        (f for f, v in record.items() if f.endswith(f"_{stem}") and isinstance(v, int | float)), None)
    return (side, field) if field and not isinstance(record[field], bool) else None


def _range_holds(record: dict[str, Any], key: str, value: Any) -> bool | None:
    ranged = _range_field(record, key) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if ranged is None:
        return None
    side, field = ranged
    return record[field] <= value if side == "max" else record[field] >= value


def _flag_holds(record: dict[str, Any], flag: str, wanted: Any) -> bool | None:
    """`in_stock_only`, `overdue_only`, `unread_only`: None when the record cannot tell."""
    if wanted is not True:
        return None
    if isinstance(record.get(flag), bool) or isinstance(record.get(f"is_{flag}"), bool):
        return bool(record.get(flag, record.get(f"is_{flag}")))
    stem = flag.removeprefix("in_")
    if isinstance(record.get(stem), int | float) and not isinstance(record.get(stem), bool):
        return record[stem] > 0
    if flag == "overdue":
        due = next((str(record[f]) for f in ("due", "due_date", "deadline") if isinstance(record.get(f), str)), None)
        done = record.get("due_complete") or record.get("completed") or record.get("done")
        return None if due is None else (due < clock().isoformat()[: len(due)] and not done)
    if flag == "unread" and isinstance(record.get("read"), bool):
        return not record["read"]
    return None


# --- satisfying ----------------------------------------------------------------------------------------
def satisfy(record: dict[str, Any], args: dict[str, Any], entity: EntityType, rng: random.Random) -> dict[str, Any]:
    """Change `record` (one nobody has seen yet) so that `matches(record, args)` holds where it can."""
    for key, value in args.items():
        if skipped(key, value) or key == entity.key_field:
            continue
        if key in QUERY_ARGS:
            if isinstance(value, str) and not _SQL.match(value) and not _has_words(record, value):
                _write_query(record, value, entity, rng)
        elif key in AFTER_ARGS or key in BEFORE_ARGS:
            _into_window(record, args)
        elif _range_holds(record, key, value) is False:
            _into_range(record, key, value, rng)
        elif key.endswith("_only"):
            _raise_flag(record, key.removesuffix("_only"), value, rng)
        elif key in entity.fields or key in record:
            if not _equal(record.get(key), value):
                record[key] = _as_field(value, record.get(key))
        elif isinstance(value, str) and _DAY.match(value) and key not in TIME_PAIRS_FLAT:
            move_to_day(record, value)
    return record


def _write_query(record: dict[str, Any], query: str, entity: EntityType, rng: random.Random) -> None:
    """The query's words go where they read naturally: a name (a first name gets a surname), a title,
    a city; a lowercase keyword is prefixed to a title ('Password - Launch checklist')."""
    text = " ".join(query.split())
    capitalised = text[:1].isupper() or any(ch.isdigit() for ch in text)
    kinds = {f: k for f, k in entity.fields.items() if f != entity.key_field}
    name_field = next((f for f, k in kinds.items() if k == "name"), None)
    title_field = next((f for f, k in kinds.items() if k == "title"), None)
    if name_field and capitalised and len(text.split()) <= 3 and not title_field:
        record[name_field] = text if len(text.split()) > 1 else f"{text} {surname(rng)}"
    elif title_field:
        current = str(record.get(title_field) or "")
        record[title_field] = text if capitalised or not current else f"{text.capitalize()} - {current}"
    else:
        field = next((f for kind in _TEXT_KINDS for f, k in kinds.items() if k == kind), None)
        if field is None:
            record["name"] = text
        else:
            record[field] = text if kinds[field] != "text" else f"{text}: {record.get(field) or ''}".strip()
    city = next((f for f, k in kinds.items() if k == "city"), None)
    if city and capitalised and len(text.split()) <= 3 and not name_field:
        record[city] = text  # a place searched by name is in the place of that name ('Sydney' airport)


def _into_window(record: dict[str, Any], args: dict[str, Any]) -> None:
    if _in_window(record, args):
        return
    after = next((str(args[k]) for k in AFTER_ARGS if isinstance(args.get(k), str)), None)
    before = next((str(args[k]) for k in BEFORE_ARGS if isinstance(args.get(k), str)), None)
    day = (after or before or "")[:10]
    if _DAY.match(day):
        move_to_day(record, day)


def move_to_day(record: dict[str, Any], day: str) -> None:
    """Put the record's own time on `day`, keeping the time of day and the length of paired intervals."""
    found = moment_of(record)
    if found is None:
        return
    try:
        begins = datetime.fromisoformat(found[1])
        target = datetime.fromisoformat(day).replace(hour=begins.hour, minute=begins.minute, tzinfo=begins.tzinfo)
    except ValueError:
        return
    move_to_moment(record, target.isoformat())


def move_to_moment(record: dict[str, Any], when: str) -> None:
    """Put the record's own time at `when` (an ISO time), moving a paired end time by as much."""
    found = moment_of(record)
    if found is None:
        return
    field, moment = found
    try:
        begins, target = datetime.fromisoformat(moment), datetime.fromisoformat(when)
        if (begins.tzinfo is None) != (target.tzinfo is None):
            target = target.replace(tzinfo=begins.tzinfo)
    except ValueError:
        return
    shift = target - begins
    record[field] = target.date().isoformat() if len(moment) == 10 else target.isoformat()
    for start, end in TIME_PAIRS:
        if start == field and isinstance(record.get(end), str):
            _shift(record, end, shift)


def _shift(record: dict[str, Any], field: str, by: timedelta) -> None:
    try:
        moved = datetime.fromisoformat(record[field]) + by
    except ValueError:
        return
    record[field] = moved.date().isoformat() if len(record[field]) == 10 else moved.isoformat()


def _into_range(record: dict[str, Any], key: str, bound: float, rng: random.Random) -> None:
    ranged = _range_field(record, key)
    if ranged is None:
        return
    side, field = ranged
    factor = rng.uniform(0.55, 0.95) if side == "max" else rng.uniform(1.0, 1.4)
    value = bound * factor if bound > 0 else bound
    if isinstance(record[field], int):
        value = math.floor(value) if side == "max" else math.ceil(value)
    record[field] = value if isinstance(value, int) else round(value, 2)


def _raise_flag(record: dict[str, Any], flag: str, wanted: Any, rng: random.Random) -> None:
    if _flag_holds(record, flag, wanted) is not False:
        return
    stem = flag.removeprefix("in_")
    if isinstance(record.get(flag), bool) or isinstance(record.get(f"is_{flag}"), bool):
        record[flag if flag in record else f"is_{flag}"] = True
    elif isinstance(record.get(stem), int | float):
        record[stem] = rng.randint(2, 30)
    elif flag == "overdue":
        field = next(f for f in ("due", "due_date", "deadline") if isinstance(record.get(f), str))
        past = clock() - timedelta(days=rng.randint(1, 10), hours=rng.randint(0, 8))
        record[field] = past.date().isoformat() if len(record[field]) == 10 else past.isoformat()
        for done in ("due_complete", "completed", "done"):
            if done in record:
                record[done] = False
    elif flag == "unread":
        record["read"] = False


def _as_field(value: Any, current: Any) -> Any:
    """An argument's value in the record's type (a '3' for an int field, 'true' for a bool)."""
    if isinstance(current, bool) and isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    if isinstance(current, int | float) and not isinstance(current, bool) and isinstance(value, str):
        try:
            return type(current)(float(value))
        except ValueError:
            return value
    return value
