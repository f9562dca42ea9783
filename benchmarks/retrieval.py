"""Retrieval quality on the quality set: Recall@1/5/10 and MRR for dense, BM25 and hybrid ranking, with
and without prerequisites, and the recall of the gold prerequisite tools.

    python benchmarks/retrieval.py [--tools FILE] [--queries FILE] [--model SPEC] [--sweep] [--json]
    python benchmarks/retrieval.py --harvested [--heldout] [--cache DIR] [--no-examples]

Tools: `--tools` (JSON list or JSONL of ToolSpec), else the workspace's `registry/tools.jsonl` (what
`cworld registry build` listed and indexed), else (or with `--tools default`) the sandbox apps' tools + the real servers' published tool lists
(registry/recorded/real_tools.json) + the schema-only catalogs of registry/servers.yaml. `--sweep` tunes
fusion and BM25 field weights on one half of the queries (split by a hash of the text) and reports the
other half, so a setting is never chosen on the queries it is judged on.

`--harvested`: the full registry (the default tools above + every schema-only tool of
registry/catalogs/harvested/, every one a distractor) and, besides the quality set, the dev halves of the
harvested query set (registry/eval/harvested_dev.jsonl) and of the intents set (intents_dev.jsonl, requests
written from the real servers' tool lists): Recall@1/5/10 and MRR for dense, BM25 and hybrid. The held-out
halves (harvested_heldout.jsonl, intents_heldout.jsonl) are scored only with `--heldout`, so tuning can look
at dev alone. Each
query set's overlap check (no 4-word run of a gold tool's description, no tool name's words in order)
is printed with it. `--cache DIR` puts the embedding cache there (default: the workspace's cache/).
`--no-examples` indexes the documents without their generated example requests (the index before issue 34).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cworld.data_model.tools import ToolSpec  # noqa: E402
from cworld.registry.graph import build_graph, declared_prerequisites, prerequisites  # noqa: E402
from cworld.registry.index.bm25 import FIELD_WEIGHTS, BM25Index, BM25Params  # noqa: E402
from cworld.registry.index.builder import default_multilingual, server_descriptions  # noqa: E402
from cworld.registry.index.cache import CachedEmbedder, EmbeddingCache  # noqa: E402
from cworld.registry.index.embedder import resolve_embedder  # noqa: E402
from cworld.registry.index.hybrid import FusionParams  # noqa: E402
from cworld.registry.index.quality import (  # noqa: E402
    QualityQuery,
    applicable,
    best_method,
    copied_text,
    load_queries,
    retrieval_metrics,
    surfaced_recall,
)
from cworld.registry.index.store import ToolIndex  # noqa: E402

QUERIES = ROOT / "registry" / "eval" / "queries.jsonl"
HARVESTED_DEV = ROOT / "registry" / "eval" / "harvested_dev.jsonl"
HARVESTED_HELDOUT = ROOT / "registry" / "eval" / "harvested_heldout.jsonl"
INTENTS_DEV = ROOT / "registry" / "eval" / "intents_dev.jsonl"
INTENTS_HELDOUT = ROOT / "registry" / "eval" / "intents_heldout.jsonl"
REAL_TOOLS = ROOT / "registry" / "recorded" / "real_tools.json"
MANIFEST = ROOT / "registry" / "servers.yaml"
KS = (1, 5, 10)


# --- the tools to search --------------------------------------------------------------------------
def read_tool_file(path: Path) -> list[ToolSpec]:
    text = path.read_text(encoding="utf-8").strip()
    rows = json.loads(text) if text.startswith("[") else [json.loads(line) for line in text.splitlines() if line.strip()]
    return [ToolSpec.model_validate(row) for row in rows]


def catalog_tools(manifest: Path) -> list[ToolSpec]:
    import yaml

    out = []
    for entry in (yaml.safe_load(manifest.read_text(encoding="utf-8")) or {}).get("servers", []):
        if entry.get("kind") == "catalog" and entry.get("catalog"):
            for item in json.loads((manifest.parent / entry["catalog"]).read_text(encoding="utf-8")):
                out.append(ToolSpec.model_validate({**item, "server": entry["id"], "availability": "schema-only",
                                                    "server_kind": "catalog"}))
    return out


def default_tools() -> tuple[list[ToolSpec], str]:
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.specs import tool_specs

    sandbox = [t for app in all_apps() for t in tool_specs(app)]
    real = read_tool_file(REAL_TOOLS)
    catalogs = catalog_tools(MANIFEST)
    source = f"sandbox apps ({len(sandbox)}) + {REAL_TOOLS.name} ({len(real)}) + catalogs ({len(catalogs)})"
    return sandbox + real + catalogs, source


def harvested_tools() -> tuple[list[ToolSpec], dict[str, str]]:
    """The harvested catalog as `cworld registry build --harvested` loads it (schema-only, each server's
    category card), and each server's summary as its description."""
    from cworld.environment import Environment
    from cworld.registry.harvest.catalog import harvested_specs
    from cworld.registry.manifest import load_catalog

    env = Environment(ROOT)
    specs = harvested_specs(env)
    return [t for spec in specs for t in load_catalog(env, spec)], {s.id: s.description for s in specs}


