"""The retrieval quality set and the metrics computed on it (Recall@k, MRR, prerequisite recall).

A query line of `registry/eval/queries.jsonl`:

    {"query": "...", "tools": ["server/name", ...], "prereqs": ["server/name", ...]}

Lines starting with `#` are comments (a set's header says how it was written). `tools` are the tools
that serve the request: any one of them in the top k is a hit (several are listed
only when they are true alternatives, e.g. two ways to read a file). `prereqs` are tools that must or
usually run first (look up the id before acting on it) — what plain similarity search misses.

The same metrics choose an index's default method: whichever of dense, BM25 and hybrid measures best.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from cworld.data_model.tools import ToolSpec
from cworld.errors import ContentError
from cworld.registry.index.text import STOPWORDS, stem, words

#: Fewer applicable queries than this and an index keeps the built-in default method.
MIN_QUERIES_TO_CHOOSE = 20


class QualityQuery(BaseModel):
    query: str
    tools: list[str] = Field(min_length=1)
    prereqs: list[str] = Field(default_factory=list)
    note: str = ""


def load_queries(path: Path) -> list[QualityQuery]:
    """Every query of a quality-set file; a bad line is a ContentError naming the file and line."""
    out = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            out.append(QualityQuery.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            raise ContentError(f"{path}:{lineno}: not a quality-set query ({first})") from None
    return out


def _stems(text: str, content_only: bool = False) -> list[str]:
    return [stem(w) for w in words(text) if not content_only or (w not in STOPWORDS and len(w) > 1)]


def _contains_run(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def copied_text(query: str, tool: ToolSpec, run: int = 4) -> str | None:
    """How `query` copies `tool`, or None: a run of `run` words (stemmed) shared with its description, or
    its name's words in order (stopwords aside; names of one content word, `get_logs`, are exempt: "logs"
    is an everyday word). A query written from the tool's own text would measure string matching."""
    asked, described = _stems(query), _stems(tool.description)
    grams = {tuple(described[i : i + run]) for i in range(len(described) - run + 1)}
    for i in range(len(asked) - run + 1):
        if tuple(asked[i : i + run]) in grams:
            return f"shares '{' '.join(asked[i : i + run])}' with the description of {tool.id}"
    name = _stems(tool.name.replace("-", " "), content_only=True)
    if len(name) > 1 and _contains_run(_stems(query, content_only=True), name):
        return f"names {tool.id} ('{' '.join(name)}')"
    return None


def applicable(queries: Sequence[QualityQuery], tool_ids: set[str]) -> list[QualityQuery]:
    """Queries whose gold tools are all indexed (a registry without a server cannot be asked for it)."""
    return [q for q in queries if all(t in tool_ids for t in q.tools)]


def first_hit_rank(ranked: Sequence[str], gold: Sequence[str]) -> int | None:
    """1-based rank of the first gold tool, None when none was returned."""
    wanted = set(gold)
    for rank, tool_id in enumerate(ranked, 1):
        if tool_id in wanted:
            return rank
    return None


def retrieval_metrics(ranked_lists: Sequence[Sequence[str]], queries: Sequence[QualityQuery],
                      ks: Sequence[int] = (1, 5, 10)) -> dict[str, float]:
    """Recall@k (a gold tool in the top k) for each k, and MRR over the whole returned list."""
    n = max(len(queries), 1)
    ranks = [first_hit_rank(r, q.tools) for r, q in zip(ranked_lists, queries, strict=True)]
    metrics = {f"recall@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in ks}
    metrics["mrr"] = sum(1.0 / r for r in ranks if r is not None) / n
    return metrics


def surfaced_recall(surfaced: Sequence[set[str]], wanted: Sequence[Sequence[str]]) -> float:
    """Share of wanted tools (over all queries that want any) that appear in the surfaced sets."""
    total = found = 0
    for seen, want in zip(surfaced, wanted, strict=True):
        total += len(want)
        found += sum(1 for t in want if t in seen)
    return found / total if total else 0.0


Searcher = Callable[[list[str], int, str], list[list[str]]]
"""(queries, k, method) -> ranked tool ids per query."""


def measure_methods(search: Searcher, queries: Sequence[QualityQuery], methods: Sequence[str],
                    k: int = 10) -> dict[str, dict[str, float]]:
    texts = [q.query for q in queries]
    return {m: retrieval_metrics(search(texts, k, m), queries) for m in methods}


def best_method(scores: dict[str, dict[str, float]]) -> str:
    """Highest Recall@5, then MRR, then Recall@1; ties go to the earlier method (the simpler one)."""
    order = list(scores)
    return max(order, key=lambda m: (scores[m]["recall@5"], scores[m]["mrr"], scores[m]["recall@1"], -order.index(m)))
