"""What the gateway costs on top of litellm: per-call time of a mock completion, both ways, one run.

The mock provider answers in-process, so the numbers (median of interleaved rounds) are pure
overhead: litellm's own machinery for the bare call, plus role resolution, retry wrapper, semaphore,
response conversion and accounting for the gateway (cache off). A cache hit is timed too: it skips
litellm entirely.

    python benchmarks/bench_llm.py [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from cworld.config import ModelConfig, ModelsConfig  # noqa: E402
from cworld.llm import Gateway, RetryPolicy  # noqa: E402
from cworld.llm._loader import load_litellm  # noqa: E402

MESSAGES = [{"role": "user", "content": "Summarise the weather in Oslo in one sentence."}]
MODEL = "mock/echo"
GATEWAY_ARGS = {"timeout": 300.0, "max_retries": 0, "drop_params": True, "temperature": 0.0, "api_key": None}


async def _per_call_ms(call: Callable[[], Awaitable[Any]], n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        await call()
    return (time.perf_counter() - started) * 1000 / n


async def _measure(calls: int, warmup: int, rounds: int) -> dict[str, Any]:
    litellm = load_litellm()
    models = ModelsConfig(agent=ModelConfig(model=MODEL))
    gw = Gateway(models, retry=RetryPolicy.immediate())

    async def bare() -> Any:
        return await litellm.acompletion(model=MODEL, messages=MESSAGES)

    async def bare_same_args() -> Any:
        """What the gateway hands litellm: separates litellm's handling of them from our own code."""
        return await litellm.acompletion(**GATEWAY_ARGS, model=MODEL, messages=MESSAGES)

    async def gateway() -> Any:
        return await gw.complete("agent", MESSAGES)

    variants = {"bare": bare, "same_args": bare_same_args, "gateway": gateway}
    for fn in variants.values():
        await _per_call_ms(fn, warmup)
    per_round = max(1, calls // rounds)
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):  # interleaved, so drift on a shared machine hits every variant alike
        for name, fn in variants.items():
            times[name].append(await _per_call_ms(fn, per_round))
    with tempfile.TemporaryDirectory() as tmp:
        cached = Gateway(models, cache_path=Path(tmp) / "llm.sqlite", retry=RetryPolicy.immediate())
        await cached.complete("agent", MESSAGES)
        hit_ms = await _per_call_ms(lambda: cached.complete("agent", MESSAGES), calls)
        cached.close()
    # the median round: robust to bursts of load from other processes on a shared machine
    bare_med, same_med, gw_med = (statistics.median(times[n]) for n in variants)
    return {
        "calls_each": per_round * rounds,
        "bare_litellm_ms_per_call": round(bare_med, 3),
        "bare_litellm_gateway_args_ms_per_call": round(same_med, 3),
        "gateway_ms_per_call": round(gw_med, 3),
        "gateway_overhead_ms_per_call": round(gw_med - bare_med, 3),
        "ratio_gateway_to_bare": round(gw_med / bare_med, 3),
        "gateway_cache_hit_ms_per_call": round(hit_ms, 3),
    }


def run(calls: int = 200, warmup: int = 20, rounds: int = 10) -> dict[str, Any]:
    return asyncio.run(_measure(calls, warmup, rounds))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    print(json.dumps(run(calls=args.calls), indent=2))
