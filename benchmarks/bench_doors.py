"""Hundreds of episodes at once through the trainer doors (issue 26): OpenEnv and verifiers.

Run: `python benchmarks/bench_doors.py [--levels 64,128,256] [--doors openenv,verifiers] [--turn-s 0.2]
[--workers 1,2]`.

A scripted client stands in for the model: each episode (synthesized mode, policy `none`, one sandbox task)
is reset, four tool calls and the final answer, the client "thinking" `--turn-s` before each action. At
concurrency C, C episodes run at once (C distinct seeds):

- OpenEnv: `cworld openenv serve --workers W` (W worker processes sharing the port; W = 1 serves in one
  process), once per W of `--workers`; C `GenericEnvClient`s (openenv-core's client) in this process.
- verifiers: `vf-eval cworld-env --max-concurrent C` in this process, against an OpenAI-compatible stand-in
  (this process too) that answers each request after `--turn-s` with the next scripted tool call.

Printed per level: episodes/s; the environment's own time per step (`env_ms`: what the door spent on the
action, from the observation / the trace) p50 and p99; for OpenEnv also the client's round trip per step
p99 (the step's time plus its wait for the server's event loop, the messages and the sockets: what a
trainer waits for); the ratio to ideal, where ideal is C episodes in
the time one episode takes alone (its turns' thinking plus its steps); and beside it what the CPU allows,
so a reader sees whether the machine or the door limits the ratio:

- `cpu ms/ep`: the serving processes' CPU time per episode (OpenEnv: the server and its workers; verifiers:
  this process, the stand-in model included), and the client's (OpenEnv);
- `busy`: the cores the serving processes used during the level (their CPU time / wall time);
- `share`: the cores one busy process gets on this machine right now (a 1 s busy loop measured just
  before the level; 1.0 on an idle machine, less when other work shares the cores);
- `bound Wcore`: the ratio W full cores allow the server (one event loop per worker; the GIL keeps a
  worker's threads on its core too): W x episode-seconds-alone / (C x CPU-seconds-per-episode), capped at 1;
- `bound now`: the same with the `share` one process could get: the ceiling on this machine at this load.

A ratio near `bound now` with `busy` near `share` is the machine's limit; a ratio well below it with
`busy` below `share` is the door serializing.

With more than one `--workers`, the OpenEnv part ends with a summary of the run: per level, each W's
episodes/s and ratio to ideal and the episodes/s of the most workers over those of one; the server CPU
per episode; the p99 environment time per step at C = 64.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))
from serve_helpers import TASK, free_port, stop, subprocess_env, write_tasks  # noqa: E402

ACTIONS: list[dict[str, Any]] = [
    {"tool": "mail/search_messages", "arguments": {"query": "Security audit findings"}},
    {"tool": "mail/search_contacts", "arguments": {"query": "Deborah Kapoor"}},
    {"tool": "mail/search_messages", "arguments": {"query": "audit"}},
    {"tool": "mail/forward_message", "arguments": {"message_id": "mail_001", "to": ["contact_014"], "note": "x"}},
    {"final": "Forwarded it."},
]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def cpu_share(seconds: float = 1.0) -> float:
    """The cores one busy process gets right now (1.0 on an idle machine)."""
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        pass
    return (time.process_time() - cpu) / (time.perf_counter() - wall)


def report(door: str, level: int, wall: float, alone: float, env_ms: list[float], cpu_s: float, share: float,
           client_s: float | None = None, workers: int = 1, rtt_ms: list[float] | None = None) -> dict[str, float]:
    per_s = level / wall
    ideal = level / alone
    cpu_per_ep = cpu_s / level
    bound = min(1.0, workers * alone / (level * cpu_per_ep)) if cpu_per_ep > 0 else 1.0
    client = f" + client {1000 * client_s / level:.0f}" if client_s is not None else ""
    rtt = f"  round trip p99 {pct(rtt_ms, .99):7.1f} ms" if rtt_ms else ""
    print(f"{door:>9} W={workers} C={level:<4} {per_s:7.2f} ep/s  env/step p50 {pct(env_ms, .5):6.1f} ms  "
          f"p99 {pct(env_ms, .99):7.1f} ms{rtt}  ratio {per_s / ideal:5.2f}  bound {workers}core {bound:5.2f}  "
          f"bound now {min(1.0, bound * share):5.2f}  (cpu ms/ep {cpu_per_ep * 1000:.1f}{client}, busy "
          f"{cpu_s / wall:.2f}, share {share:.2f}, load {os.getloadavg()[0]:.1f}, alone {alone:.2f} s)", flush=True)
    return {"per_s": per_s, "ratio": per_s / ideal, "cpu_ms": cpu_per_ep * 1000, "p99": pct(env_ms, .99),
            "rtt_p99": pct(rtt_ms or [], .99)}


def summary(results: dict[tuple[int, int], dict[str, float]]) -> None:
    """The run's OpenEnv figures side by side: how W workers compare with one at each level."""
    counts = sorted({w for w, _ in results})
    print(f"openenv summary (load {os.getloadavg()[0]:.1f}, cores {os.cpu_count()}):", flush=True)
    for level in sorted({c for _, c in results}):
        row = [(w, results[(w, level)]) for w in counts if (w, level) in results]
        parts = [f"W={w} {r['per_s']:.1f} ep/s ratio {r['ratio']:.2f} cpu {r['cpu_ms']:.1f} ms/ep "
                 f"p99 {r['p99']:.1f} ms (round trip {r['rtt_p99']:.0f} ms)" for w, r in row]
        scale = ""
        if len(row) > 1 and row[0][0] == 1:
            scale = f"; W={row[-1][0]} / W=1 episodes/s {row[-1][1]['per_s'] / row[0][1]['per_s']:.2f}"
        print(f"  C={level}: " + "; ".join(parts) + scale, flush=True)


