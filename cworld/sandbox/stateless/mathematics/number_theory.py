"""Deterministic number-theory helpers for the math server: primality, factoring, sieves, Fibonacci."""

from __future__ import annotations

import math
from functools import cache
from itertools import compress

#: Miller-Rabin with these bases is exact for every n below 3.3e24.
_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


def is_prime(n: int) -> bool:
    if n < 2:
        return False
    for p in _MR_BASES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    return all(_passes(n, a, d, s) for a in _MR_BASES)


def _passes(n: int, a: int, d: int, s: int) -> bool:
    x = pow(a, d, n)
    if x in (1, n - 1):
        return True
    for _ in range(s - 1):
        x = x * x % n
        if x == n - 1:
            return True
    return False


def _pollard_rho(n: int) -> int:
    """A non-trivial factor of composite n (Brent's variant; fixed constants, so deterministic)."""
    if n % 2 == 0:
        return 2
    for c in range(1, 100):
        x = y = 2
        d = 1
        while d == 1:
            x = (x * x + c) % n
            y = (y * y + c) % n
            y = (y * y + c) % n
            d = math.gcd(abs(x - y), n)
        if d != n:
            return d
    raise ArithmeticError(f"no factor found for {n}")  # unreachable for n < 1e18


def factorize(n: int) -> list[int]:
    """Prime factors of n >= 2 in ascending order, with repetition."""
    factors: list[int] = []
    for p in (2, 3, 5, 7, 11, 13):
        while n % p == 0:
            factors.append(p)
            n //= p
    stack = [n] if n > 1 else []
    while stack:
        m = stack.pop()
        if is_prime(m):
            factors.append(m)
        else:
            d = _pollard_rho(m)
            stack.extend((d, m // d))
    return sorted(factors)


#: Sieving primes up to this bound cover segments up to SIEVE_BOUND**2 = 1e12.
SIEVE_BOUND = 1_000_000


@cache
def _small_primes() -> tuple[int, ...]:
    limit = SIEVE_BOUND
    sieve = bytearray([1]) * (limit + 1)
    sieve[0:2] = b"\x00\x00"
    for i in range(2, math.isqrt(limit) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytes(len(range(i * i, limit + 1, i)))
    return tuple(compress(range(limit + 1), sieve))


def primes_between(start: int, end: int) -> list[int]:
    """Primes p with start <= p <= end <= 1e12, by a segmented sieve (end - start must be modest)."""
    start = max(start, 2)
    if end < start:
        return []
    segment = bytearray([1]) * (end - start + 1)
    root = math.isqrt(end)
    for p in _small_primes():
        if p > root:
            break
        first = max(p * p, (start + p - 1) // p * p)
        if first <= end:
            segment[first - start :: p] = bytes(len(range(first, end + 1, p)))
    return list(compress(range(start, end + 1), segment))


def fibonacci(n: int) -> int:
    """F(n) by fast doubling: F(0) = 0, F(1) = 1."""

    def pair(k: int) -> tuple[int, int]:
        if k == 0:
            return 0, 1
        a, b = pair(k // 2)
        c = a * (2 * b - a)
        d = a * a + b * b
        return (d, c + d) if k % 2 else (c, d)

    return pair(n)[0]


def in_base(n: int, base: int) -> str:
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if n == 0:
        return "0"
    sign, n = ("-", -n) if n < 0 else ("", n)
    out: list[str] = []
    while n:
        n, r = divmod(n, base)
        out.append(digits[r])
    return sign + "".join(reversed(out))
