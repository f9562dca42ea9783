"""Arithmetic tools of the math server (a mixin): expressions, big integers, combinatorics, primes, bases,
rounding and quadratics. Big integers travel as decimal strings (JSON numbers lose precision past 2**53)."""

from __future__ import annotations

import cmath
import math
from decimal import (
    ROUND_CEILING,
    ROUND_DOWN,
    ROUND_FLOOR,
    ROUND_HALF_EVEN,
    ROUND_HALF_UP,
    ROUND_UP,
    Decimal,
    localcontext,
)
from typing import Annotated, Literal

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.mathematics import number_theory as nt
from cworld.sandbox.stateless.mathematics.expressions import evaluate
from cworld.sandbox.stateless.mathematics.models import (
    BaseConversion,
    ExpressionResult,
    FactorialOf,
    Factorization,
    FibonacciIndex,
    GcdLcm,
    PrimeCheck,
    PrimeRange,
    QuadraticSolution,
    Root,
    Whole,
)
from cworld.sandbox.stateless.mathematics.number_theory import in_base
from cworld.sandbox.stateless.shared import (
    BigIntegerResult,
    NumberResult,
    Real,
    big_result,
    clean,
    invalid,
    parse_int,
    rejecting,
)

BIG_DIGITS = 1000
#: Results of exact integer tools stay below this many bits (~4,000 digits: Python's str() limit is 4,300).
MAX_RESULT_BITS = 13_000

_ROUNDING = {
    "half_even": ROUND_HALF_EVEN,
    "half_up": ROUND_HALF_UP,
    "down": ROUND_DOWN,
    "up": ROUND_UP,
    "floor": ROUND_FLOOR,
    "ceiling": ROUND_CEILING,
}


