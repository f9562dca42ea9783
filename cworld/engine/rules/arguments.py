"""What a service refuses in a call's arguments whatever its world holds: checks of meaning, not of type.

The input schema says a `limit` is an integer and a `url` a string; the service also knows a limit of -5, a
latitude of 123, a `url` of `example.com` or an empty `path` is no request it can serve, and answers 400. These
checks say so for any tool, inferred from its argument names and schemas (never from one service's code):

- times that are not times, ranges that end before they start, addresses that are not addresses (`value_checks`);
- a required name, text, query, path, address or command given empty (`blank_checks`);
- a page token the service never issued (`cursor_checks`);
- a page size below one, an offset or page below zero, where the schema states no bound (`paging_checks`);
- a latitude or longitude off the globe (`coordinate_checks`);
- a URL without a scheme (`url_checks`).

A bound the schema states is enforced with the schema (`validation_error`) before any rule runs, so these
checks add nothing where the schema already says it: they cover what schemas leave unsaid.
"""

from __future__ import annotations

from typing import Any

from cworld.engine.cards.card import EntityType
from cworld.engine.cards.operations import snake
from cworld.engine.rules.spec import Check

PAGE_ARGS = ("page", "page_number", "page_no", "page_index")
OFFSET_ARGS = ("offset", "start", "skip", "start_index", "from")
"""Item offsets (`from` as Elasticsearch and Vercel take it; only an integer argument is read as one)."""
CURSOR_ARGS = ("cursor", "page_token", "next_page_token", "next_cursor", "next_token", "starting_after", "after",
               "continuation_token", "marker")
SIZE_ARGS = ("page_size", "limit", "per_page", "max_results", "count", "top_k", "size", "n", "first", "top",
             "max_items", "page_limit", "num_results", "max_count")
"""Page sizes (`top` as OData services take it, with `skip`)."""
PAGING_ARGS = (*PAGE_ARGS, *OFFSET_ARGS, *CURSOR_ARGS, *SIZE_ARGS)
#: Paging arguments that take only a token the service issued (`after`, `starting_after`, `marker` may name a record).
ISSUED_CURSOR_ARGS = ("cursor", "page_token", "next_page_token", "next_cursor", "next_token", "continuation_token")
#: Sizes a service may take as zero: OData's `$top=0` answers no rows (and the count), it is not refused.
ZERO_SIZES = ("top",)


def named_arg(props: dict[str, Any], names: tuple[str, ...], kind: str | None = None) -> str | None:
    """The first argument whose snake-case name is one of `names` (and whose schema type is `kind`, if given)."""
    for prop, schema in props.items():
        declared = (schema or {}).get("type")
        if snake(prop) in names and (kind is None or declared in (kind, None) or {kind, declared} == {"integer", "number"}):
            return prop
    return None


def argument_checks(props: dict[str, Any], required: set[str]) -> list[Check]:
    """The checks of meaning that need no record kind: every one above but the card's typed times."""
    return [*paging_checks(props), *coordinate_checks(props), *url_checks(props)]


# --- times, addresses, ranges ------------------------------------------------------------------------------------

_TIME_TYPES = ("datetime", "date")
#: (start, end) argument pairs a service refuses in the wrong order.
RANGES = (("start", "end"), ("start_date", "end_date"), ("start_time", "end_time"), ("check_in", "check_out"),
          ("starts_at", "ends_at"), ("date_from", "date_to"), ("departure_date", "return_date"), ("since", "until"),
          ("from_date", "to_date"), ("start_at", "end_at"), ("min_date", "max_date"))
#: Argument names that hold a time, whatever the card calls the field (`remind(at)`, `book(start, end)`).
TIME_ARGS = ("at", "time", "when", "date", "due", "start", "end", "deadline", "check_in", "check_out")
TIME_SUFFIXES = ("_at", "_date", "_time", "_on")


def _names_a_time(name: str, schema: dict[str, Any]) -> bool:
    return schema.get("type") in ("string", None) and not schema.get("enum") and (
        name in TIME_ARGS or name.endswith(TIME_SUFFIXES))


