"""Argument types and result models of the math server (pydantic: they are the tools' schemas)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from cworld.sandbox.stateless.shared import Real

MAX_SIZE = 20

MAX_VALUES = 10_000


Whole = Annotated[int, Field(ge=-(10**15), le=10**15)]

Money = Annotated[float, Field(description="An amount of money (any currency), 0 to 1e12.", ge=0, le=1e12)]

RatePercent = Annotated[
    float, Field(description="Annual interest rate in percent, e.g. 5 for 5%; 0..100.", ge=0, le=100)
]

Row = Annotated[list[Real], Field(min_length=1, max_length=MAX_SIZE)]

Matrix = list[list[float]]

Values = Annotated[
    list[Real],
    Field(description="The data: numbers between -1e15 and 1e15.", min_length=1, max_length=MAX_VALUES),
]


Percent = Annotated[float, Field(description="Which percentile, 0..100 (50 is the median).", ge=0, le=100)]
Window = Annotated[int, Field(description="How many consecutive values each average covers.", ge=1, le=1000)]

FactorialOf = Annotated[int, Field(description="A whole number from 0 to 1000.", ge=0, le=1000)]
FibonacciIndex = Annotated[int, Field(description="Index n, 0..10000 (F(0)=0, F(1)=1).", ge=0, le=10_000)]


class ExpressionResult(BaseModel):
    value: float | None = Field(description="The value as a float; null if an integer result is too large.")
    exact: str = Field(
        description="The exact result: all digits of an integer, or the float's shortest form."
    )
    is_integer: bool = Field(description="Whether the result is an exact integer.")


class GcdLcm(BaseModel):
    gcd: int = Field(description="Greatest common divisor (always >= 0).")
    lcm: str = Field(description="Least common multiple, as a decimal string (0 if any number is 0).")


class PrimeCheck(BaseModel):
    is_prime: bool
    smallest_factor: int | None = Field(description="The smallest prime factor when composite, else null.")


class Factorization(BaseModel):
    factors: list[int] = Field(description="Prime factors in ascending order, with repetition.")
    powers: dict[str, int] = Field(description="Each distinct prime (as a string key) and its exponent.")


class PrimeRange(BaseModel):
    count: int = Field(description="How many primes lie in the range (inclusive).")
    primes: list[int] = Field(description="The first `limit` of them, ascending.")
    truncated: bool = Field(description="True when more primes exist than were listed.")


class BaseConversion(BaseModel):
    value: str = Field(description="The number written in the target base (digits 0-9 then A-Z).")
    decimal: str = Field(description="The same number in base 10.")


class Root(BaseModel):
    real: float
    imaginary: float = Field(description="0 for a real root.")


class QuadraticSolution(BaseModel):
    discriminant: float = Field(description="b² - 4ac (0 for a linear equation).")
    kind: Literal["two_real", "one_real", "complex_pair", "linear"]
    roots: list[Root] = Field(description="The distinct roots, real ones ascending.")


class CompoundInterest(BaseModel):
    final_amount: float = Field(description="Balance at the end, rounded to cents.")
    interest_earned: float = Field(description="final_amount - principal, rounded to cents.")


class LoanPayment(BaseModel):
    payment: float = Field(description="The fixed payment each period, rounded to cents.")
    total_paid: float = Field(description="payment x number of payments, rounded to cents.")
    total_interest: float = Field(description="total_paid - principal, rounded to cents.")


class PercentChange(BaseModel):
    percent: float = Field(description="(new - old) / |old| x 100; positive is an increase.")
    difference: float = Field(description="new - old.")


def matrix_param(what: str) -> Any:
    return Field(
        description=f"{what}: a list of rows, each a list of numbers; at most {MAX_SIZE}x{MAX_SIZE}.",
        min_length=1,
        max_length=MAX_SIZE,
    )


class MatrixResult(BaseModel):
    matrix: list[list[float]] = Field(description="The resulting matrix, as a list of rows.")
    rows: int
    columns: int


class VectorResult(BaseModel):
    solution: list[float] = Field(description="x such that A·x = b, one value per unknown.")


class Summary(BaseModel):
    count: int = Field(description="How many values.")
    sum: float
    mean: float
    median: float
    modes: list[float] = Field(description="The most frequent value(s), ascending.")
    minimum: float
    maximum: float
    range: float = Field(description="maximum - minimum.")
    population_variance: float
    population_stdev: float
    sample_variance: float | None = Field(description="n-1 denominator; null for a single value.")
    sample_stdev: float | None = Field(description="n-1 denominator; null for a single value.")


class Correlation(BaseModel):
    pearson: float = Field(description="Pearson's r, -1..1 (linear association).")
    spearman: float = Field(
        description="Spearman's rho, -1..1 (association of ranks; ties get average ranks)."
    )


class Regression(BaseModel):
    slope: float
    intercept: float
    r_squared: float = Field(description="Share of the variance of y explained by the line, 0..1.")
    equation: str = Field(description="The fitted line, 'y = slope*x + intercept'.")


class Series(BaseModel):
    values: list[float] = Field(description="The resulting series.")
