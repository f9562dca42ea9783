"""Jittered exponential back-off on transient provider failures (tenacity), none on permanent ones.

The policy is data so tests can zero the waits: `Gateway(retry=RetryPolicy.immediate())`, or
`set_default_retry(RetryPolicy.immediate())` once in a conftest for every gateway built afterwards.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    wait_exponential,
    wait_random,
)

from cworld.llm.failures import is_timeout, is_transient

log = logging.getLogger("cworld.llm")
T = TypeVar("T")
TIMEOUT_ATTEMPTS = 2
"""A call that timed out is tried once more, not `attempts` times: the same request to the same slow model is
slow again, and each try costs a whole timeout of the episode's time."""


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    initial_s: float = 1.0
    max_s: float = 30.0
    jitter_s: float = 1.0

    @classmethod
    def immediate(cls, attempts: int = 5) -> RetryPolicy:
        """Same number of attempts, no waiting: for tests and benchmarks."""
        return cls(attempts=attempts, initial_s=0.0, max_s=0.0, jitter_s=0.0)


_default = RetryPolicy()


def default_retry() -> RetryPolicy:
    return _default


def set_default_retry(policy: RetryPolicy) -> None:
    """Change the policy of gateways built without an explicit `retry=` (a test suite zeroes it)."""
    global _default
    _default = policy


def _log_retry(state: RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    log.info("transient LLM failure (%s), attempt %d, retrying in %.2fs", type(exc).__name__, state.attempt_number, wait)


class Attempts:
    """Counts attempts so the final error can say how many were made."""

    def __init__(self) -> None:
        self.count = 0


async def call_with_retry(fn: Callable[[], Awaitable[T]], policy: RetryPolicy, attempts: Attempts) -> T:
    async def counted() -> T:
        attempts.count += 1
        return await fn()

    def stop(state: RetryCallState) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        limit = min(policy.attempts, TIMEOUT_ATTEMPTS) if exc is not None and is_timeout(exc) else policy.attempts
        return state.attempt_number >= max(1, limit)

    retrying = AsyncRetrying(
        stop=stop,
        wait=wait_exponential(multiplier=policy.initial_s, max=policy.max_s) + wait_random(0, policy.jitter_s),
        retry=retry_if_exception(is_transient),
        before_sleep=_log_retry,
        reraise=True,
    )
    return await retrying(counted)
