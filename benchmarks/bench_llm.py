"""What the gateway costs on top of litellm: per-call time of a mock completion, both ways, one run.

The mock provider answers in-process, so the numbers are pure overhead: litellm's own machinery for
the bare call, plus role resolution, retry wrapper, semaphore, response conversion and accounting for
the gateway (cache off). A cache hit is timed too: it skips litellm entirely.

    python benchmarks/bench_llm.py [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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

    async def gateway() -> Any:
        return await gw.complete("agent", MESSAGES)

    await _per_call_ms(bare, warmup)
    await _per_call_ms(gateway, warmup)
    per_round = max(1, calls // rounds)
    bare_ms, gw_ms = [], []
    for _ in range(rounds):  # interleaved, so drift on a shared machine hits both sides alike
        bare_ms.append(await _per_call_ms(bare, per_round))
        gw_ms.append(await _per_call_ms(gateway, per_round))
    with tempfile.TemporaryDirectory() as tmp:
        cached = Gateway(models, cache_path=Path(tmp) / "llm.sqlite", retry=RetryPolicy.immediate())
        await cached.complete("agent", MESSAGES)
        hit_ms = await _per_call_ms(lambda: cached.complete("agent", MESSAGES), calls)
        cached.close()
    bare_mean, gw_mean = sum(bare_ms) / rounds, sum(gw_ms) / rounds
    return {
        "calls_each": per_round * rounds,
        "bare_litellm_ms_per_call": round(bare_mean, 3),
        "gateway_ms_per_call": round(gw_mean, 3),
        "gateway_overhead_ms_per_call": round(gw_mean - bare_mean, 3),
        "ratio_gateway_to_bare": round(gw_mean / bare_mean, 3),
        "gateway_cache_hit_ms_per_call": round(hit_ms, 3),
    }


def run(calls: int = 200, warmup: int = 20, rounds: int = 4) -> dict[str, Any]:
    return asyncio.run(_measure(calls, warmup, rounds))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    print(json.dumps(run(calls=args.calls), indent=2))
