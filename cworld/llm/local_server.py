"""Which local model server cworld started, and whether it is still alive.

`cworld llm serve-local` (and `llm_local.start` in tests) writes `<workspace>/llm-local/<port>.json`:
the server's pid, its start time (so a reused pid is not mistaken for it), the model and the log file;
whoever waits on the process adds its exit code. When a call to an `api_base` on that port fails to
connect, the gateway asks `down()`: a dead server is a `LocalServerDown` naming the server, its exit
code and what to do, raised at once, instead of the same "Connection error" retried until the retries
are spent. A server not started by cworld (no record) is left to the ordinary retries.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlparse

from cworld.data_model.jsonl import write_text_atomic
from cworld.environment import Workspace
from cworld.llm.failures import ModelUnavailable

RECORD_DIR = "llm-local"
_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})
_EXIT_WAIT_S = 2.0  # a killed server's supervisor needs a moment to write the exit code


class LocalServerDown(ModelUnavailable):
    """The local model server cworld started has exited: no retry can help, so a run stops on it."""

    fatal = True


@dataclass
class ServerRecord:
    pid: int
    port: int
    model: str
    log: str | None = None
    started: float | None = None  # the process's start time (/proc), to tell a reused pid apart
    exit_code: int | None = None


def record_path(port: int, workspace: Path | None = None) -> Path:
    root = workspace if workspace is not None else Workspace.resolve().root
    return root / RECORD_DIR / f"{port}.json"


def write_record(record: ServerRecord, workspace: Path | None = None) -> Path:
    """Record a server just started (its start time read now, while it surely runs)."""
    record.started = record.started if record.started is not None else _start_time(record.pid)
    path = record_path(record.port, workspace)
    write_text_atomic(path, json.dumps(asdict(record)))
    return path


def record_exit(port: int, pid: int, code: int, workspace: Path | None = None) -> None:
    """Add the exit code to the record of this server (not to a newer one on the same port)."""
    found = read_record(port, workspace)
    if found is not None and found.pid == pid:
        found.exit_code = code
        write_record(found, workspace)


def read_record(port: int, workspace: Path | None = None) -> ServerRecord | None:
    try:
        return ServerRecord(**json.loads(record_path(port, workspace).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def local_port(api_base: str | None) -> int | None:
    """The port of an api_base on this machine, else None."""
    if not api_base:
        return None
    try:
        url = urlparse(api_base)
        return url.port if url.hostname in _LOCAL_HOSTS else None
    except ValueError:
        return None


def alive(record: ServerRecord) -> bool:
    """The recorded process still runs (a zombie, or another process with its pid, does not count)."""
    if record.exit_code is not None:
        return False
    try:
        os.kill(record.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = _stat(record.pid)
    if stat is None:
        return True  # no /proc: trust kill(0)
    zombie = stat[0] == "Z"
    return not zombie and (record.started is None or _start_time(record.pid) == record.started)


def down(api_base: str | None, workspace: Path | None = None) -> LocalServerDown | None:
    """The error to raise when api_base is a local server cworld started and it has exited."""
    port = local_port(api_base)
    record = read_record(port, workspace) if port is not None else None
    if record is None or alive(record):
        return None
    deadline = time.monotonic() + _EXIT_WAIT_S
    while record.exit_code is None and time.monotonic() < deadline:
        time.sleep(0.1)
        record = read_record(record.port, workspace) or record
    return LocalServerDown(describe(record))


def describe(record: ServerRecord) -> str:
    how = "with an unknown exit code" if record.exit_code is None else f"with code {exit_text(record.exit_code)}"
    log = f"; its log: {record.log}" if record.log else ""
    return (f"the local model server '{record.model}' (pid {record.pid}, port {record.port}) exited {how}; "
            f"restart it with `cworld llm serve-local --port {record.port}` and rerun{log}")


def exit_text(code: int) -> str:
    """-4 (SIGILL) reads better than -4: the signal is the clue (SIGILL: a CPU instruction not allowed)."""
    if code < 0:
        try:
            return f"{code} ({signal.Signals(-code).name})"
        except ValueError:
            return str(code)
    return str(code)


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first); None where there is no /proc."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2:].split()


def _start_time(pid: int) -> float | None:
    stat = _stat(pid)
    return float(stat[19]) if stat and len(stat) > 19 else None
