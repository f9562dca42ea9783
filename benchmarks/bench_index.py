"""Cost of the tool index: build time, single-query latency (p50/p99), batched throughput and memory,
at the real registry's size and on a generated catalog of 60,000 tools, against brute-force numpy search.

    python benchmarks/bench_index.py [--size 60000] [--queries 300] [--skip-real] [--json]

Real size: the quality set's tools (sandbox apps + the real servers' published tools + catalogs), embedded
with the default model (all-MiniLM-L6-v2). The 60k catalog is synthetic text; embedding it with MiniLM
would take ~3 min of 2 cores alone, so it is embedded with the feature-hashing embedder (a random projection
of hashed tokens into 384 dimensions): the vectors have the model's shape, and the search cost — what this
measures — depends only on the shape. Times are wall-clock on a shared machine: read them as orders of
magnitude.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402

from cworld.data_model.tools import ToolSpec  # noqa: E402
from cworld.registry.index.dense import brute_force_search  # noqa: E402
from cworld.registry.index.documents import tool_documents  # noqa: E402
from cworld.registry.index.embedder import Embedder, HashEmbedder, resolve_embedder  # noqa: E402
from cworld.registry.index.store import ToolIndex  # noqa: E402
from cworld.seeding import derive_rng  # noqa: E402

_WORDS = {
    "verbs": "get list search find create update delete cancel send read export import archive restore approve",
    "nouns": "invoice order customer ticket shipment report contact payment subscription refund employee project "
             "task meeting room device sensor alert policy document folder repository branch issue comment user "
             "account token campaign lead deal product coupon warehouse vehicle route flight hotel booking",
    "domains": "billing crm helpdesk logistics hr analytics devops marketing iot security storage calendar travel "
               "retail fleet finance legal education health media",
}
VERBS, NOUNS, DOMAINS = (_WORDS[k].split() for k in ("verbs", "nouns", "domains"))
QUALIFIERS = ["by id", "by date", "in bulk", "for a team", "with filters", "as csv", "for today", "with history"]


def rss_mb() -> float:
    """Resident memory of this process, from /proc (Linux)."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def synthetic_tools(n: int, seed: int = 0) -> list[ToolSpec]:
    rng = derive_rng(seed, "bench:catalog")
    tools = []
    for i in range(n):
        verb, noun, domain = rng.choice(VERBS), rng.choice(NOUNS), rng.choice(DOMAINS)
        extra = rng.choice(NOUNS)
        desc = (f"{verb.capitalize()} {noun}s {rng.choice(QUALIFIERS)} in the {domain} system; "
                f"links each {noun} to its {extra} and returns the {noun} id and status.")
        props = {f"{noun}_id": {"type": "string", "description": f"the {noun}"},
                 f"{extra}_filter": {"type": "string", "description": f"only {extra}s matching this"}}
        tools.append(ToolSpec(server=f"{domain}{i // 500}", name=f"{verb}_{noun}_{i}", description=desc,
                              input_schema={"type": "object", "properties": props}))
    return tools


def synthetic_queries(n: int, seed: int = 0) -> list[str]:
    rng = derive_rng(seed, "bench:queries")
    return [f"{rng.choice(VERBS)} the {rng.choice(NOUNS)} for {rng.choice(DOMAINS)} {rng.choice(QUALIFIERS)}"
            for _ in range(n)]


def percentiles(samples: list[float]) -> dict[str, float]:
    arr = np.array(samples) * 1000
    return {"p50_ms": float(np.percentile(arr, 50)), "p99_ms": float(np.percentile(arr, 99))}


def time_each(fn: Callable[[int], Any], n: int) -> dict[str, float]:
    fn(0)  # warm-up
    samples = []
    for i in range(n):
        start = time.perf_counter()
        fn(i)
        samples.append(time.perf_counter() - start)
    return percentiles(samples)


def throughput(fn: Callable[[], Any], n_queries: int) -> float:
    start = time.perf_counter()
    fn()
    return n_queries / (time.perf_counter() - start)