def load_tools(tools_arg: str | None) -> tuple[list[ToolSpec], str]:
    if tools_arg == "default":
        return default_tools()
    if tools_arg:
        return read_tool_file(Path(tools_arg)), tools_arg
    built = Path(os.environ.get("CWORLD_WORKSPACE", ".cworld")) / "registry" / "tools.jsonl"
    if built.is_file():
        return read_tool_file(built), str(built)
    return default_tools()


# --- measuring ------------------------------------------------------------------------------------------
def ranked_ids(index: ToolIndex, queries: list[QualityQuery], method: str, k: int = 10) -> list[list[str]]:
    return [[tool_id for tool_id, _ in hits] for hits in index.search([q.query for q in queries], k, method)]  # type: ignore[arg-type]


def with_prereqs(graph: Any, ranked: list[list[str]], k: int) -> list[list[str]]:
    """Each of the top k hits followed by its prerequisites (not yet listed): what --with-prereqs shows."""
    out = []
    for hits in ranked:
        seen: list[str] = []
        for tool_id in hits[:k]:
            for t in [tool_id, *(p.tool_id for p in prerequisites(graph, tool_id))]:
                if t not in seen:
                    seen.append(t)
        out.append(seen)
    return out


def prereq_report(graph: Any, ranked: list[list[str]], queries: list[QualityQuery]) -> dict[str, Any]:
    wanting = [(r, q) for r, q in zip(ranked, queries, strict=True) if q.prereqs]
    rows: dict[str, Any] = {"queries_with_prereqs": len(wanting)}
    for k in (5, 10):
        plain = [set(r[:k]) for r, _ in wanting]
        expanded = [set(s) for s in with_prereqs(graph, [r for r, _ in wanting], k)]
        wants = [q.prereqs for _, q in wanting]
        rows[f"k={k}"] = {"without": surfaced_recall(plain, wants), "with": surfaced_recall(expanded, wants),
                          "avg_tools_shown_with": sum(map(len, expanded)) / max(len(expanded), 1)}
    return rows


def plus_prereqs(graph: Any, ranked: list[list[str]], queries: list[QualityQuery]) -> dict[str, float]:
    """Recall@k when the top k hits are shown with their prerequisites (a longer list: its mean size is
    reported), and when that expanded list is cut back to k entries (prerequisites then push hits out)."""
    out: dict[str, float] = {}
    for k in KS:
        expanded = with_prereqs(graph, ranked, k)
        out[f"recall@{k}"] = sum(1 for e, q in zip(expanded, queries, strict=True) if set(e) & set(q.tools)) / max(len(queries), 1)
        out[f"recall@{k} cut to k"] = retrieval_metrics([e[:k] for e in expanded], queries, (k,))[f"recall@{k}"]
        out[f"tools shown@{k}"] = sum(map(len, expanded)) / max(len(expanded), 1)
    return out


VARIANTS: tuple[tuple[str, str, FusionParams], ...] = (
    ("dense", "dense", FusionParams()),
    ("bm25", "bm25", FusionParams()),
    ("hybrid (rrf)", "hybrid", FusionParams(kind="rrf", dense_weight=0.5, rrf_k=60)),
    ("hybrid (weighted)", "hybrid", FusionParams()),
)


def measure(index: ToolIndex, graph: Any, queries: list[QualityQuery]) -> dict[str, Any]:
    """Every variant's metrics; the default method as an index would choose it; prerequisites on top of it."""
    results: dict[str, Any] = {}
    ranked: dict[str, list[list[str]]] = {}
    for name, method, fusion in VARIANTS:
        index.fusion = fusion
        ranked[name] = ranked_ids(index, queries, method)
        results[name] = retrieval_metrics(ranked[name], queries, KS)
    index.fusion = FusionParams()
    by_method = {"dense": results["dense"], "bm25": results["bm25"], "hybrid": results["hybrid (weighted)"]}
    default = best_method(by_method)
    default_name = {"dense": "dense", "bm25": "bm25", "hybrid": "hybrid (weighted)"}[default]
    results["default method"] = default
    results[f"{default}+prereqs"] = plus_prereqs(graph, ranked[default_name], queries)
    results["hybrid+prereqs"] = plus_prereqs(graph, ranked["hybrid (weighted)"], queries)
    results["prerequisite recall"] = prereq_report(graph, ranked[default_name], queries)
    return results