# --- OpenEnv ---------------------------------------------------------------------------------------------
async def openenv_episode(port: int, seed: int, turn_s: float, env_ms: list[float], rtt_ms: list[float]) -> None:
    from openenv.core import GenericEnvClient

    async with GenericEnvClient(base_url=f"http://127.0.0.1:{port}", message_timeout_s=600,
                                connect_timeout_s=120) as env:
        await env.reset(task=TASK, seed=seed, policy="none")
        for action in ACTIONS:
            await asyncio.sleep(turn_s)
            sent = time.perf_counter()
            result = await env.step(action)
            rtt_ms.append((time.perf_counter() - sent) * 1000)
            env_ms.append(float(result.observation["env_ms"]))
        assert result.done


def server_cpu(proc: psutil.Process) -> float:
    """CPU seconds of the server and its worker processes."""
    total = 0.0
    for process in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += sum(process.cpu_times()[:2])
    return total


async def openenv_level(port: int, proc: psutil.Process, level: int, turn_s: float,
                        base: int) -> tuple[float, list[float], float, float, list[float]]:
    """(wall, env ms per step, the server's CPU seconds, this client's CPU seconds, round trip ms per step)."""
    env_ms: list[float] = []
    rtt_ms: list[float] = []
    cpu0, client0 = server_cpu(proc), time.process_time()
    started = time.perf_counter()
    await asyncio.gather(*(openenv_episode(port, base + i, turn_s, env_ms, rtt_ms) for i in range(level)))
    wall = time.perf_counter() - started
    return wall, env_ms, server_cpu(proc) - cpu0, time.process_time() - client0, rtt_ms


def bench_openenv(levels: list[int], turn_s: float, tmp: Path, workers: int) -> dict[tuple[int, int], dict[str, float]]:
    tasks = write_tasks(tmp / "tasks.jsonl")
    port = free_port()
    args = [sys.executable, "-m", "cworld", "--workspace", str(tmp / f"ws-openenv-{workers}"), "openenv", "serve",
            "--tasks", str(tasks), "--port", str(port), "--policy", "none", "--max-sessions", str(max(levels) + 8),
            "--workers", str(workers)]
    server = subprocess.Popen(args, env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results: dict[tuple[int, int], dict[str, float]] = {}
    try:
        import httpx

        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and server.poll() is None, "cworld openenv serve did not start"
                time.sleep(0.3)
        proc = psutil.Process(server.pid)
        asyncio.run(openenv_level(port, proc, 8 * workers, turn_s, 10_000))  # warm-up of every worker: imports
        alone = asyncio.run(openenv_level(port, proc, 1, turn_s, 20_000))[0]
        for level in levels:
            share = cpu_share()
            wall, env_ms, cpu_s, client_s, rtt_ms = asyncio.run(
                openenv_level(port, proc, level, turn_s, 30_000 + 1000 * level))
            results[(workers, level)] = report("openenv", level, wall, alone, env_ms, cpu_s, share, client_s, workers,
                                               rtt_ms)
    finally:
        stop(server)
    return results


# --- verifiers -------------------------------------------------------------------------------------------
class SlowStandIn:
    """An OpenAI-compatible chat-completions server that answers each request after `turn_s` with the next
    scripted tool call of that conversation (decided from the request's own messages)."""

    def __init__(self, turn_s: float) -> None:
        from cworld.harness.doors import ChatTools

        self.turn_s, self.names = turn_s, ChatTools()

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def chat(request: Any) -> JSONResponse:
            body = await request.json()
            await asyncio.sleep(self.turn_s)
            done = sum(1 for m in body["messages"] if m["role"] == "assistant")
            action = ACTIONS[min(done, len(ACTIONS) - 1)]
            name = "submit" if "final" in action else self.names.name(action["tool"])
            arguments = {"answer": action["final"]} if "final" in action else action["arguments"]
            call = {"id": f"call_{done}", "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)}}
            return JSONResponse({"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                                 "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                                     "role": "assistant", "content": None, "tool_calls": [call]}}],
                                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

        async def models(request: Any) -> JSONResponse:
            return JSONResponse({"object": "list", "data": [{"id": "stand-in", "object": "model"}]})

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                                 Route("/v1/models", models)])


