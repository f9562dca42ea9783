"""The World Engine protocol: predict a tool's response from the tool, the arguments and the session so far.

The session log is the truth about an episode: an engine may keep a faster view of it (the schema
engine's simulated world), but must rebuild that view from the log whenever the two disagree, e.g. when
the controller recorded an injected fault instead of the engine's answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from cworld.data_model import PublicTask, ToolResult, ToolSpec, read_json
from cworld.engine.world.task import task_digest
from cworld.errors import UsageError


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces: equal arguments give equal text (cache keys, digests, prompts)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class LogEntry(BaseModel):
    tool: str = Field(description="tool id, `server/name`")
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: ToolResult

    def fingerprint(self) -> str:
        return f"{self.tool}\x1f{canonical_json(self.arguments)}"


class ReplayedView(Protocol):
    """An engine's view of a session log: how many entries it reflects, and the call it just answered."""

    applied: int
    pending: Any


V = TypeVar("V", bound=ReplayedView)


class SessionLog(BaseModel):
    """The calls and responses of one episode so far; the engine's memory of the simulated world.

    `context` is the public part of the task the episode serves (query, constraints as stated, tools,
    scenario; never the gold plan, hints or ground truth): engines ground the simulated world in it
    (docs/world-engine.md, "Grounding"). None for a bare session."""

    seed: int = 0
    context: PublicTask | None = None
    entries: list[LogEntry] = Field(default_factory=list)
    #: Engines' private views of this session (e.g. the schema engine's world), never serialized.
    _views: dict[str, Any] = PrivateAttr(default_factory=dict)

    def record(self, tool: str, arguments: dict[str, Any], result: ToolResult) -> None:
        self.entries.append(LogEntry(tool=tool, arguments=arguments, result=result))

    def digest(self, upto: int | None = None) -> str:
        """A short hash of the seed and the entries so far: equal histories, equal digests."""
        hasher = hashlib.sha256(str(self.seed).encode())
        if self.context is not None:  # a bare session keeps the digest it always had (and its cache entries)
            hasher.update(f"context:{task_digest(self.context)}".encode())
        for entry in self.entries[:upto]:
            hasher.update(entry.fingerprint().encode())
            hasher.update(canonical_json([entry.result.is_error, entry.result.structured_content, entry.result.text]).encode())
        return hasher.hexdigest()[:16]

    def view(self, key: str) -> Any:
        return self._views.get(key)

    def set_view(self, key: str, value: Any) -> None:
        self._views[key] = value

    def replayed_view(self, key: str, replay: Callable[[], V], continues: Callable[[V, LogEntry], bool]) -> V:
        """An engine's view of this log (`applied`: the entries it reflects; `pending`: the call it just
        answered), kept current without replaying the log on every call: as it is when it reflects every
        entry; moved on by one when the one new entry is the call it answered (`continues`); else rebuilt
        (`replay`: the log edited or grown by someone else)."""
        found: V | None = self._views.get(key)
        count = len(self.entries)
        if found is not None and found.applied == count:
            return found
        if found is not None and found.applied + 1 == count and continues(found, self.entries[-1]):
            found.applied, found.pending = count, None
            return found
        found = self._views[key] = replay()
        return found

    @classmethod
    def load(cls, path: Path) -> SessionLog:
        """A session file: this model's JSON, or a JSON list of {tool, arguments, result} entries."""
        raw = read_json(path, UsageError, f"session file {path}")
        try:
            return cls.model_validate({"entries": raw} if isinstance(raw, list) else raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise UsageError(f"session file {path}: {where}: {first['msg']}") from None


class WorldEngine(Protocol):
    name: str

    async def respond(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult:
        """A realistic response; tool faults are ToolResults with is_error, never exceptions."""
        ...
