"""Cost of the tool index: build time, single-query latency (p50/p99), batched throughput and memory,
on the full registry and on a generated catalog of 60,000 tools, against brute-force numpy search.

    python benchmarks/bench_index.py [--size 60000] [--queries 300] [--e2e-queries 50] [--reuse-cache]
                                     [--model minilm] [--skip-real] [--skip-synthetic] [--json]

The full registry: the sandbox apps, the real servers' recorded tools, the catalogs and the harvested
catalog (`registry build --harvested`'s tool list, ~3.7k tools), embedded with the default model
(all-MiniLM-L6-v2). Builds, each timed: cold (empty embedding cache, in a temp folder; with
`--reuse-cache` the cache kept in `--cache` instead, which makes reruns fast), unchanged (a second build of
the same tools), incremental (the last harvested server added to an index without it, its vectors not in
the cache). Search is timed search-only (query vectors precomputed) and end to end through
`SearchService.search(..., with_prereqs=True)`, what `cworld serve`'s `search_tools` and `cworld search`
call: with a new query (the model embeds it) and with a repeated one (the query cache answers). The 60k catalog is synthetic text; embedding it with MiniLM
would take ~3 min of 2 cores alone, so it is embedded with the feature-hashing embedder (a random projection
of hashed tokens into 384 dimensions): the vectors have the model's shape, and the search cost — what this
measures — depends only on the shape. Times are wall-clock on a shared machine: read them as orders of
magnitude.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TQDM_DISABLE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402

from cworld.data_model.tools import ToolSpec  # noqa: E402
from cworld.registry.index.bm25 import top_k  # noqa: E402
from cworld.registry.index.dense import brute_force_search  # noqa: E402
from cworld.registry.index.documents import tool_documents  # noqa: E402
from cworld.registry.index.embedder import Embedder, HashEmbedder, resolve_embedder  # noqa: E402
from cworld.registry.index.hybrid import fuse_reference  # noqa: E402
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


def time_each(fn: Callable[[int], Any], n: int, warm: bool = True) -> dict[str, float]:
    if warm:
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
    out.update(search_latencies(index, queries, qvec))
    return out


def search_latencies(index: ToolIndex, queries: list[str], qvec: np.ndarray) -> dict[str, Any]:
    """Single-query p50/p99 and batched throughput of every search path, on the same queries (k = 10)."""
    n = len(queries)
    single = {
        "faiss": time_each(lambda i: index.dense.search(qvec[i : i + 1], 10), n),
        "faiss, 1 thread": _one_thread(lambda: time_each(lambda i: index.dense.search(qvec[i : i + 1], 10), n)),
        "numpy brute force": time_each(lambda i: brute_force_search(index.dense.vectors, qvec[i : i + 1], 10), n),
        "bm25": time_each(lambda i: index.bm25.search([queries[i]], 10), n),
        "hybrid": time_each(lambda i: index.rank([queries[i]], 10, "hybrid"), n),
        "hybrid, before": time_each(lambda i: hybrid_before(index, queries[i], qvec[i : i + 1], 10), n),
    }
    batched = {
        "faiss": throughput(lambda: index.dense.search(qvec, 10), n),
        "faiss, 1 thread": _one_thread(lambda: throughput(lambda: index.dense.search(qvec, 10), n)),
        "numpy brute force": throughput(lambda: brute_force_search(index.dense.vectors, qvec, 10), n),
        "bm25": throughput(lambda: index.bm25.search(queries, 10), n),
        "hybrid": throughput(lambda: index.rank(queries, 10, "hybrid"), n),
        "hybrid, before": throughput(lambda: [hybrid_before(index, q, qvec[i : i + 1], 10)
                                              for i, q in enumerate(queries)], n),
    }
    ratio = single["hybrid"]["p50_ms"] / max(single["numpy brute force"]["p50_ms"], 1e-9)
    before = single["hybrid, before"]["p50_ms"] / max(single["numpy brute force"]["p50_ms"], 1e-9)
    return {"single_query": single, "batched_qps": batched, "hybrid_over_brute_force_p50": ratio,
            "hybrid_before_over_brute_force_p50": before}


def hybrid_before(index: ToolIndex, query: str, qvec: np.ndarray, k: int) -> list[tuple[int, float]]:
    """One query the way `rank` did it before this benchmark's fix: BM25 through a scipy query matrix (its
    construction dominated), fusion through per-candidate Python dicts. Same ranking, for before/after."""
    depth = index.fusion.depth
    dense_scores, dense_ids = index.dense.search(qvec, max(k, depth))
    block = index.bm25.scores([query])
    ids = top_k(block, min(depth, index.bm25.size))[0]
    scores = block[0][ids]
    keep = scores > 0
    return fuse_reference((dense_ids[0], dense_scores[0]), (ids[keep], scores[keep]), index.fusion, k)


# --- the full registry ------------------------------------------------------------------------------------
def full_registry() -> tuple[list[ToolSpec], dict[str, str], str]:
    """Every tool `cworld registry build --harvested` indexes, without starting a server: the sandbox's, the
    real servers' recorded listings, the manifest's catalogs and the harvested catalog; and server texts."""
    from cworld.environment import Environment
    from cworld.registry.build import server_descriptions
    from cworld.registry.manifest import load_catalog, load_manifest
    from cworld.registry.tools import environment_tools

    env = Environment.resolve(ROOT)
    listed = environment_tools(env)
    specs = load_manifest(env, harvested=True)
    harvested = [t for s in specs if s.kind == "catalog" and s.id not in {c.server for c in listed.catalogs}
                 for t in load_catalog(env, s)]
    parts = [list(listed.sandbox.values()), listed.catalogs, listed.recorded, harvested]
    source = (f"sandbox {len(parts[0])} + catalogs {len(parts[1])} + recorded real servers {len(parts[2])} + "
              f"harvested {len(parts[3])}")
    return [t for part in parts for t in part], server_descriptions(specs), source


def _drop_from_cache(cache_file: Path, model: str, texts: list[str]) -> None:
    from cworld.registry.index.cache import text_key

    with sqlite3.connect(cache_file) as db:
        db.executemany("DELETE FROM vectors WHERE key = ?", [(text_key(model, "doc", t),) for t in texts])


def measure_builds(tools: list[ToolSpec], descriptions: dict[str, str], embedder: Embedder, work: Path,
                   cache: Path, reuse: bool) -> tuple[dict[str, Any], Path]:
    """Cold (or, `reuse`, from `cache`), unchanged and incremental builds through `build_index`; the first
    build's cache is saved to `cache` for the next run's `--reuse-cache`. Returns the first index folder."""
    from cworld.registry.index.builder import CACHE_FILE, build_index

    out: dict[str, Any] = {}
    cold = work / "cold"
    cold.mkdir(parents=True)
    if reuse and (cache / CACHE_FILE).is_file():
        shutil.copy(cache / CACHE_FILE, cold / CACHE_FILE)
    label = "cold" if not (cold / CACHE_FILE).is_file() else "first build, vectors from --cache"

    def timed(name: str, folder: Path, some: list[ToolSpec]) -> None:
        start = time.perf_counter()
        _, stats = build_index(some, folder, embedder=embedder, server_descriptions=descriptions)
        out[name] = {"seconds": time.perf_counter() - start, "tools": stats.total, "embedded": stats.embedded,
                     "cached": stats.cached, "reused": stats.reused}

    timed(label, cold, tools)
    cache.mkdir(parents=True, exist_ok=True)
    shutil.copy(cold / CACHE_FILE, cache / CACHE_FILE)
    timed("unchanged", cold, tools)
    last = tools[-1].server
    grown = work / "grown"
    shutil.copytree(cold, grown)
    build_index([t for t in tools if t.server != last], grown, embedder=embedder, server_descriptions=descriptions)
    added = [d.text for d in tool_documents([t for t in tools if t.server == last], descriptions)]
    _drop_from_cache(grown / CACHE_FILE, embedder.name, added)
    timed(f"incremental (+{last})", grown, tools)
    return out, cold


def measure_full_registry(args: argparse.Namespace) -> dict[str, Any]:
    """Builds, then search-only and end-to-end latencies on the full registry's index."""
    from retrieval import QUERIES

    from cworld.registry.index.quality import load_queries
    from cworld.registry.search import SearchService

    tools, descriptions, source = full_registry()
    embedder = resolve_embedder(args.model)
    texts = [q.query for q in load_queries(QUERIES)][: args.queries]
    out: dict[str, Any] = {"label": "full registry", "tools": len(tools), "source": source, "model": embedder.name}
    with tempfile.TemporaryDirectory(prefix="bench_index_") as tmp:
        out["builds"], folder = measure_builds(tools, descriptions, embedder, Path(tmp), args.cache, args.reuse_cache)
        out.update(measure_search(folder, texts, embedder))
        service = SearchService.load(folder)  # what `serve` opens: the index's own model, its query cache
        fresh = [f"{q} (asked anew {i})" for i, q in enumerate(texts[: args.e2e_queries])]
        service.search("warm up the model", 10, with_prereqs=True)
        out["end_to_end"] = {
            "new query (model embeds it)": time_each(lambda i: service.search(fresh[i], 10, with_prereqs=True),
                                                     len(fresh), warm=False),
            "repeated query (query cache)": time_each(lambda i: service.search(fresh[i], 10, with_prereqs=True),
                                                      len(fresh)),
        }
    return out


