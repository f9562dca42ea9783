"""Token and cost accounting for one run, per role and per model, so judge cost is recorded, not guessed.

A provider call adds its tokens and cost. A cache hit adds only to `cache_hits`: it consumed nothing.
"""

from __future__ import annotations

import threading

from cworld.data_model import Usage
from cworld.llm.completion import Completion


class UsageLedger:
    def __init__(self) -> None:
        self._by_role: dict[str, Usage] = {}
        self._by_model: dict[str, Usage] = {}
        self._lock = threading.Lock()

    def record(self, role: str, completion: Completion) -> None:
        delta = usage_of(completion)
        with self._lock:
            self._by_role.setdefault(role, Usage()).add(delta)
            self._by_model.setdefault(completion.model, Usage()).add(delta)

    def by_role(self) -> dict[str, Usage]:
        """A snapshot: callers may keep it while the run goes on."""
        with self._lock:
            return {k: v.model_copy() for k, v in self._by_role.items()}

    def by_model(self) -> dict[str, Usage]:
        with self._lock:
            return {k: v.model_copy() for k, v in self._by_model.items()}

    def total(self) -> Usage:
        out = Usage()
        for usage in self.by_role().values():
            out.add(usage)
        return out


def usage_of(completion: Completion) -> Usage:
    """What one completion consumed (`Usage.spent`)."""
    return Usage.spent(cached=completion.cached, prompt_tokens=completion.usage.prompt_tokens,
                       completion_tokens=completion.usage.completion_tokens, cost_usd=completion.cost_usd)
