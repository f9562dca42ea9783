"""The run folder's `trajectories.jsonl`: one episode per line, appended and fsynced as each one ends.

A process killed mid-write leaves at most one torn last line. Opening the store for a resume cuts that
fragment off (so the next append starts on a fresh line) and collects the ids of every episode on
record, which are then skipped: a resumed run loses nothing and duplicates nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from cworld.data_model import Trajectory, append_jsonl, iter_jsonl
from cworld.errors import UsageError

TRAJECTORIES_FILE = "trajectories.jsonl"


class TrajectoryStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / TRAJECTORIES_FILE
        self._pending: list[tuple[Trajectory, asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None

    def open(self, *, resume: bool) -> set[str]:
        """Prepare for appending; the episode ids already on record (empty for a fresh run)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if not self.path.is_file() or self.path.stat().st_size == 0:
            return set()
        if not resume:
            raise UsageError(f"{self.path} already holds episodes; pass --resume to continue that run "
                             "or --out to start a new one")
        cut_torn_tail(self.path)
        return self.finished_ids()

    def finished_ids(self) -> set[str]:
        """Read from each line's head (lines are large: they carry the task and the end state)."""
        ids: set[str] = set()
        with self.path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if line.strip():
                    ids.add(_episode_id(line, self.path, lineno))
        return ids

    async def append(self, trajectory: Trajectory) -> None:
        """One line, flushed and fsynced before this returns. Episodes that end while a write is under way
        are written together next, with one fsync (a group commit): many concurrent episodes do not queue
        behind one fsync each."""
        done = asyncio.get_running_loop().create_future()
        self._pending.append((trajectory, done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._drain())
        await done

    async def _drain(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await asyncio.to_thread(append_jsonl, self.path, [t for t, _ in batch])
            except Exception as exc:  # the disk failed: every waiting episode learns it
                for _, done in batch:
                    done.set_exception(exc)
            else:
                for _, done in batch:
                    done.set_result(None)

    def __iter__(self) -> Iterator[Trajectory]:
        if not self.path.is_file():
            return iter(())
        return iter_jsonl(self.path, Trajectory)


_ID = re.compile(r'"episode_id"\s*:\s*"([^"]+)"')


def _episode_id(line: str, path: Path, lineno: int) -> str:
    match = _ID.search(line[:400])
    if match:
        return match.group(1)
    try:
        return str(json.loads(line)["episode_id"])
    except (json.JSONDecodeError, KeyError, TypeError):
        raise UsageError(f"{path}:{lineno}: not a trajectory line; move the file away or fix it") from None


def cut_torn_tail(path: Path) -> int:
    """Truncate a last line that has no newline (a write cut short); returns the bytes removed."""
    with path.open("rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        keep = _last_newline(fh, size) + 1
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())
        return size - keep


def _last_newline(fh: BinaryIO, size: int, block: int = 65536) -> int:
    """The offset of the last b'\\n' (-1 when there is none), reading backwards in blocks."""
    end = size
    while end > 0:
        start = max(0, end - block)
        fh.seek(start)
        chunk = fh.read(end - start)
        found = chunk.rfind(b"\n")
        if found >= 0:
            return start + found
        end = start
    return -1
