"""The run folder: `trajectories.jsonl`, one episode per line, appended and fsynced as each one ends, and the
records those lines refer to.

    trajectories.jsonl   one compact line per episode (`cworld.data_model.compact`)
    tasks.jsonl          {"sha256", "task"}: one line per distinct task an episode refers to
    states.jsonl         {"sha256", "state"}: one line per initial state a full end state is diffed from

A task (or a state) line is written and fsynced before the first trajectory line that refers to it, so a
run cut at any point holds every record its lines name. A process killed mid-write leaves at most one torn
last line per file. Opening the store for a resume cuts those fragments off (so the next append starts on
a fresh line) and collects the ids of every episode on record, which are then skipped: a resumed run loses
nothing and duplicates nothing.

Several processes may append to one run folder at once (`cworld serve --workers N`, a trainer's workers
behind the verifiers door). They take turns under the folder's lock (`.trajectories.lock`, an advisory
`flock`): each appends its batch of lines with one `write` to the end of the file, so no line is ever
interleaved with another's, and a record another process wrote is read back from the file's tail rather
than written twice. One file, not one per process merged on read, because every reader (`cworld judge`,
`report`, `export-sft`, resume) reads `trajectories.jsonl` as it is. The lock covers the writes and the
fsync of the task and state records (a line must never be on disk before the record it names); the
trajectory lines are fsynced after it is released, so processes do not queue behind each other's fsync.

Two ways to append: `append` returns once the line is fsynced (`cworld run`, the Inspect door); `write`
returns once it is written, and fsyncs it right after, off the event loop (the servers: an answer does not
wait for the disk, and a killed server loses nothing, the line being in the file already).

`read_trajectories` is the one reader: it resolves the references and returns full `Trajectory` objects
(task and end state included), streaming, for runs of this format and of the old one (version 1 lines:
the full task and end state in every line).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

from cworld.data_model import Task, Trajectory
from cworld.data_model.compact import (
    decode_line,
    encode_line,
    is_compact,
    needs_base,
    sha256_text,
    task_sha256,
)
from cworld.errors import UsageError

try:
    import fcntl
except ImportError:  # pragma: no cover - no flock (Windows): one process per run folder
    fcntl = None  # type: ignore[assignment]

TRAJECTORIES_FILE = "trajectories.jsonl"
TASKS_FILE = "tasks.jsonl"
STATES_FILE = "states.jsonl"
LOCK_FILE = ".trajectories.lock"
log = logging.getLogger(__name__)


class TrajectoryStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / TRAJECTORIES_FILE
        self._pending: list[tuple[Trajectory, asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None
        self._syncer: asyncio.Task[None] | None = None
        self._unsynced = False
        self._on_disk: dict[str, set[str]] = {TASKS_FILE: set(), STATES_FILE: set()}
        """The hashes in the task and state files, as far as they were read (`_read_to`)."""
        self._read_to: dict[str, int] = {TASKS_FILE: 0, STATES_FILE: 0}
        self._task_hashes: dict[str, tuple[Task, str]] = {}
        """task id -> (the task object, its hash): a run hashes each task once, not once per episode."""
        self.infra_on_record: set[str] = set()
        """Episodes whose latest record is `infra_error`, left out of `open(retry_infra=True)`'s set."""

    def open(self, *, resume: bool, retry_infra: bool = False) -> set[str]:
        """Prepare for appending; the episode ids already on record (empty for a fresh run). With
        `retry_infra`, an episode whose latest record is `infra_error` is left out: it is to run again
        (`infra_on_record` names those)."""
        self.infra_on_record = set()
        self.folder.mkdir(parents=True, exist_ok=True)
        if not self.path.is_file() or self.path.stat().st_size == 0:
            return set()
        if not resume:
            raise UsageError(f"{self.path} already holds episodes; pass --resume to continue that run "
                             "or --out to start a new one")
        with run_lock(self.folder):  # another process appending now is never mistaken for a torn line
            for name in (TASKS_FILE, STATES_FILE, TRAJECTORIES_FILE):
                if (self.folder / name).is_file():
                    cut_torn_tail(self.folder / name)
        latest = self.latest_records()
        if not retry_infra:
            return set(latest)
        self.infra_on_record = {eid for eid, (_, infra) in latest.items() if infra}
        return set(latest) - self.infra_on_record

    def finished_ids(self) -> set[str]:
        """Every episode id on record, read from each line's head (a line may be large)."""
        return set(self.latest_records())

    def latest_records(self) -> dict[str, tuple[int, bool]]:
        """episode id -> (the line number of its latest record, is that record an `infra_error`)."""
        latest: dict[str, tuple[int, bool]] = {}
        with self.path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if line.strip():
                    latest[_episode_id(line, self.path, lineno)] = (lineno, _is_infra_error(line))
        return latest

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
                await asyncio.to_thread(self._write, [t for t, _ in batch])
            except Exception as exc:  # the disk failed: every waiting episode learns it
                for _, done in batch:
                    done.set_exception(exc)
            else:
                for _, done in batch:
                    done.set_result(None)

    def write(self, trajectory: Trajectory) -> None:
        """One line in the file now, its fsync soon after: for a server that answers an episode's last action
        without waiting for the disk. The line is written before this returns (a killed process loses
        nothing; the records it refers to are fsynced first, as always); the fsync runs off the event loop
        with every line written meanwhile (one fsync for a burst), and `flush` waits for it. The CPU (the
        line's encoding) runs here, on the caller's loop: in a thread it would hold the GIL against the loop."""
        os.close(self._write_unsynced([trajectory]))
        self._unsynced = True
        if self._syncer is None or self._syncer.done():
            self._syncer = asyncio.get_running_loop().create_task(self._sync())

    async def flush(self) -> None:
        """Every line `write` wrote is fsynced when this returns."""
        while self._syncer is not None and not self._syncer.done():
            await self._syncer

    async def _sync(self) -> None:
        while self._unsynced:
            self._unsynced = False
            try:
                await asyncio.to_thread(_fsync, self.path)
            except OSError as exc:  # the lines are in the file; only their durability is in doubt
                log.warning("fsync of %s failed: %s", self.path, exc)

    def _write(self, batch: list[Trajectory]) -> None:
        """The batch's lines (`_write_unsynced`), then their fsync, once the run folder's lock is released."""
        _fsync_closed(self._write_unsynced(batch))

    def _write_unsynced(self, batch: list[Trajectory]) -> int:
        """Encode outside the lock; then, under the run folder's lock, the records the lines refer to that are
        not on disk yet (fsynced), then the lines. One batch at a time in this process (`_drain` runs in one
        thread at a time, `write` on the loop), in the order they ended. The open descriptor, to fsync."""
        records: dict[str, dict[str, str]] = {TASKS_FILE: {}, STATES_FILE: {}}
        lines = [self._encode(t, records) for t in batch]
        with run_lock(self.folder):
            for name, new in records.items():
                known = self._known(name) if new else set()  # what other processes appended meanwhile, too
                missing = [line for sha, line in new.items() if sha not in known]
                if missing:
                    self._read_to[name] = _append_lines(self.folder / name, missing)
                    known.update(new)
            return _append_unsynced(self.path, lines)

    def _encode(self, trajectory: Trajectory, records: dict[str, dict[str, str]]) -> str:
        """The trajectory's line; the task and state records it refers to that this process has not seen on
        disk go to `records` (file -> sha256 -> line; the lock's check in `_write` decides)."""
        task = trajectory.task
        if task is None:
            return encode_line(trajectory, None)
        sha = self._task_hash(task)
        if sha not in self._on_disk[TASKS_FILE] and sha not in records[TASKS_FILE]:
            records[TASKS_FILE][sha] = json.dumps({"sha256": sha, "task": task.model_dump(mode="json")},
                                                  ensure_ascii=False)
        base = None
        if needs_base(trajectory.end_state):
            base = _initial_state(task.initial_state_seed)
            if base[0] not in self._on_disk[STATES_FILE] and base[0] not in records[STATES_FILE]:
                records[STATES_FILE][base[0]] = json.dumps({"sha256": base[0], "state": base[1]}, ensure_ascii=False)
        return encode_line(trajectory, sha, base)

    def _task_hash(self, task: Task) -> str:
        cached = self._task_hashes.get(task.id)
        if cached is None or cached[0] is not task:
            cached = self._task_hashes[task.id] = (task, task_sha256(task))
        return cached[1]

    def _known(self, name: str) -> set[str]:
        """The hashes in the task (or state) file: what was read before, and the whole lines appended since
        (by this process or another one serving into the same folder)."""
        known, offset = self._on_disk[name], self._read_to[name]
        path = self.folder / name
        if not path.is_file() or path.stat().st_size <= offset:
            return known
        with path.open("rb") as fh:
            fh.seek(offset)
            tail = fh.read()
        whole = tail.rfind(b"\n") + 1  # a line still being written is read next time
        known.update(_head_sha(line) for line in tail[:whole].decode("utf-8").splitlines() if line.strip())
        self._read_to[name] = offset + whole
        return known

    def __iter__(self) -> Iterator[Trajectory]:
        return read_trajectories(self.folder)


