"""`cworld serve` under load (issue 15, "Done when"): concurrent HTTP sessions over loopback.

Run: `python benchmarks/bench_serve.py [--sessions 50] [--quick] [--workers N]`. Starts `cworld serve
--transport http [--workers N]` (a subprocess, bearer token on; its CPU counts its worker processes) and
opens N MCP sessions at once with the official client (`mcp.Client` over `streamable_http_client`). Each session plays one synthesized episode (policy `none`) of the sandbox forward
task: start_episode, two mailbox searches, the forward with the session's own marker as its note, a search
for the marker, submit. Then it checks that

- no session saw another's state: no result a session received holds another session's marker, and each
  stored end state (the World Engine's change set) holds its own marker and no other;
- every trajectory is stored once and nothing is lost: the run folder holds exactly the N episode ids the
  sessions were given.

Printed: sessions per second (N / wall time from the first connect to the last submit), p50/p99 latency of
a call (client round trip, every call of every session), and the same episodes driven in process through
the gym API (`cworld.make`, `astep`), the door without a protocol in between, at the same concurrency.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))
from serve_helpers import TASK, free_port, http_client, start_http, stop, write_tasks  # noqa: E402

from cworld.data_model import Task, read_jsonl  # noqa: E402
from cworld.environment import Workspace  # noqa: E402
from cworld.gym import make  # noqa: E402
from cworld.rollout import read_trajectories  # noqa: E402
from cworld.serve.workers import default_workers  # noqa: E402


@dataclass
class Session:
    index: int
    episode_id: str = ""
    latencies: list[float] = field(default_factory=list)
    """Tool calls (start_episode and the task's tools)."""
    submits: list[float] = field(default_factory=list)
    """submit: the episode is stored and scored (verifiable metrics and the state diff) before it answers."""
    seen: list[str] = field(default_factory=list)

    @property
    def marker(self) -> str:
        return f"marker-{self.index:03d}"


def actions(marker: str) -> list[dict[str, Any]]:
    return [{"tool": "mail/search_messages", "arguments": {"query": "Security audit findings"}},
            {"tool": "mail/search_contacts", "arguments": {"query": "Deborah Kapoor"}},
            {"tool": "mail/forward_message", "arguments": {"message_id": "mail_001", "to": ["contact_014"],
                                                           "note": marker}},
            {"tool": "mail/search_messages", "arguments": {"query": marker}}]


async def one_session(port: int, session: Session) -> None:
    async with http_client(port) as client:
        async def timed(name: str, arguments: dict[str, Any]) -> Any:
            started = time.perf_counter()
            result = await client.call_tool(name, arguments)
            (session.submits if name == "submit" else session.latencies).append(time.perf_counter() - started)
            session.seen.append(" ".join(getattr(b, "text", "") for b in result.content))
            return result

        opened = await timed("start_episode", {"task": TASK, "mode": "synthesized", "policy": "none",
                                               "seed": session.index})
        session.episode_id = opened.structured_content["episode_id"]
        for action in actions(session.marker):
            await timed(action["tool"].replace("/", "__"), action["arguments"])
        done = await timed("submit", {"answer": "Forwarded it."})
        assert not done.is_error, done.content


def check(sessions: list[Session], run: Path) -> list[str]:
    """What went wrong, if anything: cross-session leaks, lost or duplicated trajectories."""
    problems = []
    markers = {s.marker for s in sessions}
    stored = list(read_trajectories(run))
    ids = [t.episode_id for t in stored]
    if sorted(ids) != sorted(s.episode_id for s in sessions):
        problems.append(f"stored {len(ids)} trajectories ({len(set(ids))} ids) for {len(sessions)} sessions")
    by_id = {t.episode_id: t for t in stored}
    for s in sessions:
        leaked = {m for m in markers - {s.marker} if any(m in text for text in s.seen)}
        end = str(by_id[s.episode_id].end_state) if s.episode_id in by_id else ""
        foreign = {m for m in markers - {s.marker} if m in end}
        if leaked or foreign or s.marker not in end:
            problems.append(f"session {s.index}: saw {sorted(leaked)}, end state holds {sorted(foreign)}, "
                            f"own marker {'in' if s.marker in end else 'missing from'} its end state")
    return problems


@dataclass
class Cpu:
    """CPU seconds spent during the timed phase: by the server process (with its children) and by this one
    (the clients, or the gym's episodes)."""

    server: float = 0.0
    local: float = 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU of the server and its worker processes (`--workers`: they run while measured)."""
    import psutil

    total = 0.0
    server = psutil.Process(pid)
    for process in [server, *server.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += sum(process.cpu_times()[:2])
    return total


async def served(n: int, root: Path, workers: int | None) -> tuple[float, list[Session], list[str], Cpu]:
    tasks, run, port = write_tasks(root / "tasks.jsonl"), root / "ws" / "runs" / "load", free_port()
    proc = start_http(root / "ws", tasks, run, port, *(["--workers", str(workers)] if workers else []))
    cpu = Cpu()
    try:
        sessions = [Session(i) for i in range(n)]
        warm = [Session(n + i) for i in range(workers or default_workers())]
        for session in warm:  # warm-up, one session per worker (the front takes turns): each loads its engine
            await one_session(port, session)
        server_before, local_before = cpu_seconds(proc.pid), time.process_time()
        started = time.perf_counter()
        await asyncio.gather(*(one_session(port, s) for s in sessions))
        wall = time.perf_counter() - started
        cpu = Cpu(cpu_seconds(proc.pid) - server_before, time.process_time() - local_before)
    finally:
        stop(proc)
    return wall, sessions, check([*sessions, *warm], run), cpu


async def in_process(n: int, root: Path) -> tuple[float, list[float], Cpu]:
    task = next(t for t in read_jsonl(write_tasks(root / "tasks.jsonl"), Task) if t.id == TASK)
    latencies: list[float] = []
    ws = Workspace.resolve(root / "gym")

    async def episode(i: int) -> None:
        env = make(task, mode="synthesized", policy="none", workspace=ws)
        started = time.perf_counter()
        await env.areset(seed=i)
        latencies.append(time.perf_counter() - started)
        for action in actions(f"marker-{i:03d}"):
            started = time.perf_counter()
            await env.astep(action)
            latencies.append(time.perf_counter() - started)
        await env.astep({"final": "Forwarded it."})

    await episode(n)
    started, cpu_before = time.perf_counter(), time.process_time()
    await asyncio.gather(*(episode(i) for i in range(n)))
    return time.perf_counter() - started, latencies, Cpu(local=time.process_time() - cpu_before)


def quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1] if len(values) > 1 else values[0]


def row(name: str, n: int, wall: float, latencies: list[float], cpu: Cpu, submits: list[float] | None = None) -> str:
    out = (f"{name:<26} {n:>8} {n / wall:>11.2f} {1000 * quantile(latencies, 0.5):>11.1f} "
           f"{1000 * quantile(latencies, 0.99):>11.1f} {1000 * cpu.server / n:>11.0f} {1000 * cpu.local / n:>11.0f}")
    if submits:
        out += f" {1000 * quantile(submits, 0.5):>11.1f} {1000 * quantile(submits, 0.99):>11.1f}"
    return out


async def main(n: int, workers: int | None) -> int:
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        wall, sessions, problems, cpu = await served(n, Path(tmp) / "serve", workers)
        gym_wall, gym_latencies, gym_cpu = await in_process(n, Path(tmp) / "gym")
    latencies = [x for s in sessions for x in s.latencies]
    submits = [x for s in sessions for x in s.submits]
    print(f"cworld serve under load: {n} concurrent sessions, one synthesized episode each "
          f"(start_episode, 4 tool calls, submit); --workers {workers or 'default (the cores)'}")
    print(f"{'door':<26} {'sessions':>8} {'sessions/s':>11} {'call p50 ms':>11} {'call p99 ms':>11} "
          f"{'server cpu':>11} {'local cpu':>11} {'submit p50':>11} {'submit p99':>11}")
    print(row("serve (HTTP, MCP client)", n, wall, latencies, cpu, submits))
    print(row("gym (in process)", n, gym_wall, gym_latencies, gym_cpu))
    print("calls: start_episode and tool calls, client round trip; submit also stores and scores the episode "
          "(verifiable metrics, state diff); the gym row's episodes end without scoring")
    print("cpu: CPU ms per session in the timed phase, of the server process (serve) and of this process (the "
          f"MCP clients; the gym's episodes); {os.cpu_count()} cores, so at best {os.cpu_count()} CPU s per s")
    print("isolation and storage: " + ("ok (no leak, every trajectory stored once)" if not problems
                                       else f"{len(problems)} problem(s)"))
    for problem in problems[:10]:
        print("  " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="10 sessions")
    parser.add_argument("--workers", type=int, default=None, help="cworld serve --workers (default: its own)")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(10 if args.quick else args.sessions, args.workers)))
