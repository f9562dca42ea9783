"""Shared pieces of the stateless servers: their base class, bounded number types, result models, input guards.

Stateless tools are pure functions, so the only ways they can go wrong are bad input and inputs so large
they would stall the server. Both are stopped here, before any work, with an `AppError("invalid", ...)`
that tells the agent what to pass instead.
"""

from __future__ import annotations

import json
import math
from types import TracebackType
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, Field

from cworld.sandbox.framework import AppError, SandboxApp


class StatelessApp(SandboxApp):
    """Base of every stateless server: no state, so `initial_state` stays empty and no call changes any."""

    stateful: ClassVar[bool] = False


#: Largest magnitude a plain number argument may have: big enough for money, science and statistics,
#: small enough that squares and products of a few thousand of them stay finite.
REAL_LIMIT = 1e15

#: A float argument inside +-REAL_LIMIT (also rejects NaN and infinity).
Real = Annotated[float, Field(ge=-REAL_LIMIT, le=REAL_LIMIT)]

#: Significant digits kept in float results: hides rounding noise like 0.30000000000000004.
SIGNIFICANT_DIGITS = 12


class NumberResult(BaseModel):
    value: float = Field(description="The result.")


class IntegerResult(BaseModel):
    value: int = Field(description="The result.")


class BigIntegerResult(BaseModel):
    value: str = Field(description="The exact integer, as a decimal string (it may exceed 64 bits).")
    digits: int = Field(description="How many decimal digits the value has (without the sign).")


class TextResult(BaseModel):
    text: str = Field(description="The resulting text.")


class CheckResult(BaseModel):
    valid: bool = Field(description="Whether the input passed the check.")
    reason: str = Field(description="Why it failed, or 'ok'.")


def invalid(message: str) -> AppError:
    """The one error kind stateless tools raise: the input was wrong; the message says what to pass."""
    return AppError("invalid", message)


class rejecting:  # noqa: N801 - used like a function: `with rejecting(OverflowError, "..."):`
    """Turn the given exceptions of a computation into `invalid(message)`: the input was out of range.

    A class rather than `contextlib.contextmanager` so type checkers know it never swallows an exception.
    """

    def __init__(self, errors: type[Exception] | tuple[type[Exception], ...], message: str) -> None:
        self.errors, self.message = errors, message

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is not None and isinstance(exc, self.errors):
            raise invalid(self.message) from None


def clean(x: float, what: str = "result") -> float:
    """A finite float rounded to SIGNIFICANT_DIGITS, so outputs are stable and free of float noise."""
    if math.isnan(x) or math.isinf(x):
        raise invalid(f"the {what} is not a finite number (overflow or undefined); use smaller inputs")
    if x == 0:
        return 0.0
    digits = SIGNIFICANT_DIGITS - int(math.floor(math.log10(abs(x)))) - 1
    return round(x, digits) + 0.0  # "+ 0.0" turns -0.0 into 0.0


def big_result(n: int) -> BigIntegerResult:
    text = str(n)
    return BigIntegerResult(value=text, digits=len(text.lstrip("-")))


def parse_int(text: str, what: str, max_digits: int) -> int:
    """An integer from a decimal string (optional sign, '_' or ',' separators allowed)."""
    cleaned = text.strip().replace("_", "").replace(",", "")
    body = cleaned.lstrip("+-")
    if not body.isdigit() or not body.isascii() or cleaned.count("-") + cleaned.count("+") > 1:
        raise invalid(f"{what} must be a whole number written in decimal digits, e.g. '12345', got {text!r}")
    if len(body) > max_digits:
        raise invalid(f"{what} has {len(body)} digits; at most {max_digits} are allowed")
    return int(cleaned)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (only finite numbers are)")


def strict_loads(text: str) -> Any:
    """json.loads without Python's NaN/Infinity extension (which other JSON parsers reject)."""
    return json.loads(text, parse_constant=_no_constants)
