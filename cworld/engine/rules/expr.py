"""Expressions in operation rules: small Python expressions over the world, compiled once (`safe.py`).

Rules are content (YAML a person reviews), so their expressions pass an allow-list first: no imports,
no dunder access, only the functions listed here and plain methods of values. Names are the call's `args`, the server's
`state` and its top-level collections (`orders`, `cart`), `now` (the world clock, ISO 8601), `consts`
and whatever earlier steps bound (`order`, `order_key`). Each expression is compiled once per process.
"""

from __future__ import annotations

import ast
import base64
import difflib
import hashlib
import posixpath
import random
import re
from collections.abc import Callable
from functools import lru_cache
from types import CodeType, FunctionType
from typing import Any

from cworld.engine.rules.ledgers import counted, ledger_of
from cworld.engine.rules.pages import element_key, front_tab, known_key
from cworld.engine.rules.policies import shipping_fee
from cworld.engine.rules.safe import compiled, dot
from cworld.engine.rules.spans import free_slots, in_utc, nights, past_due, work_hours
from cworld.engine.world.shape import ROLE_MAPS, held_only, history_after, is_signed_in, user_id
from cworld.errors import ContentError
from cworld.values import later, matches, money, norm, parse_time

_WORD = re.compile(r"[\w@.+-]+", re.UNICODE)
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def words(text: Any) -> list[str]:
    return [w.lower() for w in _WORD.findall(str(text or ""))]


def secret(*parts: Any, length: int = 20) -> str:
    """A token or code that looks random but is fixed by its parts (include the seed and a counter)."""
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:length]


def before(a: Any, b: Any) -> bool:
    """`a` is strictly earlier than `b` (ISO times or dates; a bare date is its midnight)."""
    ta, tb = parse_time(a), parse_time(b)
    return ta is not None and tb is not None and ta < tb


def re_match(pattern: str, text: Any) -> bool:
    """`text` matches the regular expression from its start (Python's `re.match`)."""
    return isinstance(text, str) and re.match(pattern, text) is not None


def normpath(path: Any) -> str:
    """A path with `.` and `..` resolved (`/scratch/a/../b` -> `/scratch/b`): where a path really points."""
    return posixpath.normpath(str(path))


def under_root(path: Any, root: Any) -> Any:
    """A path as a world kept under `root` keys it (`/scratch/fs/docs/a.md` under `/scratch/fs` -> `docs/a.md`,
    the root itself `''`); a path elsewhere, or one already relative, as given."""
    if not isinstance(path, str) or not isinstance(root, str) or not root.startswith("/") or not path.startswith("/"):
        return path
    resolved, base = posixpath.normpath(path), posixpath.normpath(root)
    if resolved == base:
        return ""
    return resolved[len(base) + 1:] if resolved.startswith(base.rstrip("/") + "/") else path


def cursor_position(cursor: Any) -> int | None:
    """The position an opaque cursor this world gave holds (`at:<n>`, base64), None for any other text."""
    try:
        text = base64.urlsafe_b64decode(str(cursor) + "=" * (-len(str(cursor)) % 4)).decode()
        return max(0, int(text.removeprefix("at:"))) if text.startswith("at:") else None
    except (ValueError, UnicodeDecodeError):
        return None


def given_cursor(cursor: Any) -> bool:
    """A cursor this world gave (an empty one asks for the first page): a service refuses one it never issued."""
    return cursor in (None, "") or cursor_position(cursor) is not None


def seeded_gauss(text: str, mu: float, sigma: float) -> float:
    """A normal draw fixed by `text`: a service's per-record randomness (a cabin's load), reproducible."""
    return random.Random(text).gauss(mu, sigma)


def seeded_sample(text: str, items: Any, k: int) -> list[Any]:
    """`k` of `items` fixed by `text` (the seats already taken on a flight)."""
    return random.Random(text).sample(list(items), k)


def status_word(members: Any, word: str) -> str:
    """The status a card's enum spells for `word` (`cancelled` is `canceled` where the card says so; `done`
    for `completed` when the card has no `completed`); `word` itself when the card declares no enum."""
    members = [str(m) for m in members or []]
    if not members or word in members:
        return word
    stem = word[:5]
    return next((m for m in members if m[:5] == stem), next((m for m in members if m in _SAME.get(word, ())), word))


_SAME = {"completed": ("done", "complete", "finished", "closed", "resolved"), "active": ("enabled", "open", "running"),
         "rejected": ("declined", "denied"), "paused": ("suspended", "stopped", "inactive"),
         "archived": ("closed", "inactive"), "open": ("reopened", "active", "todo", "new")}


def close_match(name: Any, candidates: Any) -> str | None:
    """The closest of `candidates` to `name` (a 'did you mean' hint), or None."""
    found = difflib.get_close_matches(str(name), [str(c) for c in candidates], n=1, cutoff=0.6)
    return found[0] if found else None