def value_checks(entity: EntityType | None, props: dict[str, Any]) -> list[Check]:
    """What services refuse in a call's values whatever their rules: a time that is not one (a field the card
    types as a date or time, or an argument whose schema or name says so), an address that is not one, and a
    range that ends before it starts."""
    fields = entity.fields if entity is not None else {}
    checks = []
    times = {snake(p): p for p, schema in props.items() if fields.get(snake(p)) in _TIME_TYPES
             or (schema or {}).get("format") in ("date", "date-time") or _names_a_time(snake(p), schema or {})}
    for arg in times.values():
        checks.append(Check(fail=f"args[{arg!r}] is not None and parse_time(args[{arg!r}]) is None", error="invalid",
                            message=f"'{arg}' is not a date or time: give it as ISO 8601 (YYYY-MM-DD or "
                                    "YYYY-MM-DDTHH:MM)"))
    for prop, schema in props.items():
        if (snake(prop) == "email" or snake(prop).endswith("_email")) and (schema or {}).get("type") == "string":
            checks.append(Check(fail=f"args[{prop!r}] is not None and not re_match(r'^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', "
                                     f"args[{prop!r}])", error="invalid",
                                message=f"invalid {prop} '{{args[{prop!r}]}}': give an address such as name@example.com"))
    for start, end in RANGES:
        if start in times and end in times:
            a, b = times[start], times[end]
            checks.append(Check(fail=f"args[{a!r}] is not None and args[{b!r}] is not None and before(args[{b!r}], "
                                     f"args[{a!r}])", error="invalid", message=f"'{b}' is before '{a}'"))
    return checks


# --- what must not be empty ----------------------------------------------------------------------------------------

#: Arguments a service refuses empty when it requires them: what names a record, a message's text, a query, and
#: what the call acts on (a path, an address, a command, code, a symbol, a question).
BLANK_REFUSED = ("name", "title", "subject", "summary", "text", "body", "content", "message", "comment", "query", "q",
                 "search", "keyword", "keywords", "term", "search_term", "search_query",
                 "path", "file_path", "filepath", "filename", "file_name", "file", "directory", "dir", "folder",
                 "url", "uri", "link", "domain", "address", "host", "hostname", "command", "cmd", "code", "sql",
                 "expression", "formula", "script", "symbol", "ticker", "package", "selector", "prompt", "question",
                 "input", "topic", "city", "location", "key")
BLANK_SUFFIXES = ("_name", "_title", "_path", "_url", "_uri", "_query", "_symbol", "_code", "_dir", "_directory")


def blank_checks(props: dict[str, Any], required: set[str]) -> list[Check]:
    """A required name, title, text, query, path, address or command given empty is refused (`name can't be
    blank`, Slack's `no_text`, an empty search query, `ENOENT: ''`), as services refuse it whatever their rules."""
    checks = []
    for prop in props:
        plain, schema = snake(prop), props[prop] or {}
        if prop in required and schema.get("type") in ("string", None) and not schema.get("enum") \
                and (plain in BLANK_REFUSED or plain.endswith(BLANK_SUFFIXES)):
            checks.append(Check(fail=f"not str(args[{prop!r}] or '').strip()", error="invalid",
                                message=f"'{prop}' must not be empty"))
    return checks


# --- paging --------------------------------------------------------------------------------------------------------

def issued_cursor_arg(props: dict[str, Any]) -> str | None:
    """The argument taking a page token the service issued: one named only for that (`page_token`), or a Relay
    connection's `after` beside `first` (Shopify's, GitHub's GraphQL), or an `after`/`marker` its schema calls a
    cursor or token; never one that holds a time (GitLab's `after: YYYY-MM-DD`) or a record's id (Stripe's
    `starting_after`, unless it says it is a cursor)."""
    cursor = named_arg(props, ISSUED_CURSOR_ARGS, "string")
    if cursor is not None:
        return cursor
    for prop, schema in props.items():
        schema = schema or {}
        said = str(schema.get("description") or "").lower()
        if snake(prop) not in ("after", "marker", "starting_after") or schema.get("type") not in ("string", None) \
                or holds_time(schema):
            continue
        if "cursor" in said or "token" in said or (snake(prop) == "after" and named_arg(props, ("first",)) and not said):
            return prop
    return None


def holds_time(schema: Any) -> bool:
    """Whether a paging-named argument holds a time, not a page token (GitLab's `after: YYYY-MM-DD`)."""
    schema = schema or {}
    return schema.get("format") in ("date", "date-time") or "date" in str(schema.get("description") or "").lower()


def cursor_checks(props: dict[str, Any]) -> list[Check]:
    """A page token the service never issued is refused (Slack's `invalid_cursor`, Google's "invalid page token",
    Shopify's "Invalid cursor"), where it had read as the first page; the engine's own `next_cursor` is accepted."""
    cursor = issued_cursor_arg(props)
    if cursor is None:
        return []
    return [Check(fail=f"not given_cursor(args[{cursor!r}])", error="invalid",
                  message=f"'{cursor}' {{args[{cursor!r}]}} is not a cursor this service gave: call without it for "
                          "the first page, then pass the next_cursor an answer gives")]


