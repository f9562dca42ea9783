"""Local services some real servers need, started for one run on 127.0.0.1 and torn down after it.

- `pages`: a tiny HTTP server with a few HTML pages, so `fetch` has something to fetch offline.
- `postgres`: a throwaway PostgreSQL cluster (Debian's binaries, found under /usr/lib/postgresql/*/bin),
  trust authentication, loopback only, seeded with the same `items` table as the SQLite scratch.

Services start lazily, the first time a server that needs them is launched. A service that cannot
start (PostgreSQL not installed) raises `ServiceUnavailable`, which validation reports for the servers
that need it instead of crashing the build.
"""

from __future__ import annotations

import contextlib
import glob
import http.server
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
from functools import partial
from pathlib import Path
from types import TracebackType

from cworld.registry.scratch import SEED_ITEMS

PAGES: dict[str, str] = {
    "index.html": (
        "<html><head><title>Harbor Lights Bakery</title></head><body><h1>Harbor Lights Bakery</h1>"
        "<p>Fresh sourdough every morning from 7am. See <a href='menu.html'>the menu</a> and "
        "<a href='about.html'>our story</a>.</p></body></html>"
    ),
    "menu.html": (
        "<html><head><title>Menu</title></head><body><h1>Menu</h1><ul><li>Sourdough loaf: 6.50</li>"
        "<li>Cinnamon bun: 3.20</li><li>Rye bread: 5.80</li></ul></body></html>"
    ),
    "about.html": (
        "<html><head><title>About us</title></head><body><h1>Our story</h1><p>Founded in 1998 by two "
        "sisters on the harbor front. Open Tuesday to Sunday.</p></body></html>"
    ),
}


class ServiceUnavailable(Exception):
    """A local service could not be started; the message says why and how to fix it."""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
        return


class PageServer:
    """`http.server` on 127.0.0.1, a free port, in a daemon thread, serving PAGES from a temp folder."""

    def __init__(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="cworld-pages-"))
        for name, html in PAGES.items():
            (self._dir / name).write_text(html, encoding="utf-8")
        handler = partial(_QuietHandler, directory=str(self._dir))
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="cworld-pages", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        shutil.rmtree(self._dir, ignore_errors=True)


def find_pg_bin() -> Path | None:
    """The newest Debian PostgreSQL bin folder that has initdb and pg_ctl, or None."""
    found = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")]
    found = [d for d in found if (d / "initdb").exists()]
    if not found:
        return None
    return max(found, key=lambda d: _version_key(d.parent.name))


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(p) for p in name.split(".") if p.isdigit())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresCluster:
    """initdb + pg_ctl start in a temp folder; PostgreSQL refuses to run as root, so as root the cluster
    runs as the `postgres` system user that Debian's package creates."""

    USER = "cworld"

    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.port = free_port()
        self._root = Path(tempfile.mkdtemp(prefix="cworld-pg-"))
        self.data = self._root / "data"
        self._run_as = _unprivileged_user()
        if self._run_as is not None:
            os.chown(self._root, self._run_as.pw_uid, self._run_as.pw_gid)
        self._started = False

    @property
    def url(self) -> str:
        return f"postgresql://{self.USER}@127.0.0.1:{self.port}/postgres"

    def _pg(self, tool: str, *args: str, timeout: float = 60) -> None:
        user = self._run_as.pw_name if self._run_as is not None else None
        proc = subprocess.run(
            [str(self.bin / tool), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            user=user,
            cwd=self._root,
        )
        if proc.returncode != 0:
            tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-2:])
            raise ServiceUnavailable(f"postgres: {tool} failed: {tail}")

    def start(self) -> None:
        self._pg("initdb", "-D", str(self.data), "-U", self.USER, "--auth=trust", "-E", "UTF8", "--no-sync")
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self._root} -c fsync=off"
        log = str(self._root / "server.log")
        self._pg("pg_ctl", "-D", str(self.data), "-o", options, "-l", log, "-w", "-t", "30", "start")
        self._started = True
        self._seed()

    def _seed(self) -> None:
        rows = ", ".join(f"({i}, '{n}', {q})" for i, n, q in SEED_ITEMS)
        table = "items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL)"
        sql = f"CREATE TABLE {table}; INSERT INTO items VALUES {rows};"
        self._pg(
            "psql",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            self.USER,
            "-d",
            "postgres",
            "-q",
            "-c",
            sql,
        )

    def stop(self) -> None:
        if self._started:
            with contextlib.suppress(ServiceUnavailable, subprocess.TimeoutExpired):
                self._pg("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=30)
            self._started = False
        shutil.rmtree(self._root, ignore_errors=True)


def _unprivileged_user() -> pwd.struct_passwd | None:
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        raise ServiceUnavailable(
            "postgres: running as root and there is no `postgres` user; apt-get install -y postgresql"
        ) from None


def start_postgres() -> PostgresCluster:
    bin_dir = find_pg_bin()
    if bin_dir is None:
        raise ServiceUnavailable("postgres: PostgreSQL is not installed (apt-get install -y postgresql)")
    cluster = PostgresCluster(bin_dir)
    try:
        cluster.start()
    except (ServiceUnavailable, subprocess.TimeoutExpired, OSError) as exc:
        cluster.stop()
        raise ServiceUnavailable(str(exc)) from None
    return cluster


class Services:
    """The run's local services, started on first use (thread-safe) and all stopped on exit."""

    NAMES = ("pages", "postgres")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pages: PageServer | None = None
        self._postgres: PostgresCluster | None = None
        self._failed: dict[str, str] = {}
        self._closed = False

    def url(self, name: str) -> str:
        """The service's base URL, starting it if needed; ServiceUnavailable if it cannot run here."""
        with self._lock:
            if self._closed:  # a late starter must not leave a cluster running after the run ended
                raise ServiceUnavailable(f"{name}: the run's services are already stopped")
            if name in self._failed:
                raise ServiceUnavailable(self._failed[name])
            try:
                return self._start(name)
            except ServiceUnavailable as exc:
                self._failed[name] = str(exc)
                raise

    def _start(self, name: str) -> str:
        if name == "pages":
            self._pages = self._pages or PageServer()
            return self._pages.url
        if name == "postgres":
            self._postgres = self._postgres or start_postgres()
            return self._postgres.url
        raise ServiceUnavailable(f"unknown local service '{name}'; known: {', '.join(self.NAMES)}")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._pages is not None:
                self._pages.stop()
                self._pages = None
            if self._postgres is not None:
                self._postgres.stop()
                self._postgres = None

    def __enter__(self) -> Services:
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