def replaced(text: Any, pairs: Any) -> str:
    """`text` with each (old, new) pair replaced once, in order (an edit list); an old text written with
    other surrounding space than the text has is matched without it (and its new text likewise)."""
    out = str(text or "")
    for old, new in pairs or []:
        old, new = str(old), str(new)
        if old and old in out:
            out = out.replace(old, new, 1)
        elif old.strip() and old.strip() in out:
            out = out.replace(old.strip(), new.strip(), 1)
    return out


def first_unmatched(text: Any, pairs: Any) -> str | None:
    """The old text of the first edit (`replaced`'s pairs, applied in turn) that the text does not hold, or None
    when every edit finds its text."""
    out = str(text or "")
    for old, new in pairs or []:
        old = str(old)
        if not old or (old not in out and old.strip() not in out):
            return old
        out = replaced(out, [(old, new)])
    return None


def byte_size(text: Any) -> int:
    """A text's size in bytes as a file store counts it (UTF-8)."""
    return len(str(text or "").encode("utf-8"))


def role_of(record: Any, user: Any) -> str | None:
    """The role `user` (an id, or a record with one) holds on `record`, from the first of its role maps that
    names them; None where none does."""
    key = user_id(user)
    for field in ROLE_MAPS:
        roles = record.get(field) if isinstance(record, dict) else None
        if isinstance(roles, dict) and isinstance(roles.get(key), str):
            return str(roles[key])
    return None


def role_map(record: Any) -> str | None:
    """The field in which `record` maps people to their roles on it (`access`), or None where it keeps none."""
    return next((f for f in ROLE_MAPS if isinstance(record, dict) and isinstance(record.get(f), dict)), None)


def sql_run(tables: Any, query: Any) -> dict[str, Any]:
    """One statement run on a database world's `tables` by SQLite itself (`world.real.sql_exec`, so a rule need
    not restate SQL): {'result': rows, or [{'affected_rows': n}] for a write; 'error': SQLite's message or None;
    'tables': the tables afterwards}."""
    from cworld.engine.world.real import sql_exec  # sqlite3 and the launch code only where a rule runs SQL

    return sql_exec(dict(tables or {}), str(query))


def sql_tables(tables: Any, query: Any) -> Any:
    """A sqlite world's `tables` after one statement (`sql_run`); unchanged where the statement reads or errs."""
    return sql_run(tables, query)["tables"]


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def numbered(value: Any) -> tuple[str, str] | None:
    """(prefix, digits) of a value `next_id` reads (`thread_0019` -> ('thread_', '0019')), None for any other."""
    found = _NUMBERED.match(value) if isinstance(value, str) else None
    return (found.group(1), found.group(2)) if found else None


def next_id(values: Any) -> str | None:
    """The id after the highest of `values` in their own format (`thread_0019` -> `thread_0020`): a sequence a
    world keeps only inside its records (a new mail thread); None where the values are not numbered alike.
    It reads only the prefixes, the widest number and the largest (`sequences.Numbered` keeps those)."""
    parts = [p for v in values or [] if (p := numbered(v)) is not None]
    prefixes = {p for p, _ in parts}
    if len(prefixes) != 1:
        return None
    width = max(len(n) for _, n in parts)
    return f"{prefixes.pop()}{max(int(n) for _, n in parts) + 1:0{width}d}"


def highest_id(values: Any) -> str | None:
    """The highest-numbered of `values` (`lbl_0012` of `lbl_0003`, `lbl_0012`), None where none is numbered. Where
    a kind's ids sit inside other records (a board's labels), one per record stands for them all in `next_id`,
    so the planner reads a loop over the records (`next_id([highest_id(...) for b in coll('board').values()])`)."""
    best: tuple[int, str] | None = None
    for value in values or []:
        parts = numbered(value)
        if parts is not None and (best is None or int(parts[1]) > best[0]):
            best = (int(parts[1]), value)
    return best[1] if best is not None else None


FUNCTIONS: dict[str, Any] = {
    "len": len, "sum": sum, "min": min, "max": max, "any": any, "all": all, "sorted": sorted, "list": list,
    "dict": dict, "set": set, "round": round, "abs": abs, "int": int, "float": float, "str": str, "bool": bool,
    "matches": matches, "words": words, "norm": norm, "secret": secret, "later": later, "before": before,
    "money": money, "re_match": re_match, "seeded_gauss": seeded_gauss, "seeded_sample": seeded_sample,
    "close_match": close_match, "status_word": status_word, "parse_time": parse_time, "enumerate": enumerate, "zip": zip, "range": range,
    "reversed": reversed, "tuple": tuple, "isinstance": isinstance, "replaced": replaced, "user_id": user_id,
    "role_of": role_of, "role_map": role_map, "next_id": next_id, "highest_id": highest_id, "first_unmatched": first_unmatched,
    "held_only": held_only, "byte_size": byte_size, "is_me": is_signed_in, "history_after": history_after,
    "under_root": under_root, "given_cursor": given_cursor,
    "normpath": normpath, "sql_tables": sql_tables, "sql_run": sql_run,
    "work_hours": work_hours, "free_slots": free_slots, "past_due": past_due,
    "in_utc": in_utc, "nights": nights, "ledger_of": ledger_of, "counted": counted, "shipping_fee": shipping_fee,
    "front_tab": front_tab, "element_key": element_key, "known_key": known_key,
}


