"""What tools an agent can see and call in one episode: the access modes `search`, `full` and `rag-K`.

- `search`: at first only `search_tools`; every tool a search returns becomes callable (the paper's
  open-world setting, where finding the right tool is part of the task);
- `full`: the task's candidate tools plus distractors (look-alikes from the same servers and tools
  from others), in a seeded order so the candidates are not simply first;
- `rag-K`: the top K tools retrieved for the task's query, up front.

In every mode a search unlocks what it finds, so an agent can look for an alternative to a tool
that went away. Distractors are drawn from `derive_rng(seed, "distractors:{task}")`: the same for
every agent on one (task, seed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from cworld.agents.search import BM25Search, LazySearch, ToolSearch
from cworld.data_model import Task, ToolSpec
from cworld.errors import UsageError
from cworld.seeding import derive_rng

SEARCH_TOOL = "search_tools"
DEFAULT_DISTRACTORS = 10
DEFAULT_SEARCH_K = 5
_RAG = re.compile(r"^rag-(\d+)$")


@dataclass(frozen=True)
class AccessMode:
    kind: str
    """search | full | rag"""
    k: int = 0
    """rag-K: how many tools are retrieved up front."""

    @property
    def name(self) -> str:
        return f"rag-{self.k}" if self.kind == "rag" else self.kind

    @classmethod
    def parse(cls, text: str) -> AccessMode:
        text = text.strip().lower()
        if text in ("search", "full"):
            return cls(text)
        match = _RAG.match(text)
        if match and int(match.group(1)) > 0:
            return cls("rag", int(match.group(1)))
        raise UsageError(f"unknown tool access mode {text!r}; use search, full or rag-K (e.g. rag-5)")


class Toolbox:
    """The episode's callable tools, by id; `search` finds more (and unlocks them)."""

    def __init__(self, tools: Mapping[str, ToolSpec], task: Task, access: str | AccessMode = "full", *,
                 seed: int = 0, searcher: ToolSearch | None = None, distractors: int = DEFAULT_DISTRACTORS) -> None:
        self.all = dict(tools)
        self.task = task
        self.access = access if isinstance(access, AccessMode) else AccessMode.parse(access)
        self.seed = seed
        self.searcher = searcher or LazySearch(lambda: BM25Search(sorted(self.all.values(), key=lambda t: t.id)))
        self.distractors = distractors
        self._callable: dict[str, ToolSpec] = {}
        self.prepared = False

    async def prepare(self) -> None:
        """Fill the initial callable set for the access mode (rag-K retrieves, so this is async)."""
        if self.access.kind == "full":
            self._unlock(self._full_set())
        elif self.access.kind == "rag":
            self._unlock(await self.searcher.search(self.task.query, self.access.k))
        self.prepared = True

    # --- what the agent sees -------------------------------------------------------------------
    @property
    def offers_search(self) -> bool:
        """Whether `search_tools` is listed to an LLM agent (always callable by scripted agents)."""
        return self.access.kind == "search"

    def visible(self) -> list[ToolSpec]:
        return list(self._callable.values())

    def is_callable(self, tool_id: str) -> bool:
        return tool_id in self._callable

    def spec(self, tool_id: str) -> ToolSpec | None:
        """Any environment tool by id (callable or not): agents use it to reason about alternatives."""
        return self.all.get(tool_id)

    async def search(self, query: str, k: int = DEFAULT_SEARCH_K) -> list[ToolSpec]:
        found = await self.searcher.search(query, max(1, min(k, 20)))
        self._unlock(found)
        return found

    # --- internals ------------------------------------------------------------------------------
    def _unlock(self, specs: list[ToolSpec]) -> None:
        for spec in specs:
            self._callable.setdefault(spec.id, spec)

    def _full_set(self) -> list[ToolSpec]:
        """Candidates plus distractors, shuffled with the (task, seed) stream."""
        rng = derive_rng(self.seed, f"distractors:{self.task.id}")
        candidates = [self.all[t] for t in dict.fromkeys(self.task.tools) if t in self.all]
        chosen = {t.id for t in candidates}
        servers = {t.server for t in candidates}
        near = sorted((t for t in self.all.values() if t.server in servers and t.id not in chosen), key=lambda t: t.id)
        far = sorted((t for t in self.all.values() if t.server not in servers), key=lambda t: t.id)
        n_near = min(len(near), (self.distractors + 1) // 2)
        picked = rng.sample(near, n_near)
        picked += rng.sample(far, min(len(far), self.distractors - n_near))
        out = candidates + picked
        rng.shuffle(out)
        return out