def verifiers_level(tasks: Path, url: str, level: int, tmp: Path) -> tuple[float, list[float], float]:
    from verifiers.v1.cli.eval.main import main as vf_eval

    out = tmp / f"vf-{level}"
    me = psutil.Process()
    cpu0 = sum(me.cpu_times()[:2])
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # vf-eval prints every trace without --rich
        vf_eval(["cworld-env", "--env.taskset.tasks", str(tasks), "--env.taskset.policy", "none",
                 "--env.taskset.out", str(tmp / f"run-{level}"), "--model", "stand-in", "--client.base-url", url,
                 "--client.api-key-var", "STAND_IN_KEY", "--output-dir", str(out), "--num-rollouts", str(level),
                 "--max-concurrent", str(level), "--no-rich", "--no-push"])
    wall = time.perf_counter() - started
    cpu_s = sum(me.cpu_times()[:2]) - cpu0
    env_ms: list[float] = []
    failed = 0
    for line in next(out.glob("*/traces.jsonl")).read_text().splitlines():
        for trace in json.loads(line)["traces"]:
            info = trace["info"].get("cworld")
            if info is None:  # the rollout failed before its episode ended (a model call that failed)
                failed += 1
                continue
            env_ms += info["env_ms"]
    if failed:
        print(f"verifiers C={level}: {failed} rollout(s) failed (no cworld trace)", flush=True)
    return wall, env_ms, cpu_s


def bench_verifiers(levels: list[int], turn_s: float, tmp: Path) -> None:
    import threading

    import uvicorn

    from cworld.data_model import Task, read_jsonl, write_jsonl_atomic

    one = tmp / "one.jsonl"
    write_jsonl_atomic(one, [t for t in read_jsonl(write_tasks(tmp / "all.jsonl"), Task) if t.id == TASK])
    os.environ["STAND_IN_KEY"] = "not-a-secret"
    os.environ["CWORLD_WORKSPACE"] = str(tmp / "ws-verifiers")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(SlowStandIn(turn_s).app(), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        verifiers_level(one, url, 4, tmp / "warm")
        alone, _, _ = verifiers_level(one, url, 1, tmp / "alone")
        for level in levels:
            share = cpu_share()
            wall, env_ms, cpu_s = verifiers_level(one, url, level, tmp / f"level-{level}")
            report("verifiers", level, wall, alone, env_ms, cpu_s, share)
    finally:
        server.should_exit = True
        thread.join(30)


def option(name: str, default: str) -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def main() -> None:
    levels = [int(x) for x in option("--levels", "64,128,256").split(",")]
    doors = option("--doors", "openenv,verifiers").split(",")
    turn_s = float(option("--turn-s", "0.2"))
    workers = [int(x) for x in option("--workers", "1,2").split(",")]
    print(f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.1f}; {len(ACTIONS)} actions per episode, "
          f"{turn_s}s per model turn", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        if "openenv" in doors:
            results: dict[tuple[int, int], dict[str, float]] = {}
            for count in workers:
                results.update(bench_openenv(levels, turn_s, Path(tmp) / f"openenv-{count}", count))
            if len(workers) > 1:
                summary(results)
        if "verifiers" in doors:
            import logging

            logging.disable(logging.INFO)
            bench_verifiers(levels, turn_s, Path(tmp) / "verifiers")


if __name__ == "__main__":
    main()
