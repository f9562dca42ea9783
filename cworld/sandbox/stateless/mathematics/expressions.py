"""A safe arithmetic evaluator: walks the `ast` of an expression, never calls `eval`.

Only numbers, + - * / // % **, parentheses, a fixed list of functions and constants are allowed. Integer
results stay exact; every intermediate integer is capped in size and every exponent is checked before it
is computed, so `9**9**9` is refused instead of freezing the server.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from cworld.sandbox.stateless.shared import invalid

Number = int | float

MAX_EXPRESSION_CHARS = 500
MAX_NODES = 300
#: Integers in an expression may not grow past this many bits (about 3,000 decimal digits).
MAX_INT_BITS = 10_000


def _factorial(n: Number) -> int:
    if not isinstance(n, int) or not 0 <= n <= 1000:
        raise invalid("factorial() takes a whole number from 0 to 1000")
    return math.factorial(n)


def _log(x: Number, base: Number = math.e) -> float:
    return math.log(x, base)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt,
    "cbrt": math.cbrt,
    "exp": math.exp,
    "ln": math.log,
    "log": _log,
    "log10": math.log10,
    "log2": math.log2,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "atan2": math.atan2,
    "sinh": math.sinh,
    "cosh": math.cosh,
    "tanh": math.tanh,
    "degrees": math.degrees,
    "radians": math.radians,
    "abs": abs,
    "floor": math.floor,
    "ceil": math.ceil,
    "round": round,
    "min": min,
    "max": max,
    "hypot": math.hypot,
    "gcd": math.gcd,
    "factorial": _factorial,
}
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def evaluate(expression: str) -> Number:
    """The value of `expression`; any mistake or overflow becomes an AppError naming the problem."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise invalid(f"the expression is {len(expression)} characters; at most {MAX_EXPRESSION_CHARS}")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError) as err:
        raise invalid(
            f"cannot parse the expression ({err.msg if isinstance(err, SyntaxError) else err}); "
            "write it like '2 * (3 + 4) ** 2 / sqrt(9)'"
        ) from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise invalid(f"the expression has more than {MAX_NODES} parts; split it into smaller ones")
    try:
        return _check(_eval(tree.body))
    except (ZeroDivisionError, OverflowError, ValueError, TypeError) as err:
        raise invalid(f"the expression cannot be computed: {_explain(err)}") from None


def _explain(err: Exception) -> str:
    if isinstance(err, ZeroDivisionError):
        return "division by zero"
    if isinstance(err, OverflowError):
        return "the result is too large"
    text = str(err)
    return (
        "a math function got a value outside its domain (e.g. sqrt(-1), log(0))" if "domain" in text else text
    )


def _check(value: Any) -> Number:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid("the expression must produce a real number")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise invalid(f"an intermediate integer exceeds {MAX_INT_BITS} bits; use smaller numbers")
    if isinstance(value, float) and not math.isfinite(value):
        raise invalid("the result is not a finite number (overflow); use smaller numbers")
    return value


def _eval(node: ast.AST) -> Number:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise invalid(f"only numbers are allowed, not {node.value!r}")
        return _check(node.value)
    if isinstance(node, ast.Name):
        if node.id not in CONSTANTS:
            raise invalid(f"unknown name '{node.id}'; constants are {sorted(CONSTANTS)}")
        return CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _check(_UNARY[type(node.op)](_eval(node.operand)))
    if isinstance(node, ast.BinOp):
        return _binary(node)
    if isinstance(node, ast.Call):
        return _call(node)
    raise invalid(
        f"'{type(node).__name__}' is not allowed; use numbers, + - * / // % **, and functions "
        f"{sorted(FUNCTIONS)}"
    )


def _binary(node: ast.BinOp) -> Number:
    if isinstance(node.op, ast.BitXor):
        raise invalid("'^' is not a power here; write powers as '**', e.g. 2**10")
    if type(node.op) not in _BINARY:
        raise invalid(f"operator '{type(node.op).__name__}' is not allowed; use + - * / // % **")
    left, right = _eval(node.left), _eval(node.right)
    if isinstance(node.op, ast.Pow):
        _guard_power(left, right)
    return _check(_BINARY[type(node.op)](left, right))


def _guard_power(base: Number, exponent: Number) -> None:
    if isinstance(base, int) and isinstance(exponent, int):
        if exponent < 0 and base == 0:
            raise ZeroDivisionError
        if exponent > 0 and max(base.bit_length(), 1) * exponent > MAX_INT_BITS and abs(base) > 1:
            raise invalid(
                f"a power with a {base.bit_length()}-bit base and exponent {exponent} is too large; "
                f"integer results are limited to {MAX_INT_BITS} bits (use floats, e.g. 2.0**{exponent})"
            )
    elif (
        isinstance(base, int | float)
        and base < 0
        and isinstance(exponent, float)
        and not exponent.is_integer()
    ):
        raise ValueError("math domain error")


def _call(node: ast.Call) -> Number:
    if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
        raise invalid(f"unknown function; allowed functions are {sorted(FUNCTIONS)}")
    if node.keywords:
        raise invalid("functions take positional arguments only, e.g. round(2.567, 2)")
    args = [_eval(a) for a in node.args]
    return _check(FUNCTIONS[node.func.id](*args))