def read_trajectories(folder: Path) -> Iterator[Trajectory]:
    """Every episode of a run folder as a full `Trajectory`, streaming (memory stays flat in the run's
    length). Compact lines get their task and end state resolved (episodes of one task share one `Task`
    object: treat it as read-only); old lines load as they are. A torn last line (a crash mid-write) is
    skipped; any other bad line, or a reference the folder cannot resolve, is a one-line error. An episode
    recorded more than once (an `infra_error` re-run on resume) is yielded once: its latest record."""
    path = folder / TRAJECTORIES_FILE
    if not path.is_file():
        return
    refs = _Refs(folder)
    superseded = _superseded_lines(path)
    for lineno, line, last in _numbered(path):
        if lineno in superseded:
            continue
        try:
            record = json.loads(line)
            yield refs.resolve(record) if is_compact(record) else Trajectory.model_validate(record)
        except (json.JSONDecodeError, ValueError, KeyError, TypeError) as exc:
            if last and not line.endswith("\n"):
                return
            first = str(exc).splitlines()[0]
            raise UsageError(f"{path}:{lineno}: not a valid trajectory line ({first})") from None


def run_tasks(folder: Path) -> list[Task]:
    """The distinct tasks a run folder's episodes refer to (its task file; none for a folder without one)."""
    return list(_Refs(folder).tasks().values())


