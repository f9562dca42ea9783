"""Task synthesis speed: tasks per minute of the offline synthesizer, and the speed-up that concurrency
gives the LLM path when every model call takes 500 ms (the mock provider sleeping).

The offline figure times the attempt loop (sampling, composing against the probe, checks, verification by
execution, near-duplicate check, append) after setup; setup (tool list, index, embedder) is reported
apart. The LLM figure runs a fixed number of attempts whose drafts the checks reject (one model call per
attempt), so the wall time is the model's latency divided by the calls in flight.

    python benchmarks/bench_synth.py [--n 20] [--attempts 8] [--embed hash|minilm]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _offline(n: int, seed: int) -> dict[str, Any]:
    from cworld.environment import Environment, Workspace
    from cworld.synth import SynthOptions, prepare, run_prepared

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        prepared = prepare(
            Environment.resolve(),
            Workspace.resolve(Path(tmp) / "ws"),
            SynthOptions(n=n, seed=seed),
            out=Path(tmp) / "tasks.jsonl",
        )
        setup = time.perf_counter() - started
        result, summary = asyncio.run(run_prepared(prepared))
    return {
        "tasks": summary.accepted,
        "attempts": result.attempts,
        "setup_s": round(setup, 1),
        "loop_s": round(result.seconds, 1),
        "tasks_per_minute": round(60 * summary.accepted / result.seconds, 1),
        "mean_tools": summary.tools_per_task.get("mean"),
        "embedder": prepared.synthesis.universe.notes[-1],
    }


def _llm_wall(attempts: int, concurrency: int, delay: float) -> float:
    from cworld.environment import Environment, Workspace
    from cworld.llm import mock
    from cworld.synth import SynthOptions, prepare, run_prepared

    options = SynthOptions(
        n=attempts, seed=concurrency, max_attempts=attempts, max_rounds=1, concurrency=concurrency
    )
    reject = json.dumps(
        {"query": "Do something.", "tools": [], "rationales": {}, "constraints": [], "subgoals": []}
    )
    with tempfile.TemporaryDirectory() as tmp:
        mock.script("bench-synth", lambda messages, tools: reject, delay_s=delay)
        prepared = prepare(
            Environment.resolve(),
            Workspace.resolve(Path(tmp) / "ws"),
            options,
            model="mock/bench-synth",
            out=Path(tmp) / "tasks.jsonl",
        )
        result, summary = asyncio.run(run_prepared(prepared))
        calls = len(mock.get_script("bench-synth").calls)
        mock.clear("bench-synth")
    assert summary.rejected == attempts and calls == attempts, (summary.rejected, calls)
    return result.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20, help="offline tasks to accept")
    parser.add_argument("--attempts", type=int, default=8, help="LLM attempts per concurrency level")
    parser.add_argument("--delay", type=float, default=0.5, help="seconds the mock model takes per call")
    parser.add_argument(
        "--embed",
        default=os.environ.get("CWORLD_EMBED_MODEL", "hash"),
        help="embedder for retrieval and near-duplicates: hash (no model) or minilm",
    )
    args = parser.parse_args()
    os.environ["CWORLD_EMBED_MODEL"] = args.embed
    offline = _offline(args.n, seed=0)
    print(
        f"offline: {offline['tasks']} tasks in {offline['loop_s']} s after {offline['setup_s']} s of setup "
        "-> "
        f"{offline['tasks_per_minute']} tasks/minute ({offline['attempts']} attempts, mean "
        f"{offline['mean_tools']} tools per task; {offline['embedder']})"
    )
    walls = {c: _llm_wall(args.attempts, c, args.delay) for c in (1, 2, 4, 8)}
    for c, wall in walls.items():
        print(
            f"LLM path, {args.attempts} attempts, model {args.delay * 1000:.0f} ms per call, concurrency "
            f"{c}: "
            f"{wall:.2f} s, speed-up x{walls[1] / wall:.2f}"
        )


if __name__ == "__main__":
    main()
