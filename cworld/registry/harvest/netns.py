"""Harvested servers start offline: in a network namespace of their own, with only its loopback up.

Listing tools needs no network, and a harvested package is arbitrary code started with placeholder
credentials: nothing it does while it is listed (or validated) should leave the machine. `unshare --net`
(as root) or `unshare -rn` (a user namespace, where the kernel allows them) gives the server a namespace
whose only interface is its own loopback, which a small Python step brings up before exec'ing the server;
the host's loopback and every other address are out of reach. Whether a namespace can be made is probed
once per process (`network_isolation`); where none can, the servers run with the host's network and the
caller says so in one line (`Isolation.reason`).

A server that fails to list because it could not reach the network is then its own failure class
(`needs_network`): `network_failure` recognises the errors a connection or a name look-up gives inside
the namespace.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache

PROBE_TIMEOUT_S = 10.0

LOOPBACK_UP = (
    "import fcntl,os,socket,struct,sys\n"
    "s=socket.socket()\n"
    "try:\n"
    " f=struct.unpack('16sH',fcntl.ioctl(s,0x8913,struct.pack('16sH',b'lo',0)))[1]\n"
    " fcntl.ioctl(s,0x8914,struct.pack('16sH',b'lo',f|1))\n"
    "except OSError:\n"
    " pass\n"
    "s.close()\n"
    "os.execvp(sys.argv[1],sys.argv[1:])\n"
)
"""Bring `lo` up (SIOCGIFFLAGS, then SIOCSIFFLAGS with IFF_UP), then exec the server: a server may talk to
itself over its own loopback. Run with `python -I -S -c`: the standard library only, nothing of ours."""


@dataclass(frozen=True)
class Isolation:
    """How to start a program without the network: `prefix` goes before its argv (empty: not possible)."""

    prefix: tuple[str, ...] = ()
    reason: str = ""
    """Why there is no namespace, when there is none (one line)."""

    @property
    def offline(self) -> bool:
        return bool(self.prefix)

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` in a fresh network namespace with its loopback up; `argv` itself when none can be made."""
        if not self.prefix:
            return list(argv)
        return [*self.prefix, sys.executable, "-I", "-S", "-c", LOOPBACK_UP, *argv]


def _candidates() -> list[list[str]]:
    """`unshare --net` needs CAP_SYS_ADMIN (root); `unshare -rn` maps this user to root in a user namespace."""
    tool = shutil.which("unshare")
    if tool is None:
        return []
    return [[tool, "--net", "--"]] if os.geteuid() == 0 else [[tool, "-rn", "--"]]


@lru_cache(maxsize=1)
def network_isolation() -> Isolation:
    """The namespace prefix that works here, tried once: it must start a program whose loopback comes up."""
    candidates = _candidates()
    if not candidates:
        return Isolation(reason="no network namespace can be made here (`unshare` is not installed)")
    said = ""
    for prefix in candidates:
        trial = Isolation(tuple(prefix))
        try:
            done = subprocess.run(trial.wrap([sys.executable, "-I", "-S", "-c", "pass"]), capture_output=True,
                                  text=True, timeout=PROBE_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            said = f"{type(exc).__name__}: {exc}"
            continue
        if done.returncode == 0:
            return trial
        said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
    return Isolation(reason=f"no network namespace can be made here (`{' '.join(candidates[-1][:-1])}`: "
                            f"{said[:200]})")


_NETWORK_ERRORS = re.compile(
    r"ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|ECONNRESET|ETIMEDOUT|getaddrinfo|"
    r"network is unreachable|temporary failure in name resolution|name or service not known|"
    r"connection refused|failed to resolve|fetch failed|could not resolve host|nodename nor servname",
    re.IGNORECASE,
)


def network_failure(*texts: str) -> bool:
    """Do these (a failure's detail, its stderr) say the server could not reach the network?"""
    return any(_NETWORK_ERRORS.search(text or "") for text in texts)
