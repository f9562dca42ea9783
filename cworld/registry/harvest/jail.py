"""Where a harvested server runs: a scratch home and working folder, placeholder credentials, resource
limits, and (as root) a uid of its own, so that it cannot write anywhere but its scratch and world-writable
folders, and so that whatever it leaves behind (processes, files in /tmp) is found by that uid and removed.

The limits are set by `prlimit` and the uid by `setpriv`, both of which exec the server: the process
the MCP client starts is the server itself, in a process group of its own. Between them `unshare` puts it
in a network namespace of its own (`netns.py`): listing tools needs no network, so none is given.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from cworld.registry.harvest.netns import Isolation

MEMORY_BYTES = 3 * 1024**3
"""Data segment per server (RLIMIT_DATA: heap and private writable mappings). Not the address space:
V8 reserves gigabytes of it for WebAssembly, which any `fetch` instantiates."""
CPU_SECONDS = 120
FILE_BYTES = 64 * 1024**2
"""The largest file it may write, its stderr included: a server that floods stderr is stopped here."""
PROCESSES = 512
"""Threads and processes of its uid (Node runs about ten threads)."""
UID_BASE = 61000
"""Harvest uids are UID_BASE + a slot; none of them has a passwd entry or owns anything else."""
WRITABLE_ELSEWHERE = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))

_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS")


def privileged() -> bool:
    """Root with prlimit and setpriv: servers get a uid of their own."""
    return os.geteuid() == 0 and bool(shutil.which("setpriv")) and bool(shutil.which("prlimit"))


@dataclass
class Jail:
    """One server's run: `root/home`, `root/work`, `root/tmp`, owned by `uid` (None: run as this user)."""

    root: Path
    uid: int | None
    memory_bytes: int = MEMORY_BYTES
    cpu_seconds: int = CPU_SECONDS
    file_bytes: int = FILE_BYTES
    strays: list[str] = field(default_factory=list)
    network: Isolation = field(default_factory=Isolation)
    """The network namespace it starts in (an empty `Isolation`: the host's network)."""

    @classmethod
    def make(cls, base: Path, name: str, slot: int, network: Isolation | None = None) -> Jail:
        root = base / name
        if root.exists():
            shutil.rmtree(root, ignore_errors=True)
        uid = UID_BASE + slot if privileged() else None
        jail = cls(root, uid, network=network or Isolation())
        for sub in ("home", "work", "tmp"):
            (root / sub).mkdir(parents=True)
            if uid is not None:
                os.chown(root / sub, uid, uid)
        return jail

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def offline(self) -> bool:
        return self.network.offline

    def command(self, argv: list[str]) -> list[str]:
        """`argv` under the limits, in its network namespace (and under the uid): prlimit, unshare and setpriv
        exec into it. The namespace comes before the uid change: making it needs root's capabilities."""
        if not shutil.which("prlimit"):
            return self.network.wrap(argv)
        limits = [
            "prlimit",
            f"--data={self.memory_bytes}",
            f"--cpu={self.cpu_seconds}",
            f"--fsize={self.file_bytes}",
            "--core=0",
        ]
        if self.uid is None:
            return [*limits, "--", *self.network.wrap(argv)]
        user = ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups", "--inh-caps=-all"]
        return [*limits, f"--nproc={PROCESSES}", "--", *self.network.wrap([*user, "--", *argv])]

    def environment(self, variables: dict[str, str]) -> dict[str, str]:
        """A clean environment: a few of ours, a scratch home and temp folder, the placeholder variables."""
        env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
        tmp = str(self.root / "tmp")
        env.update(
            HOME=str(self.home),
            TMPDIR=tmp,
            TEMP=tmp,
            TMP=tmp,
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_DATA_HOME=str(self.home / ".local/share"),
            npm_config_cache=str(self.home / ".npm"),
            PYTHONDONTWRITEBYTECODE="1",
            NO_COLOR="1",
            NODE_OPTIONS="--max-old-space-size=1024",
        )
        env.update(variables)
        return env

    def sweep(self) -> None:
        """Kill what the server left running and remove what it wrote outside its scratch (its uid's only)."""
        if self.uid is None:
            return
        for _ in range(3):
            if not self._kill_uid():
                break
        self.strays = self._remove_strays()

    def _kill_uid(self) -> bool:
        """SIGKILL every process whose real uid is this jail's; those are the server and its children."""
        killed = False
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == self.uid:
                    os.kill(int(entry.name), signal.SIGKILL)
                    killed = True
        return killed

    def _remove_strays(self) -> list[str]:
        """Files this uid made in the world-writable folders (one level deep), removed and named."""
        found: list[str] = []
        for folder in WRITABLE_ELSEWHERE:
            with contextlib.suppress(OSError):
                for path in folder.iterdir():
                    with contextlib.suppress(OSError):
                        if path.lstat().st_uid == self.uid:
                            found.append(str(path))
                            _remove(path)
        return sorted(found)

    def discard(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


BASE_PREFIX = "cworld-harvest-"


def jail_base() -> Path:
    """A folder every harvest uid can pass through (a pytest or workspace folder may not let them),
    named after this process; those of harvests that were killed are removed first."""
    _remove_stale_bases()
    base = Path(tempfile.mkdtemp(prefix=f"{BASE_PREFIX}{os.getpid()}-"))
    base.chmod(base.stat().st_mode | stat.S_IXOTH | stat.S_IXGRP)
    return base


def _remove_stale_bases() -> None:
    for path in Path(tempfile.gettempdir()).glob(f"{BASE_PREFIX}*-*"):
        pid = path.name.removeprefix(BASE_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists() and path.stat().st_uid == os.geteuid():
            shutil.rmtree(path, ignore_errors=True)
