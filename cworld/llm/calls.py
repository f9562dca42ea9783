"""Every model call an episode makes, recorded where the episode can read it even after a timeout.

    with recording(episode.model_calls):
        ...  # every gateway call in this task (and the tasks it starts) appends a `ModelCall`

A context variable rather than a parameter: the agent, its planner and the World Engine all call the gateway
from inside the episode's task, and none of them needs to know an episode is listening. A call cut off by the
episode's timeout is recorded as `cancelled` with the seconds it had run, so a timed-out episode says where its
time went.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar

from cworld.data_model import ModelCall
from cworld.llm.completion import Completion

_SINK: ContextVar[list[ModelCall] | None] = ContextVar("cworld_model_calls", default=None)
_TURN: ContextVar[int | None] = ContextVar("cworld_model_turn", default=None)
_DEADLINE: ContextVar[float | None] = ContextVar("cworld_episode_deadline", default=None)
#: The shortest per-call timeout an episode's deadline leaves a model call.
MIN_CALL_S = 5.0


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """Model calls made inside the block (this task and the tasks it starts) must end within `seconds`: the
    episode's timeout, so that one slow reply cannot eat the whole episode (`call_timeout`)."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def call_timeout(configured: float) -> float:
    """A call's timeout under the episode's deadline: at most half the time the episode has left (so a second
    call still fits), never under `MIN_CALL_S`; `configured` outside an episode."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return configured
    return min(configured, max(MIN_CALL_S, (deadline - time.monotonic()) / 2))


@contextlib.contextmanager
def recording(sink: list[ModelCall]) -> Iterator[list[ModelCall]]:
    """Model calls made inside the block (this task and the tasks it starts) are appended to `sink`."""
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)


def at_turn(turn: int) -> None:
    """The episode's current turn, stamped on the calls that follow (inside a `recording` block)."""
    _TURN.set(turn)


class CallRecord:
    """One call being made: started now, finished by `done`, `failed` or `cancelled`."""

    def __init__(self, role: str, model: str, max_tokens: int | None) -> None:
        self.sink = _SINK.get()
        self.call = ModelCall(role=role, model=model, turn=_TURN.get(), started_at=time.time(), max_tokens=max_tokens)
        self._start = time.perf_counter()

    def done(self, completion: Completion) -> None:
        self.call.prompt_tokens = completion.usage.prompt_tokens
        self.call.completion_tokens = completion.usage.completion_tokens
        self.call.finish_reason, self.call.cached = completion.finish_reason, completion.cached
        self.call.cost_usd = completion.cost_usd
        self._close("ok")

    def failed(self, exc: BaseException) -> None:
        self._close("error", str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__)

    def cancelled(self) -> None:
        self._close("cancelled", "cut off in flight (the episode's timeout or a stop)")

    def _close(self, outcome: str, error: str | None = None) -> None:
        if self.sink is None:
            return
        self.call.seconds = round(time.perf_counter() - self._start, 3)
        self.call.outcome, self.call.error = outcome, error  # type: ignore[assignment]
        self.sink.append(self.call)
