"""Serving on every core: N worker processes, each a whole episode server, started, watched and stopped
together.

    workers = Workers(count, target, spec)   # target(link, spec) runs in each worker process
    workers.start()      # each builds its service and says so (or why it could not: one line, then all stop)
    workers.release()    # all built: each opens its socket and starts taking sessions
    workers.wait()       # until a signal (Ctrl-C, SIGTERM) or a worker's end
    workers.stop()       # SIGTERM to each (uvicorn ends gracefully: open episodes stored abandoned), then kill
    workers.failed()     # which worker failed, if one did

One event loop is one core: an episode's CPU (the World Engine, the state diff, the trajectory line, the
score) runs on it, so one process serves at most what one core allows. Each worker is a whole server (its
own event loop, its own `EpisodeService`, all of them appending to one run folder: `rollout/store.py`
says how that stays safe). A session's episode lives in the worker that started it; how a session gets
there is the door's: OpenEnv's sessions are WebSocket connections, which the kernel hands to one of the
workers' sockets on one port (`reuse_port_socket`, SO_REUSEPORT: no process relays a byte); MCP's
sessions span many HTTP requests, which one front routes by session id (`front.py`).

Workers are spawned (not forked): a fresh interpreter each, no threads or event loop inherited. They
release together so that no worker takes every early session while the others are still loading. A
worker that ends while the others serve ends them all (its sessions are gone; when it failed, the caller
says why and exits non-zero), and a worker whose parent dies stops by itself.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import multiprocessing.connection
import os
import queue
import signal
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from typing import Any

from cworld.errors import CworldError, UsageError

BUILD_TIMEOUT_S = 600.0
"""A worker that has not built its service in this long is taken to hang."""
LISTEN_TIMEOUT_S = 60.0
"""A released worker that does not listen in this long is taken to hang."""
STOP_TIMEOUT_S = 30.0
"""How long a stopping worker gets to end its sessions (uvicorn's graceful shutdown) before it is killed."""
GRACEFUL_S = 10
"""uvicorn's graceful shutdown in a worker: open requests and sessions get this long to finish."""
BACKLOG = 2048


def default_workers() -> int:
    """The cores this process may run on (its CPU affinity, as a container or `taskset` sets it), else the
    machine's."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - no sched_getaffinity (macOS, Windows)
        return os.cpu_count() or 1


def check_workers(workers: int) -> int:
    if workers < 1:
        raise UsageError(f"--workers must be at least 1, got {workers}")
    if workers > 1 and not hasattr(socket, "SO_REUSEPORT"):  # pragma: no cover - Windows
        raise UsageError("--workers above 1 needs SO_REUSEPORT (Linux); pass --workers 1")
    return workers


def settle_heap() -> None:
    """Once the service is built, before the first session: collect, then move every object alive now out of
    the collector's sight (`gc.freeze`). A served process holds a large heap that lives as long as it does
    (the registry, tools, worlds: ~320,000 objects); each full collection walked all of it, ~0.27 s with the
    event loop stopped, and sessions under way promote enough objects to set one off every few hundred
    episodes: every step waiting then took that long."""
    gc.collect()
    gc.freeze()


def split_sessions(total: int, workers: int) -> list[int]:
    """`total` sessions over the workers, as evenly as whole numbers allow (each gets at least one)."""
    return [total // workers + (1 if i < total % workers else 0) for i in range(workers)]


class WorkerEnded(CworldError):
    """A worker could not build its server, or died while the others served: its one line."""


@dataclass
class WorkerLink:
    """What a worker is given to talk to the parent: its index, and the start-up handshake."""

    index: int
    _events: Any
    _release: Any

    def built(self) -> None:
        """The service is built; the worker waits for `released` next."""
        self._events.put((self.index, "built", ""))

    def failed(self, message: str) -> None:
        self._events.put((self.index, "failed", message))

    def released(self) -> None:
        """Wait until every worker is built (the parent releases all at once)."""
        self._release.wait()

    def serving(self) -> None:
        """The worker's socket takes connections (they queue until its event loop accepts them)."""
        self._events.put((self.index, "serving", ""))


Target = Callable[[WorkerLink, Any], None]


class Workers:
    """`count` spawned processes, each running `target(link, spec)`: the door's whole server."""

    def __init__(self, count: int, target: Target, spec: Any) -> None:
        self.count, self.target, self.spec = count, target, spec
        self._mp = multiprocessing.get_context("spawn")
        self._events: Any = self._mp.Queue()
        self._release = self._mp.Event()
        self.processes: list[BaseProcess] = []

    def start(self) -> None:
        """Spawn the workers and wait until each has built its service; the first failure stops them all
        and is raised as that worker's one line."""
        for index in range(self.count):
            link = WorkerLink(index, self._events, self._release)
            process = self._mp.Process(target=_run_worker, args=(link, self.target, self.spec),
                                       name=f"cworld-worker-{index}", daemon=True)
            process.start()
            self.processes.append(process)
        self._await_all("built", BUILD_TIMEOUT_S)

    def release(self) -> None:
        """Let every worker open its socket; back once all of them take connections."""
        self._release.set()
        self._await_all("serving", LISTEN_TIMEOUT_S)

    def sentinels(self) -> list[Any]:
        return [p.sentinel for p in self.processes]

    def wait(self) -> None:
        """Block until SIGINT or SIGTERM, or until a worker ends (`failed` tells whether it failed)."""
        with contextlib.suppress(KeyboardInterrupt), sigterm_as_interrupt():
            multiprocessing.connection.wait(self.sentinels())

    def failed(self, *, any_end: bool = False) -> str | None:
        """Which worker failed and how: it ended with a non-zero code (a worker asked to stop ends with 0,
        as the whole group does on Ctrl-C), or, with `any_end`, it ended at all."""
        for index, process in enumerate(self.processes):
            code = process.exitcode
            if code is not None and (code != 0 or any_end):
                how = f"was killed by signal {-code}" if code < 0 else f"ended with exit code {code}"
                return f"worker {index} (pid {process.pid}) {how}; stopped the others"
        return None

    def stop(self) -> None:
        """SIGTERM to every live worker (graceful), then kill what is left after `STOP_TIMEOUT_S`."""
        for process in self.processes:
            if process.exitcode is None and process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.exitcode is None:
                process.kill()
                process.join(5)
        self._events.close()
        self._events.join_thread()

    def _await_all(self, state: str, timeout_s: float) -> None:
        waiting = set(range(self.count))
        deadline = time.monotonic() + timeout_s
        while waiting:
            try:
                index, event, message = self._events.get(timeout=0.2)
            except queue.Empty:
                ended = self.failed(any_end=True)
                if ended:
                    raise WorkerEnded(ended) from None
                if time.monotonic() > deadline:
                    raise WorkerEnded(f"workers {sorted(waiting)} were not {state} after {timeout_s:.0f} s") from None
                continue
            if event == "failed":
                raise WorkerEnded(f"worker {index}: {message}")
            if event == state:
                waiting.discard(index)


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt in the main thread, as Ctrl-C does, so a parent stopped either way
    stops its workers before it ends (uvicorn re-raises the signal it caught once its server is down)."""
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def running(workers: Workers) -> Iterator[Workers]:
    """The workers started and released together; on leaving the block (its end, Ctrl-C or SIGTERM raised as
    KeyboardInterrupt inside it) they are stopped, and a worker that died is one line (`WorkerEnded`)."""
    try:
        with sigterm_as_interrupt():
            workers.start()
            workers.release()
        yield workers
    except KeyboardInterrupt:
        pass
    finally:
        failed = workers.failed()  # before stopping them: a worker killed past the grace period did not fail
        workers.stop()
    if failed:
        raise WorkerEnded(failed)


@contextmanager
def sigterm_after_uvicorn() -> Iterator[None]:
    """While uvicorn serves in this process: SIGTERM left to it (it stops its server gracefully) and, when
    it raises the signal again once the server is down, taken as done, so the process goes on to stop its
    workers (by default the signal would end it there; raising KeyboardInterrupt from the loop's shutdown
    leaves it half done)."""
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_worker(link: WorkerLink, target: Target, spec: Any) -> None:
    """A worker process's life: stop with the parent, run the door's target, report a failure to build as
    one line (the parent prints it)."""
    _stop_with_parent()
    try:
        target(link, spec)
    except CworldError as exc:
        link.failed(str(exc))
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except Exception as exc:
        link.failed(f"{type(exc).__name__}: {exc}")
        traceback.print_exc()
        raise SystemExit(1) from None


def _stop_with_parent() -> None:
    """A daemon thread that sends this worker SIGTERM (a graceful stop) when its parent process ends, so a
    killed `cworld serve` leaves no worker holding the port."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="cworld-parent-watch", daemon=True).start()


def port_is_free(host: str, port: int) -> None:
    """One clear line when host:port is taken, before any worker is spawned (they bind it with
    SO_REUSEPORT, which would otherwise join a listener of the same user instead of failing)."""
    family, kind, proto, _, address = _address(host, port)
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another --port") from None


def reuse_port_socket(host: str, port: int) -> socket.socket:
    """A listening socket on host:port shared with the other workers' (SO_REUSEPORT): the kernel hands each
    new connection to one of them, evenly by its address and port."""
    family, kind, proto, _, address = _address(host, port)
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def unix_socket(path: str) -> socket.socket:
    """A listening Unix socket at `path` (in a directory only this user can reach)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def _address(host: str, port: int) -> tuple[Any, ...]:
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as exc:
        raise UsageError(f"--host {host}: {exc.strerror or exc}") from None