class _Refs:
    """The task and state files of a run folder, read on the first line that needs them."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._tasks: dict[str, Task] | None = None
        self._states: dict[str, str] | None = None

    def resolve(self, record: dict[str, Any]) -> Trajectory:
        task = None
        if "task_ref" in record:
            sha = record["task_ref"]["sha256"]
            task = self.tasks().get(sha)
            if task is None:
                raise UsageError(f"{self.folder / TASKS_FILE} lacks task {record['task_ref'].get('id')} "
                                 f"({sha[:12]}) that an episode refers to; restore the run folder's task file")
        base = None
        if "end_state_diff" in record:
            sha = record["end_state_diff"]["base"]
            text = self.states().get(sha)
            if text is None:
                raise UsageError(f"{self.folder / STATES_FILE} lacks state {sha[:12]} that an episode's end state "
                                 "is diffed from; restore the run folder's state file")
            base = json.loads(text)  # a fresh copy per episode: the patch is applied in place
        return decode_line(record, task, base)

    def tasks(self) -> dict[str, Task]:
        if self._tasks is None:
            self._tasks = {r["sha256"]: Task.model_validate(r["task"]) for r in self._records(TASKS_FILE)}
        return self._tasks

    def states(self) -> dict[str, str]:
        if self._states is None:
            self._states = {r["sha256"]: json.dumps(r["state"]) for r in self._records(STATES_FILE)}
        return self._states

    def _records(self, name: str) -> Iterator[dict[str, Any]]:
        path = self.folder / name
        if not path.is_file():
            return
        for lineno, line, last in _numbered(path):
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                if last and not line.endswith("\n"):
                    return
                raise UsageError(f"{path}:{lineno}: not valid JSON; restore the run folder's {name}") from None


def _numbered(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line number, line, is it the last) for each non-blank line, reading one line ahead."""
    with path.open(encoding="utf-8") as fh:
        previous: tuple[int, str] | None = None
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            if previous is not None:
                yield previous[0], previous[1], False
            previous = (lineno, line)
        if previous is not None:
            yield previous[0], previous[1], True