# --- the harvested query set: every registry tool a distractor -----------------------------------------------
HARVEST_KS = (1, 5, 10)
METHODS = ("dense", "bm25", "hybrid")


def overlap_report(queries: list[QualityQuery], by_id: dict[str, ToolSpec]) -> list[str]:
    """Each way a query copies one of its gold tools (copied_text); empty when the set is clean."""
    return [f"{q.query!r}: {why}" for q in queries for t in q.tools if t in by_id
            and (why := copied_text(q.query, by_id[t]))]


def with_indexed_gold(queries: list[QualityQuery], tool_ids: set[str]) -> list[QualityQuery]:
    """Each query with its gold cut to the indexed tools, and kept when any is left: a gold list names every
    server's equivalent, and a registry being harvested may not hold all of those servers yet."""
    out = []
    for q in queries:
        gold = [t for t in q.tools if t in tool_ids]
        if gold:
            out.append(q.model_copy(update={"tools": gold}))
    return out


def harvested_section(index: ToolIndex, splits: dict[str, list[QualityQuery]]) -> dict[str, Any]:
    """Recall@1/5/10 and MRR of dense, BM25 and (weighted) hybrid on each split."""
    index.fusion = FusionParams()
    return {name: {"queries": len(qs), **{m: retrieval_metrics(ranked_ids(index, qs, m), qs, HARVEST_KS)
                                          for m in METHODS}} for name, qs in splits.items()}


def print_harvested(section: dict[str, Any], overlaps: list[str], missing: list[str]) -> None:
    print("\nharvested query set (full registry: every tool a distractor)")
    print(f"overlap check: {len(overlaps)} copied phrases or names; gold tools missing: {len(missing)}")
    for line in (overlaps + missing)[:10]:
        print(f"  {line}")
    for name, rows in section.items():
        print(f"\n{name} ({rows['queries']} queries)  R@1    R@5    R@10   MRR")
        for m in METHODS:
            print(f"  {m:<18} {_fmt(rows[m])}")