class RuleExprError(Exception):
    """An expression of a rule failed: a content error, reported with the rule's name."""


@lru_cache(maxsize=8192)
def parsed(expr: str) -> ast.AST:
    """The expression's syntax tree (what names it reads); a ContentError when it is not valid."""
    compiled(expr)
    return ast.parse(expr.strip(), mode="eval").body


@lru_cache(maxsize=8192)
def _lambda_code(params: tuple[str, ...], expr: str, compile_expr: Callable[[str], CodeType]) -> CodeType | None:
    """The code of `lambda params: expr` (None when the params cannot be a lambda's: the scoped path then)."""
    compile_expr(expr)  # the expression's own errors name it, not the lambda
    try:
        outer = compile_expr(f"lambda {', '.join(params)}: (\n{expr.strip()}\n)")
    except (ContentError, SyntaxError):
        return None
    return next((c for c in outer.co_consts if isinstance(c, CodeType)), None)


class _Def:
    """A def as a function of its params over an evaluator's names (made on its first call); an error is
    the def's, named by its expression. A call with more or fewer values than params, or a def that
    cannot be a lambda, is evaluated in a copy of the names with the params bound by `zip`, as always."""

    __slots__ = ("ev", "params", "expr", "code", "fn")

    def __init__(self, ev: Evaluator, params: list[str], expr: str, code: CodeType | None) -> None:
        self.ev, self.params, self.expr, self.code = ev, params, expr, code
        self.fn: Callable[..., Any] | None = None

    def __call__(self, *values: Any) -> Any:
        try:
            if self.code is None or len(values) != len(self.params):
                return self._scoped(values)
            if self.fn is None:
                self.fn = FunctionType(self.code, self.ev.names)
            return self.fn(*values)
        except RuleExprError:
            raise
        except Exception as exc:
            raise RuleExprError(f"{self.expr.strip()[:200]!r}: {type(exc).__name__}: {exc}") from None

    def _scoped(self, values: tuple[Any, ...]) -> Any:
        scope = dict(self.ev.names)
        scope.update(zip(self.params, values, strict=False))
        return eval(self.ev.compiled(self.expr), scope)  # noqa: S307 - compiled from an allow-listed tree


class Evaluator:
    """Evaluates a rule's expressions over one scope of names; names can be bound as steps run."""

    def __init__(self, names: dict[str, Any], functions: dict[str, Any] | None = None,
                 compile_expr: Callable[[str], CodeType] = compiled) -> None:
        """`compile_expr` turns an expression into bytecode (the engine's adds index-backed scans)."""
        self.names: dict[str, Any] = {"__builtins__": {}, "_dot": dot, **(functions or FUNCTIONS), **names}
        self.compiled = compile_expr

    def define(self, name: str, fn: Any) -> None:
        """Make `fn` callable by name in expressions (a rule's `defs`, `coll`)."""
        self.names[name] = fn

    def function(self, params: list[str], expr: str) -> Any:
        """A callable evaluating `expr` with `params` bound over this evaluator's names (a rule's `defs`):
        the def compiled once as a lambda whose globals are these names (no scope copied per call)."""
        return _Def(self, params, expr, _lambda_code(tuple(params), expr, self.compiled))

    def bind(self, name: str, value: Any) -> None:
        self.names[name] = value

    def __call__(self, expr: Any) -> Any:
        """A string is an expression; anything else (numbers, booleans, None, dicts of expressions) is
        evaluated structurally, so `{"status": "'open'"}` builds a dict."""
        if isinstance(expr, str):
            code = self.compiled(expr)
            try:
                return eval(code, self.names)  # noqa: S307 - compiled from an allow-listed tree (safe.py)
            except RuleExprError:
                raise
            except Exception as exc:
                raise RuleExprError(f"{expr.strip()[:200]!r}: {type(exc).__name__}: {exc}") from None
        if isinstance(expr, dict):
            return {k: self(v) for k, v in expr.items()}
        if isinstance(expr, list):
            return [self(v) for v in expr]
        return expr

    def text(self, template: str) -> str:
        """A message template: each `{expression}` is replaced by its value."""
        def one(match: re.Match[str]) -> str:
            try:
                return str(self(match.group(1)))
            except (RuleExprError, ContentError):
                return match.group(0)
        return _PLACEHOLDER.sub(one, template)