def measure(tools: list[ToolSpec], embedder: Embedder, queries: list[str], label: str) -> dict[str, Any]:
    """Build the index stage by stage, then time every search path on the same queries."""
    out: dict[str, Any] = {"label": label, "tools": len(tools), "model": embedder.name}
    rss0 = rss_mb()
    t0 = time.perf_counter()
    docs = tool_documents(tools)
    t1 = time.perf_counter()
    vectors = embedder.embed_documents([d.text for d in docs])
    t2 = time.perf_counter()
    index, _ = ToolIndex.build(tools, _Precomputed(embedder, docs, vectors))
    t3 = time.perf_counter()
    out["build_s"] = {"documents": t1 - t0, "embed": t2 - t1, "faiss+bm25+docs": t3 - t2, "total": t3 - t0}
    out["memory_mb"] = {"rss_delta": rss_mb() - rss0, "embeddings": index.dense.vectors.nbytes / 2**20,
                        "bm25_matrices": 2 * _sparse_mb(index.bm25.weights) + _sparse_mb(index.bm25.tf)}
    t4 = time.perf_counter()
    qvec = embedder.embed_queries(queries)
    out["query_embed_ms"] = (time.perf_counter() - t4) / len(queries) * 1000
    index.use_embedder(_Fixed(embedder, dict(zip(queries, qvec, strict=True))))
    n = len(queries)
    out["single_query"] = {
        "faiss": time_each(lambda i: index.dense.search(qvec[i : i + 1], 10), n),
        "faiss, 1 thread": _one_thread(lambda: time_each(lambda i: index.dense.search(qvec[i : i + 1], 10), n)),
        "numpy brute force": time_each(lambda i: brute_force_search(index.dense.vectors, qvec[i : i + 1], 10), n),
        "bm25": time_each(lambda i: index.bm25.search([queries[i]], 10), n),
        "hybrid": time_each(lambda i: index.rank([queries[i]], 10, "hybrid"), n),
    }
    out["batched_qps"] = {
        "faiss": throughput(lambda: index.dense.search(qvec, 10), n),
        "faiss, 1 thread": _one_thread(lambda: throughput(lambda: index.dense.search(qvec, 10), n)),
        "numpy brute force": throughput(lambda: brute_force_search(index.dense.vectors, qvec, 10), n),
        "bm25": throughput(lambda: index.bm25.search(queries, 10), n),
        "hybrid": throughput(lambda: index.rank(queries, 10, "hybrid"), n),
    }
    return out


def _one_thread(fn: Callable[[], Any]) -> Any:
    """FAISS with one OpenMP thread: on a busy 2-core machine, spinning threads can cost more than they give."""
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        return fn()
    finally:
        faiss.omp_set_num_threads(before)


def _sparse_mb(matrix: Any) -> float:
    return (matrix.data.nbytes + matrix.indices.nbytes + matrix.indptr.nbytes) / 2**20


class _Precomputed:
    """Hands ToolIndex.build the vectors embedded (and timed) above."""

    def __init__(self, inner: Embedder, docs: list[Any], vectors: np.ndarray) -> None:
        self.name, self.spec = inner.name, inner.spec
        self._rows = {d.text: v for d, v in zip(docs, vectors, strict=True)}

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._rows[t] for t in texts])

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        raise AssertionError("queries are embedded separately")


class _Fixed(_Precomputed):
    """Query vectors computed once, so search timings exclude embedding (reported on its own)."""

    def __init__(self, inner: Embedder, rows: dict[str, np.ndarray]) -> None:
        self.name, self.spec, self._rows = inner.name, inner.spec, rows

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._rows[t] for t in texts])


def print_result(r: dict[str, Any]) -> None:
    b, m = r["build_s"], r["memory_mb"]
    print(f"\n== {r['label']}: {r['tools']:,} tools, {r['model']}")
    print(f"build: {b['total']:.2f} s (documents {b['documents']:.2f}, embedding {b['embed']:.2f}, "
          f"FAISS+BM25 {b['faiss+bm25+docs']:.2f})")
    print(f"memory: RSS +{m['rss_delta']:.0f} MB; embeddings {m['embeddings']:.1f} MB, BM25 {m['bm25_matrices']:.1f} MB")
    print(f"query embedding: {r['query_embed_ms']:.2f} ms/query (batched)")
    print(f"{'search (k=10)':<20} {'p50 ms':>8} {'p99 ms':>8} {'batched q/s':>12}")
    for name, lat in r["single_query"].items():
        print(f"{name:<20} {lat['p50_ms']:>8.3f} {lat['p99_ms']:>8.3f} {r['batched_qps'][name]:>12,.0f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=60_000, help="synthetic catalog size")
    parser.add_argument("--queries", type=int, default=300, help="queries per measurement")
    parser.add_argument("--skip-real", action="store_true", help="only the synthetic catalog")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = []
    if not args.skip_real:
        from retrieval import QUERIES, default_tools

        from cworld.registry.index.quality import load_queries

        tools, _ = default_tools()
        texts = [q.query for q in load_queries(QUERIES)][: args.queries]
        results.append(measure(tools, resolve_embedder("minilm"), texts, "real registry size"))
    print("(60k catalog: embedded with the hashing embedder, a random projection of hashed tokens, not MiniLM)",
          file=sys.stderr)
    results.append(measure(synthetic_tools(args.size), HashEmbedder(384), synthetic_queries(args.queries),
                           f"synthetic catalog (hashing embedder, {args.size:,} tools)"))
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            print_result(r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