def search_latency(index: ToolIndex, queries: list[str], k: int = 10) -> dict[str, float]:
    """Single-query hybrid search, p50/p99 in ms, its query vectors embedded beforehand (the embedding cache
    answers): the cost of ranking a `search_tools` query, not of embedding it."""
    index.embedder.embed_queries(queries)
    if index.multilingual is not None:
        index.multilingual_embedder.embed_queries(queries)
    samples = []
    for query in queries:
        start = time.perf_counter()
        index.search([query], k, "hybrid")
        samples.append((time.perf_counter() - start) * 1000)
    ordered = sorted(samples)
    return {"queries": len(samples), "p50_ms": ordered[len(ordered) // 2],
            "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]}


# --- sweep: tune on one half, judge on the other ---------------------------------------------------------------
def split(queries: list[QualityQuery]) -> tuple[list[QualityQuery], list[QualityQuery]]:
    dev, test = [], []
    for q in queries:
        (dev if hashlib.sha256(q.query.encode()).digest()[0] % 2 == 0 else test).append(q)
    return dev, test


def sweep(index: ToolIndex, queries: list[QualityQuery]) -> dict[str, Any]:
    """BM25 field weights x fusion settings, chosen jointly on dev (hybrid Recall@5, then MRR), scored on test."""
    dev, test = split(queries)
    fusions = [FusionParams(kind="weighted", dense_weight=w / 10) for w in range(3, 9)]
    fusions += [FusionParams(kind="rrf", dense_weight=w / 10, rrf_k=rk) for w in (5, 6) for rk in (10, 60)]
    shipped_bm25, shipped_fusion = index.bm25, index.fusion

    def score(qs: list[QualityQuery], method: str) -> dict[str, float]:
        return retrieval_metrics(ranked_ids(index, qs, method), qs, KS)

    rows = []
    for name_w in (1.0, 2.0, 3.0):
        for params_w in (0.25, 0.5, 1.0):
            weights = {**FIELD_WEIGHTS, "name": name_w, "params": params_w}
            index.bm25 = BM25Index.build([d.fields for d in index.docs], BM25Params(field_weights=weights))
            bm25_dev, bm25_test = score(dev, "bm25"), score(test, "bm25")
            for fusion in fusions:
                index.fusion = fusion
                rows.append({"field_weights": weights, "fusion": fusion.to_json(), "bm25_dev": bm25_dev,
                             "bm25_test": bm25_test, "dev": score(dev, "hybrid"), "test": score(test, "hybrid")})
    index.bm25, index.fusion = shipped_bm25, shipped_fusion
    shipped = {"dev": score(dev, "hybrid"), "test": score(test, "hybrid"), "fusion": shipped_fusion.to_json(),
               "field_weights": shipped_bm25.params.field_weights}
    key = lambda r: (r["dev"]["recall@5"], r["dev"]["mrr"])  # noqa: E731
    bm25_key = lambda r: (r["bm25_dev"]["recall@5"], r["bm25_dev"]["mrr"])  # noqa: E731
    best_bm25 = max(rows, key=bm25_key)["field_weights"]  # stage 1: BM25 on its own
    staged = max((r for r in rows if r["field_weights"] == best_bm25), key=key)  # stage 2: the fusion
    return {"dev_queries": len(dev), "test_queries": len(test), "configs": sorted(rows, key=key, reverse=True),
            "two_stage": staged, "shipped": shipped}


# --- printing ---------------------------------------------------------------------------------------------------
def _fmt(metrics: dict[str, float]) -> str:
    return "  ".join(f"{metrics[f'recall@{k}']:.3f}" for k in KS) + f"  {metrics['mrr']:.3f}"


def print_report(info: dict[str, Any], results: dict[str, Any]) -> None:
    print(f"tools: {info['tools']} from {info['source']}")
    print(f"queries: {info['queries']} of {info['all_queries']} apply (gold tools indexed); model: {info['model']}"
          f" (+ {info['multilingual']}); "
          f"index build {info['build_s']:.1f} s, search {info['search_s']:.1f} s; "
          f"example requests {'indexed' if info['examples'] else 'off'}")
    if "latency" in info:
        lat = info["latency"]
        print(f"hybrid search, one query at a time ({lat['queries']} queries, vectors cached): "
              f"p50 {lat['p50_ms']:.2f} ms, p99 {lat['p99_ms']:.2f} ms")
    print(f"\n{'method':<20} R@1    R@5    R@10   MRR")
    for name, _, _ in VARIANTS:
        print(f"{name:<20} {_fmt(results[name])}")
    default = results["default method"]
    print(f"\ndefault method (best Recall@5, then MRR): {default}")
    for name in (f"{default}+prereqs", "hybrid+prereqs") if default != "hybrid" else ("hybrid+prereqs",):
        r = results[name]
        print(f"{name:<20} " + "  ".join(f"R@{k} {r[f'recall@{k}']:.3f} (cut to k: {r[f'recall@{k} cut to k']:.3f}, "
                                          f"{r[f'tools shown@{k}']:.1f} tools shown)" for k in KS))
    pr = results["prerequisite recall"]
    print(f"\ngold prerequisite recall ({pr['queries_with_prereqs']} queries name prerequisites), default method:")
    for k in (5, 10):
        row = pr[f"k={k}"]
        print(f"  top {k:<3} without --with-prereqs {row['without']:.3f}   with {row['with']:.3f}"
              f"   ({row['avg_tools_shown_with']:.1f} tools shown)")


def _label(row: dict[str, Any]) -> str:
    f, w = row["fusion"], row["field_weights"]
    fusion = f"{f['kind']} w={f['dense_weight']}" + (f" k={f['rrf_k']:.0f}" if f["kind"] == "rrf" else "")
    return f"name={w['name']} params={w['params']:<4} {fusion}"


def print_sweep(result: dict[str, Any]) -> None:
    print(f"\nsweep: chosen on {result['dev_queries']} dev queries, judged on {result['test_queries']} test queries")
    print(f"  {'BM25 field weights + fusion (best 8 on dev)':<44} dev R@5/MRR    test R@5/MRR   (BM25 alone: test R@5)")
    for row in result["configs"][:8]:
        print(f"  {_label(row):<44} {row['dev']['recall@5']:.3f}/{row['dev']['mrr']:.3f}   "
              f"{row['test']['recall@5']:.3f}/{row['test']['mrr']:.3f}   ({row['bm25_test']['recall@5']:.3f})")
    for title, s in (("two-stage choice", result["two_stage"]), ("shipped", result["shipped"])):
        print(f"  {title + ': ' + _label(s):<44} {s['dev']['recall@5']:.3f}/{s['dev']['mrr']:.3f}   "
              f"{s['test']['recall@5']:.3f}/{s['test']['mrr']:.3f}")
    print("  (two-stage: BM25 field weights chosen on dev by BM25 alone, then the fusion on dev given them)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", help="JSON/JSONL file of ToolSpecs to search, or 'default' for the sandbox "
                        "apps + real servers' fixture + catalogs (default: the workspace's list when built)")
    parser.add_argument("--queries", default=str(QUERIES), help="quality set (JSONL)")
    parser.add_argument("--model", default=None, help="embedder spec: minilm (default), hash[:DIM], or a model folder")
    parser.add_argument("--sweep", action="store_true", help="tune fusion / BM25 weights on a dev half, report the test half")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--no-cache", action="store_true", help="embed everything afresh (no embedding cache)")
    parser.add_argument("--no-multilingual", action="store_true", help="leave the non-English documents to MiniLM "
                        "(no multilingual-e5 part: the index as it was before issue 24)")
    parser.add_argument("--latency", action="store_true", help="time single-query hybrid search over the quality "
                        "set's queries (their vectors embedded first)")
    parser.add_argument("--no-examples", action="store_true", help="index without the generated example requests "
                        "(example_requests.py): the documents as they were before issue 34")
    parser.add_argument("--cache", default=None, help="folder for the embedding cache (default: <workspace>/cache)")
    parser.add_argument("--harvested", action="store_true", help="add the harvested catalog's tools and score the "
                        "harvested query set's dev half")
    parser.add_argument("--heldout", action="store_true", help="with --harvested: score the held-out half too")
    args = parser.parse_args(argv)

    tools, source = load_tools(args.tools)
    descriptions = server_descriptions(MANIFEST)
    if args.harvested:
        extra, harvested_desc = harvested_tools()
        tools, source = tools + extra, f"{source} + harvested ({len(extra)})"
        descriptions.update(harvested_desc)
    if not tools:
        parser.error(f"no tools in {source}")
    all_queries = load_queries(Path(args.queries))
    queries = applicable(all_queries, {t.id for t in tools})
    embedder = resolve_embedder(args.model)
    multilingual = None if args.no_multilingual else default_multilingual(embedder)
    if not args.no_cache:  # vectors keyed by (model, text): a rerun embeds only what changed
        cache_dir = Path(args.cache) if args.cache else Path(os.environ.get("CWORLD_WORKSPACE", ".cworld")) / "cache"
        cache = EmbeddingCache(cache_dir / "embed_cache.sqlite")
        embedder = CachedEmbedder(embedder, cache)
        multilingual = CachedEmbedder(multilingual, cache) if multilingual is not None else None
    start = time.perf_counter()
    index, _ = ToolIndex.build(tools, embedder, server_descriptions=descriptions, multilingual=multilingual,
                               with_examples=not args.no_examples)
    build_s = time.perf_counter() - start
    graph = build_graph(tools, declared_prerequisites())
    start = time.perf_counter()
    results = measure(index, graph, queries)
    info = {"tools": len(tools), "source": source, "queries": len(queries), "all_queries": len(all_queries),
            "model": embedder.name, "build_s": build_s, "examples": not args.no_examples,
            "multilingual": f"{index.multilingual.model} over {index.multilingual.size} non-English documents"
            if index.multilingual is not None else "no multilingual part", "search_s": time.perf_counter() - start}
    if args.latency:
        info["latency"] = search_latency(index, [q.query for q in queries])
    swept = sweep(index, queries) if args.sweep else None
    harvested = overlaps = missing = None
    if args.harvested:
        paths = {"harvested dev": HARVESTED_DEV, "intents dev": INTENTS_DEV,
                 **({"harvested held-out": HARVESTED_HELDOUT, "intents held-out": INTENTS_HELDOUT} if args.heldout else {})}
        splits = {name: load_queries(path) for name, path in paths.items()}
        by_id = {t.id: t for t in tools}
        everything = [q for qs in splits.values() for q in qs]
        overlaps = overlap_report(everything, by_id)
        missing = sorted({t for q in everything for t in q.tools if t not in by_id})
        harvested = harvested_section(index, {n: with_indexed_gold(qs, set(by_id)) for n, qs in splits.items()})
    if args.json:
        print(json.dumps({"info": info, "results": results, "sweep": swept, "harvested": harvested,
                          "overlaps": overlaps, "missing": missing}, indent=2))
    else:
        print_report(info, results)
        if swept:
            print_sweep(swept)
        if harvested is not None:
            print_harvested(harvested, overlaps or [], missing or [])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