class ArithmeticTools:
    @tool(read_only=True)
    def evaluate_expression(
        self,
        expression: Annotated[
            str,
            Field(
                description="An arithmetic expression, e.g. '2 * (3 + 4) ** 2 / "
                "sqrt(9)'. Operators + - * / // % ** and parentheses; functions sqrt, "
                "cbrt, exp, ln, log(x[, base]), log10, log2, sin, cos, tan, asin, acos, "
                "atan, atan2, sinh, cosh, tanh, degrees, radians, abs, floor, ceil, "
                "round, min, max, hypot, gcd, factorial; constants pi, e, tau.",
                min_length=1,
                max_length=500,
            ),
        ],
    ) -> ExpressionResult:
        """Evaluate an arithmetic expression safely (parsed, never executed as code). Integer arithmetic
        is exact; trigonometry uses radians; '^' is not power (use '**'). At most 500 characters."""
        value = evaluate(expression)
        if isinstance(value, int):  # floats cannot hold integers past ~1e308: then only `exact` carries it
            as_float = clean(float(value)) if value.bit_length() <= 1000 else None
            return ExpressionResult(value=as_float, exact=str(value), is_integer=True)
        return ExpressionResult(value=clean(value), exact=repr(value), is_integer=False)

    @tool(read_only=True)
    def big_integer_arithmetic(
        self,
        a: Annotated[
            str,
            Field(
                description="First integer as decimal digits (up to 1000), e.g. "
                "'123456789012345678901234567890'.",
                min_length=1,
                max_length=1100,
            ),
        ],
        b: Annotated[
            str,
            Field(
                description="Second integer as decimal digits (up to 1000). For 'power' it is "
                "the exponent, 0..100000.",
                min_length=1,
                max_length=1100,
            ),
        ],
        operation: Annotated[
            Literal["add", "subtract", "multiply", "floor_divide", "modulo", "power"],
            Field(description="What to compute: a+b, a-b, a*b, a//b, a mod b, or a**b."),
        ],
    ) -> BigIntegerResult:
        """Exact arithmetic on integers too large for ordinary numbers. floor_divide rounds toward minus
        infinity and modulo takes the sign of b (as in Python). Results are limited to about 4,000 digits."""
        x, y = parse_int(a, "a", BIG_DIGITS), parse_int(b, "b", BIG_DIGITS)
        if operation in ("floor_divide", "modulo") and y == 0:
            raise invalid(f"cannot {operation.replace('_', ' ')} by zero; pass a non-zero b")
        if operation == "power":
            if not 0 <= y <= 100_000:
                raise invalid("the exponent b must be a whole number from 0 to 100000")
            if abs(x) > 1 and x.bit_length() * y > MAX_RESULT_BITS:
                raise invalid("a**b would have more than about 4,000 digits; use a smaller base or exponent")
        ops = {
            "add": lambda: x + y,
            "subtract": lambda: x - y,
            "multiply": lambda: x * y,
            "floor_divide": lambda: x // y,
            "modulo": lambda: x % y,
            "power": lambda: x**y,
        }
        return big_result(ops[operation]())

    @tool(read_only=True)
    def factorial(self, n: FactorialOf) -> BigIntegerResult:
        """n! = 1·2·…·n, exact (0! = 1). 1000! has 2,568 digits."""
        return big_result(math.factorial(n))

    @tool(read_only=True)
    def combinations(
        self,
        n: Annotated[int, Field(description="Size of the set, 0..10000.", ge=0, le=10_000)],
        k: Annotated[int, Field(description="How many to choose, 0..10000.", ge=0, le=10_000)],
    ) -> BigIntegerResult:
        """The number of ways to choose k items from n when order does not matter: C(n, k) = n!/(k!(n-k)!).
        0 when k > n."""
        return big_result(math.comb(n, k))

    @tool(read_only=True)
    def permutations(
        self,
        n: Annotated[int, Field(description="Size of the set, 0..1000.", ge=0, le=1000)],
        k: Annotated[int, Field(description="How many to arrange, 0..1000.", ge=0, le=1000)],
    ) -> BigIntegerResult:
        """The number of ordered arrangements of k items out of n: P(n, k) = n!/(n-k)!. 0 when k > n."""
        return big_result(math.perm(n, k))

    @tool(read_only=True)
    def gcd_lcm(
        self,
        numbers: Annotated[
            list[Whole],
            Field(description="Two to 100 integers, each within ±1e15.", min_length=2, max_length=100),
        ],
    ) -> GcdLcm:
        """Greatest common divisor and least common multiple of a list of integers (signs are ignored)."""
        return GcdLcm(gcd=math.gcd(*numbers), lcm=str(math.lcm(*numbers)))

    @tool(read_only=True)
    def is_prime(
        self,
        n: Annotated[int, Field(description="The integer to test, up to 1e15.", ge=-(10**15), le=10**15)],
    ) -> PrimeCheck:
        """Whether n is prime (exact, deterministic Miller-Rabin). Numbers below 2 are not prime."""
        if nt.is_prime(n):
            return PrimeCheck(is_prime=True, smallest_factor=None)
        return PrimeCheck(is_prime=False, smallest_factor=nt.factorize(n)[0] if n >= 2 else None)

    @tool(read_only=True)
    def prime_factors(
        self, n: Annotated[int, Field(description="The integer to factor, 2..1e15.", ge=2, le=10**15)]
    ) -> Factorization:
        """The prime factorization of n, e.g. 360 = 2³·3²·5 gives factors [2,2,2,3,3,5]."""
        factors = nt.factorize(n)
        powers = {str(p): factors.count(p) for p in sorted(set(factors))}
        return Factorization(factors=factors, powers=powers)

    @tool(read_only=True)
    def primes_in_range(
        self,
        start: Annotated[int, Field(description="Lower bound (inclusive), 0..1e12.", ge=0, le=10**12)],
        end: Annotated[
            int,
            Field(description="Upper bound (inclusive), 0..1e12, at most start + 100000.", ge=0, le=10**12),
        ],
        limit: Annotated[
            int, Field(description="How many primes to list (the count covers all).", ge=0, le=10_000)
        ] = 100,
    ) -> PrimeRange:
        """Count and list the primes between start and end inclusive (a window of at most 100,000)."""
        if end < start:
            raise invalid(f"end {end} is before start {start}; pass start <= end")
        if end - start > 100_000:
            raise invalid("the range spans more than 100000 numbers; split it into smaller windows")
        primes = nt.primes_between(start, end)
        return PrimeRange(count=len(primes), primes=primes[:limit], truncated=len(primes) > limit)

    @tool(read_only=True)
    def fibonacci(self, n: FibonacciIndex) -> BigIntegerResult:
        """The n-th Fibonacci number, exact: 0, 1, 1, 2, 3, 5, 8, ..."""
        return big_result(nt.fibonacci(n))

    @tool(read_only=True)
    def convert_base(
        self,
        value: Annotated[
            str,
            Field(
                description="The integer written in from_base, e.g. 'ff' or '-1011'. "
                "Underscores are ignored.",
                min_length=1,
                max_length=500,
            ),
        ],
        from_base: Annotated[int, Field(description="Base the value is written in, 2..36.", ge=2, le=36)],
        to_base: Annotated[int, Field(description="Base to write it in, 2..36.", ge=2, le=36)],
    ) -> BaseConversion:
        """Rewrite an integer from one base to another (binary 2, octal 8, decimal 10, hex 16, up to 36)."""
        text = value.strip().replace("_", "")
        with rejecting(
            ValueError,
            f"{value!r} is not an integer in base {from_base}; use digits 0-9 and letters A-Z below the base",
        ):
            n = int(text, from_base)
        return BaseConversion(value=in_base(n, to_base), decimal=str(n))

    @tool(read_only=True)
    def round_number(
        self,
        value: Annotated[Real, Field(description="The number to round.")],
        decimals: Annotated[
            int,
            Field(
                description="Digits after the point to keep (negative rounds to tens, "
                "hundreds, ...), -15..15.",
                ge=-15,
                le=15,
            ),
        ] = 0,
        mode: Annotated[
            Literal["half_even", "half_up", "down", "up", "floor", "ceiling"],
            Field(
                description="half_up: 2.5->3 (school rounding); half_even: 2.5->2 (banker's); "
                "down/up: toward/away from zero; floor/ceiling: toward -inf/+inf."
            ),
        ] = "half_up",
    ) -> NumberResult:
        """Round a number to a number of decimals with an explicit rounding rule. The number is taken as
        written in decimal, so 2.675 rounds half-up to 2.68."""
        exact = Decimal(repr(float(value)))
        with localcontext(prec=60):  # 1e15 to 15 decimals needs 31 digits; the default context has 28
            step = Decimal(1).scaleb(-decimals)
            rounded = (exact / step).quantize(Decimal(1), rounding=_ROUNDING[mode]) * step
        return NumberResult(value=float(rounded) + 0.0)

    @tool(read_only=True)
    def solve_quadratic(
        self,
        a: Annotated[Real, Field(description="Coefficient of x² (0 makes the equation linear).")],
        b: Annotated[Real, Field(description="Coefficient of x.")],
        c: Annotated[Real, Field(description="Constant term.")],
    ) -> QuadraticSolution:
        """Solve a·x² + b·x + c = 0 over the complex numbers. With a = 0 it solves the linear equation
        b·x + c = 0; fails when a and b are both 0."""
        if a == 0:
            if b == 0:
                raise invalid(
                    "with a = 0 and b = 0 there is no variable left to solve for; pass a or b non-zero"
                )
            return QuadraticSolution(
                discriminant=0.0, kind="linear", roots=[Root(real=clean(-c / b), imaginary=0)]
            )
        disc = b * b - 4 * a * c
        if disc == 0:
            return QuadraticSolution(
                discriminant=0.0, kind="one_real", roots=[Root(real=clean(-b / (2 * a)), imaginary=0)]
            )
        if disc > 0:  # q-form avoids cancellation when b² >> 4ac
            q = -(b + math.copysign(math.sqrt(disc), b)) / 2
            reals = sorted((q / a, c / q))
            return QuadraticSolution(
                discriminant=clean(disc),
                kind="two_real",
                roots=[Root(real=clean(r), imaginary=0) for r in reals],
            )
        root = (-b + cmath.sqrt(disc)) / (2 * a)
        return QuadraticSolution(
            discriminant=clean(disc),
            kind="complex_pair",
            roots=[Root(real=clean(root.real), imaginary=clean(s * abs(root.imag))) for s in (1, -1)],
        )
