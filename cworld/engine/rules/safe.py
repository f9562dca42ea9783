"""Rule expressions compiled once to Python bytecode, after an allow-list check of their syntax tree.

Rules are content a person reviews, so an expression may only read names, call the rule language's
functions and the plain methods of strings, lists and dicts, and build values: no imports, no
statements, no attribute but the listed methods, no name or attribute starting with `_`, and no
builtins beyond those the language lists. `a.b` on a dict reads its key `b` (rules write `args.token`).
A tree-walking evaluator (simpleeval, tried first) re-checks every intermediate value and cost a
hundred times a compiled expression: the engine must answer thousands of calls a second.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from types import CodeType
from typing import Any

from cworld.errors import ContentError

#: Methods an expression may call on its values (strings, lists, dicts, sets): none changes a value, so
#: only effects write the world (what keeps a session's copy-on-write and the indexes exact).
METHODS = frozenset({
    "strip", "lstrip", "rstrip", "upper", "lower", "title", "capitalize", "casefold", "split", "rsplit",
    "splitlines", "join", "startswith", "endswith", "replace", "find", "rfind", "count", "index", "isdigit",
    "isalpha", "isalnum", "isspace", "isupper", "islower", "zfill", "ljust", "rjust", "center", "partition",
    "rpartition", "removeprefix", "removesuffix", "get", "items", "keys", "values", "copy", "union",
    "intersection", "difference", "issubset", "issuperset", "weekday", "isoweekday", "isoformat",
    "date", "total_seconds", "timestamp", "isocalendar",
})
#: Fields of values other than dicts an expression may read (dates, times and their differences).
FIELDS = frozenset({"year", "month", "day", "hour", "minute", "second", "days", "seconds", "microsecond"})

_ALLOWED = (
    ast.Expression, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.IfExp, ast.Dict, ast.Set, ast.ListComp, ast.SetComp,
    ast.DictComp, ast.GeneratorExp, ast.Compare, ast.Call, ast.Constant, ast.Attribute, ast.Subscript,
    ast.Starred, ast.Name, ast.List, ast.Tuple, ast.Slice, ast.keyword, ast.comprehension, ast.Lambda,
    ast.arguments, ast.arg, ast.JoinedStr, ast.FormattedValue, ast.Load, ast.Store,
    ast.boolop, ast.operator, ast.unaryop, ast.cmpop,
)


def dot(value: Any, name: str) -> Any:
    """`value.name`: a dict's key (rules read `args.token`, `order.status`)."""
    if isinstance(value, dict):
        if name in value:
            return value[name]
        raise KeyError(f"no field '{name}'")
    if name in FIELDS:
        return getattr(value, name)
    raise TypeError(f"'.{name}' reads a field of a record; {type(value).__name__} has none")


class _Dots(ast.NodeTransformer):
    """Attribute reads that are not method calls become `_dot(value, 'name')`."""

    def visit_Call(self, node: ast.Call) -> Any:
        if isinstance(node.func, ast.Attribute):
            node.func.value = self.visit(node.func.value)
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            return node
        return self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        value = self.visit(node.value)
        call = ast.Call(func=ast.Name("_dot", ast.Load()), args=[value, ast.Constant(node.attr)], keywords=[])
        return ast.copy_location(call, node)


def _check(tree: ast.AST, text: str) -> None:
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise ContentError(f"expression {text[:80]!r}: {type(node).__name__} is not allowed in rules")
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            raise ContentError(f"expression {text[:80]!r}: names starting with '_' are not allowed")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise ContentError(f"expression {text[:80]!r}: attributes starting with '_' are not allowed")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr not in METHODS:
            raise ContentError(f"expression {text[:80]!r}: method '{node.func.attr}' is not allowed in rules; "
                               f"allowed: {', '.join(sorted(METHODS))}")


@lru_cache(maxsize=16384)
def compiled(text: str) -> CodeType:
    """The expression's bytecode; a syntax or allow-list error is a one-line ContentError."""
    return compile_tree(checked_tree(text))


def checked_tree(text: str) -> ast.Expression:
    """The expression's syntax tree after the allow-list check (a ContentError names what is not allowed)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ContentError(f"expression {text.strip()[:80]!r} is not valid: {exc.msg}") from None
    _check(tree, text)
    return tree


def compile_tree(tree: ast.Expression) -> CodeType:
    """A checked tree (possibly rewritten by the engine, `scans.py`) as bytecode, `a.b` reading keys."""
    return compile(ast.fix_missing_locations(_Dots().visit(tree)), "<rule>", "eval")