def _unbounded_number(schema: Any) -> bool:
    """An integer or number argument whose schema states no lower bound (the schema enforces one it states)."""
    schema = schema or {}
    return schema.get("type") in ("integer", "number") and "minimum" not in schema \
        and "exclusiveMinimum" not in schema


def paging_checks(props: dict[str, Any]) -> list[Check]:
    """A page size below one (Stripe's "limit must be between 1 and 100", GitHub's `per_page`), and an offset or
    page number below zero, are refused. Page 0 of a 1-based list is left alone: services differ (GitHub reads
    it as page 1), and the list reads it as its first page."""
    checks = []
    for prop, schema in props.items():
        plain = snake(prop)
        if not _unbounded_number(schema) or plain not in PAGING_ARGS:
            continue
        least = 0 if plain in (*OFFSET_ARGS, *PAGE_ARGS, *ZERO_SIZES) else 1
        what = "a page size" if plain in SIZE_ARGS else "an offset" if plain in OFFSET_ARGS else "a page number"
        checks.append(Check(fail=f"isinstance(args[{prop!r}], (int, float)) and args[{prop!r}] < {least}",
                            error="invalid", message=f"'{prop}' {{args[{prop!r}]}} is not {what}: give "
                                                     f"{least} or more"))
    return checks


# --- places and addresses ------------------------------------------------------------------------------------------

LATITUDE_ARGS = ("latitude", "lat")
LONGITUDE_ARGS = ("longitude", "lon", "lng", "long")


def coordinate_checks(props: dict[str, Any]) -> list[Check]:
    """A latitude outside -90..90 or a longitude outside -180..180 names no place; geocoders and weather
    services refuse it (Open-Meteo's "Latitude must be in range of -90 to 90°")."""
    checks = []
    for prop, schema in props.items():
        plain = snake(prop).removeprefix("origin_").removeprefix("destination_").removeprefix("center_")
        bound = 90 if plain in LATITUDE_ARGS else 180 if plain in LONGITUDE_ARGS else None
        if bound is None or (schema or {}).get("type") not in ("number", "integer") \
                or "minimum" in (schema or {}) or "maximum" in (schema or {}):
            continue
        checks.append(Check(fail=f"isinstance(args[{prop!r}], (int, float)) and not -{bound} <= args[{prop!r}] <= {bound}",
                            error="invalid", message=f"'{prop}' {{args[{prop!r}]}} is off the globe: give a value "
                                                     f"from -{bound} to {bound}"))
    return checks


URL_ARGS = ("url", "uri", "link", "endpoint", "webhook", "urls", "uris", "links")
URL_SUFFIXES = ("_url", "_uri", "_link", "_endpoint", "_webhook", "_urls", "_uris", "_links")
_SCHEMED = r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$"


def url_checks(props: dict[str, Any]) -> list[Check]:
    """A URL argument given a value with no scheme (`example.com`, `/docs`) or with spaces is refused, as an
    HTTP client refuses it ("Invalid URL", "missing an 'http://' or 'https://' protocol"). Any scheme passes
    (`https:`, `file:`, `s3:`, Search Console's `sc-domain:`); a list of URLs is checked item by item. An empty
    string is no URL given (a schema's `default: ""`), left to the blank check where the argument is required."""
    checks = []
    for prop, schema in props.items():
        plain, schema = snake(prop), schema or {}
        if (plain not in URL_ARGS and not plain.endswith(URL_SUFFIXES)) or schema.get("enum"):
            continue
        if schema.get("type") in ("string", None):
            values = f"([args[{prop!r}]] if isinstance(args[{prop!r}], str) else [])"
        elif schema.get("type") == "array" and (schema.get("items") or {}).get("type") in ("string", None):
            values = f"[u for u in (args[{prop!r}] or []) if isinstance(u, str)]"
        else:
            continue
        # an empty value is none given (`endpoint: ""`, the schema's default); a required one is refused as empty
        checks.append(Check(fail=f"[u for u in {values} if u.strip() and not re_match(r'{_SCHEMED}', u.strip())]",
                            error="invalid",
                            message=f"'{prop}' {{args[{prop!r}]}} is not a URL: give it whole, with its scheme "
                                    "(https://example.com/page)"))
    return checks