def measure_search(folder: Path, queries: list[str], embedder: Embedder) -> dict[str, Any]:
    """Search-only latencies: FAISS, brute-force numpy, BM25 and hybrid on precomputed query vectors."""
    index = ToolIndex.load(folder)
    start = time.perf_counter()
    qvec = embedder.embed_queries(queries)
    out: dict[str, Any] = {"query_embed_ms": (time.perf_counter() - start) / len(queries) * 1000}
    index.use_embedder(_Fixed(embedder, dict(zip(queries, qvec, strict=True))))
    out.update(search_latencies(index, queries, qvec))
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
    print(f"\n== {r['label']}: {r['tools']:,} tools, {r['model']}")
    if "source" in r:
        print(f"tools: {r['source']}")
    if "build_s" in r:
        b, m = r["build_s"], r["memory_mb"]
        print(f"build: {b['total']:.2f} s (documents {b['documents']:.2f}, embedding {b['embed']:.2f}, "
              f"FAISS+BM25 {b['faiss+bm25+docs']:.2f})")
        print(f"memory: RSS +{m['rss_delta']:.0f} MB; embeddings {m['embeddings']:.1f} MB, BM25 {m['bm25_matrices']:.1f} MB")
    for name, b in r.get("builds", {}).items():
        print(f"build, {name}: {b['seconds']:.2f} s ({b['tools']} tools: {b['embedded']} embedded by the model, "
              f"{b['cached']} from the cache, {b['reused']} reused)")
    print(f"query embedding: {r['query_embed_ms']:.2f} ms/query (batched)")
    print(f"{'search only (k=10)':<30} {'p50 ms':>8} {'p99 ms':>8} {'batched q/s':>12}")
    for name, lat in r["single_query"].items():
        print(f"{name:<30} {lat['p50_ms']:>8.3f} {lat['p99_ms']:>8.3f} {r['batched_qps'][name]:>12,.0f}")
    print(f"hybrid p50 / brute-force p50: {r['hybrid_over_brute_force_p50']:.2f}x "
          f"(before the fix: {r['hybrid_before_over_brute_force_p50']:.2f}x)")
    if "end_to_end" in r:
        print(f"{'end to end: search_tools path':<30} {'p50 ms':>8} {'p99 ms':>8}")
        for name, lat in r["end_to_end"].items():
            print(f"{name:<30} {lat['p50_ms']:>8.3f} {lat['p99_ms']:>8.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=60_000, help="synthetic catalog size")
    parser.add_argument("--queries", type=int, default=300, help="queries per search-only measurement")
    parser.add_argument("--e2e-queries", type=int, default=50, help="queries per end-to-end measurement")
    parser.add_argument("--model", default="minilm", help="embedder for the full registry (CWORLD_EMBED_MODEL syntax)")
    parser.add_argument("--reuse-cache", action="store_true", help="start the first build from --cache, not cold")
    parser.add_argument("--cache", type=Path, default=ROOT / ".cworld" / "cache" / "bench_index",
                        help="where the full registry's embedding cache is kept between runs")
    parser.add_argument("--skip-real", action="store_true", help="only the synthetic catalog")
    parser.add_argument("--skip-synthetic", action="store_true", help="only the full registry")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = []
    if not args.skip_real:
        results.append(measure_full_registry(args))
    if not args.skip_synthetic:
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