@contextmanager
def run_lock(folder: Path) -> Iterator[None]:
    """The run folder's write lock: the processes appending to one run folder take turns (an advisory
    `flock` on `.trajectories.lock`; readers need none)."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    with (folder / LOCK_FILE).open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _append_lines(path: Path, lines: list[str]) -> int:
    """Append and fsync, so a killed process loses at most the lines being written; the file's new size."""
    fd = _append_unsynced(path, lines)
    try:
        os.fsync(fd)
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def _fsync(path: Path) -> None:
    """fsync a file's written data (any descriptor of the file flushes every write made to it)."""
    _fsync_closed(os.open(path, os.O_RDONLY))


def _fsync_closed(fd: int) -> None:
    """fsync the descriptor's file, then close the descriptor, whether or not the fsync failed."""
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _append_unsynced(path: Path, lines: list[str]) -> int:
    """The lines appended to the end of the file in one `write` (O_APPEND; a short write goes on from where
    it stopped); the open descriptor, for the caller to fsync and close."""
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        os.close(fd)
        raise
    return fd


@lru_cache(maxsize=32)
def _initial_state(seed: int) -> tuple[str, dict[str, Any]]:
    """The sandbox state a task's world starts from (`SandboxSession(seed)`, what the live backend starts
    and the state diff compares with), with its hash; a few recent seeds kept (runs go task by task)."""
    from cworld.sandbox.statediff import sandbox_initial_state

    state = sandbox_initial_state(seed)
    return sha256_text(json.dumps(state, sort_keys=True)), state


_SHA = re.compile(r'"sha256"\s*:\s*"([0-9a-f]{64})"')


def _head_sha(line: str) -> str:
    match = _SHA.search(line[:200])
    return match.group(1) if match else str(json.loads(line)["sha256"])


_ID = re.compile(r'"episode_id"\s*:\s*"([^"]+)"')
_INFRA_STATUS = re.compile(r'"status"\s*:\s*"infra_error"')


def _is_infra_error(line: str) -> bool:
    """Is the line's status `infra_error`? A text search first (most lines are not), then the JSON says."""
    if not _INFRA_STATUS.search(line):
        return False
    try:
        return bool(json.loads(line).get("status") == "infra_error")
    except (json.JSONDecodeError, AttributeError):
        return False


def _superseded_lines(path: Path) -> set[int]:
    """Line numbers of records a later line of the same episode id replaces (one pass over line heads);
    a line without a readable id (a torn last line) is left to the reader."""
    last: dict[str, int] = {}
    superseded: set[int] = set()
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            match = _ID.search(line[:400]) if line.strip() else None
            if match is None:
                continue
            earlier = last.get(match.group(1))
            if earlier is not None:
                superseded.add(earlier)
            last[match.group(1)] = lineno
    return superseded


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
