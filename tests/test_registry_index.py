"""The tool index: documents, BM25, fusion, FAISS, persistence, incremental rebuilds, caches, the quality
set and `cworld search`."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cworld.data_model.tools import ToolSpec
from cworld.errors import ConfigError, UsageError
from cworld.registry.index import HashEmbedder, ToolIndex, build_index, split_identifier, tool_document
from cworld.registry.index.bm25 import BM25Index, BM25Params
from cworld.registry.index.cache import CachedEmbedder, EmbeddingCache
from cworld.registry.index.dense import DenseIndex, brute_force_search
from cworld.registry.index.embedder import MINILM_MAX_LENGTH, FlagEmbedder, resolve_embedder
from cworld.registry.index.hybrid import FusionParams, fuse, minmax, rrf_scores
from cworld.registry.index.quality import QualityQuery, load_queries, retrieval_metrics
from cworld.registry.index.text import stem, tokenize

ROOT = Path(__file__).resolve().parent.parent
QUALITY_SET = ROOT / "registry" / "eval" / "queries.jsonl"
REAL_TOOLS = ROOT / "registry" / "recorded" / "real_tools.json"


class CountingEmbedder:
    """A hash embedder that counts how many texts it was asked to embed."""

    def __init__(self, dim: int = 64) -> None:
        self.inner = HashEmbedder(dim)
        self.name, self.spec = self.inner.name, self.inner.spec
        self.docs = 0
        self.queries = 0

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.docs += len(texts)
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        self.queries += len(texts)
        return self.inner.embed_queries(texts)


def tool(server: str, name: str, description: str, **params: str) -> ToolSpec:
    props = {p: {"type": "string", "description": d} for p, d in params.items()}
    return ToolSpec(server=server, name=name, description=description,
                    input_schema={"type": "object", "properties": props, "required": list(props)})


TOOLS = [
    tool("mail", "send_email", "Send a new email to contacts.", to="contact ids", subject="subject line"),
    tool("mail", "search_contacts", "Find contacts by name or company.", query="words to match"),
    tool("files", "read_text_file", "Read the complete contents of a file as text.", path="file path"),
    tool("files", "list_directory", "List the files and folders in a directory.", path="folder path"),
    tool("shop", "add_to_cart", "Add units of a product to the shopping cart.", product_id="product id"),
    tool("clock", "schedule_reminder", "Set a reminder for a local time.", at="local time"),
]


# --- documents and tokens -------------------------------------------------------------------------------
def test_identifiers_split_into_words() -> None:
    assert split_identifier("list_directory_with_sizes") == ["list", "directory", "with", "sizes"]
    assert split_identifier("getHTTPResponse") == ["get", "http", "response"]
    assert split_identifier("brave-search") == ["brave", "search"]
    assert split_identifier("entityNames") == ["entity", "names"]


def test_document_holds_name_words_description_parameters_and_server_text() -> None:
    doc = tool_document(TOOLS[0], "Your email: read, send and file messages.")
    assert doc.text.startswith("send email (mail): Send a new email")
    assert "to (contact ids)" in doc.fields["params"]
    assert "Your email" in doc.fields["server"]
    assert doc.content_hash != tool_document(TOOLS[0]).content_hash  # the server text is part of the content


def test_stemming_folds_inflections_consistently() -> None:
    for a, b in [("emails", "email"), ("created", "create"), ("sending", "send"), ("categories", "category"),
                 ("messages", "message"), ("stopped", "stop")]:
        assert stem(a) == stem(b), (a, b)
    assert stem("user") != stem("use")
    assert tokenize("Please send the emails to me") == ["send", "email"]


# --- BM25 --------------------------------------------------------------------------------------------------------
def bm25_by_formula(docs: list[list[str]], query: list[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    avg = sum(map(len, docs)) / len(docs)
    out = []
    for doc in docs:
        score = 0.0
        for term in query:
            df = sum(1 for d in docs if term in d)
            tf = doc.count(term)
            if tf:
                idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avg))
        out.append(score)
    return out


def test_bm25_ranks_a_toy_corpus_in_the_known_order_with_okapi_scores() -> None:
    texts = ["apple apple pie", "apple crumble with custard and fresh cream and berries", "banana bread", "cherry apple tart recipe"]
    index = BM25Index.build([{"description": t} for t in texts], BM25Params(field_weights={"description": 1.0}))
    scores, ids = index.search(["apple"], k=4)
    assert ids[0][:3].tolist() == [0, 3, 1]  # more occurrences, then shorter documents
    assert scores[0][3] == 0.0  # the banana document does not match
    expected = bm25_by_formula([tokenize(t) for t in texts], ["appl"])
    assert np.allclose(index.scores(["apple"])[0], expected, atol=1e-5)


def test_bm25_field_weights_favour_words_in_the_name() -> None:
    docs = [{"name": "archive note", "description": "keep a message"},
            {"name": "keep item", "description": "archive it for later"}]
    index = BM25Index.build(docs, BM25Params(field_weights={"name": 3.0, "description": 1.0}))
    _, ids = index.search(["archive"], k=2)
    assert ids[0].tolist() == [0, 1]


def test_bm25_round_trips_through_disk(tmp_path: Path) -> None:
    index = BM25Index.build([{"description": t} for t in ("red fox", "blue whale", "red whale")])
    index.save(tmp_path)
    again = BM25Index.load(tmp_path)
    assert np.allclose(again.scores(["red whale"]), index.scores(["red whale"]))


# --- fusion --------------------------------------------------------------------------------------------
def test_reciprocal_rank_fusion_adds_weighted_reciprocal_ranks() -> None:
    fused = rrf_scores([np.array([1, 2, 3]), np.array([3, 1])], [0.5, 0.5], rrf_k=60)
    assert fused[1] == pytest.approx(0.5 / 61 + 0.5 / 62)
    assert fused[3] == pytest.approx(0.5 / 63 + 0.5 / 61)
    assert fused[2] == pytest.approx(0.5 / 62)
    ranked = fuse((np.array([1, 2, 3]), np.zeros(3)), (np.array([3, 1]), np.zeros(2)), FusionParams(kind="rrf"), k=3)
    assert [doc for doc, _ in ranked] == [1, 3, 2]


def test_weighted_fusion_normalises_each_list_then_mixes() -> None:
    assert minmax(np.array([2.0, 1.0, 0.0])).tolist() == [1.0, 0.5, 0.0]
    dense = (np.array([0, 1, 2]), np.array([0.9, 0.8, 0.1]))
    lexical = (np.array([2, 0]), np.array([10.0, 2.0]))
    ranked = fuse(dense, lexical, FusionParams(kind="weighted", dense_weight=0.6), k=3)
    expected = {0: 0.6 * 1.0 + 0.4 * 0.0, 1: 0.6 * (0.7 / 0.8), 2: 0.6 * 0.0 + 0.4 * 1.0}
    assert [doc for doc, _ in ranked] == [0, 1, 2]
    for doc, score in ranked:
        assert score == pytest.approx(expected[doc])


# --- dense -------------------------------------------------------------------------------------------------
def test_faiss_flat_search_matches_brute_force_numpy() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(300, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[:5] + 0.01
    scores, ids = DenseIndex(vectors).search(queries, 7)
    bf_scores, bf_ids = brute_force_search(vectors, queries, 7)
    assert (ids == bf_ids).all()
    assert np.allclose(scores, bf_scores, atol=1e-5)
    assert ids[:, 0].tolist() == [0, 1, 2, 3, 4]


# --- the index: build, persist, load, rebuild --------------------------------------------------------------
def test_index_persists_and_loads_without_re_embedding(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    index, stats = build_index(TOOLS, tmp_path, embedder=embedder)
    assert (stats.embedded, embedder.docs) == (len(TOOLS), len(TOOLS))
    for name in ("meta.json", "tools.jsonl", "docs.jsonl", "embeddings.npy", "dense.faiss", "bm25_tf.npz"):
        assert (tmp_path / name).is_file(), name
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["model"] == "hash-64" and meta["dim"] == 64 and len(meta["hashes"]) == len(TOOLS)

    reader = CountingEmbedder()
    loaded = ToolIndex.load(tmp_path, reader)
    for method in ("dense", "bm25", "hybrid"):
        assert loaded.search(["read the file notes.txt"], 3, method)[0][0][0] == "files/read_text_file"  # type: ignore[arg-type]
    assert reader.docs == 0 and reader.queries == 2  # only the dense and hybrid queries were embedded
    assert np.array_equal(loaded.dense.vectors, index.dense.vectors)


def test_incremental_rebuild_embeds_only_changed_documents(tmp_path: Path) -> None:
    build_index(TOOLS, tmp_path, embedder=HashEmbedder(64))
    changed = [TOOLS[0].model_copy(update={"description": "Send an email now."}), *TOOLS[1:-1],
               tool("clock", "list_reminders", "Your reminders, soonest first.")]
    embedder = CountingEmbedder()
    index, stats = build_index(changed, tmp_path, embedder=embedder)
    assert (stats.embedded, stats.reused, embedder.docs) == (2, len(TOOLS) - 2, 2)
    assert "clock/schedule_reminder" not in index.row_of and "clock/list_reminders" in index.row_of
    fresh = ToolIndex.build(changed, HashEmbedder(64))[0]
    assert np.allclose(ToolIndex.load(tmp_path).dense.vectors, fresh.dense.vectors)


def test_embedding_cache_serves_texts_seen_before(tmp_path: Path) -> None:
    first = CountingEmbedder()
    cached = CachedEmbedder(first, EmbeddingCache(tmp_path / "cache.sqlite"))
    a = cached.embed_documents(["alpha beta", "gamma", "alpha beta"])
    assert first.docs == 2  # the repeated text is embedded once
    second = CountingEmbedder()
    again = CachedEmbedder(second, EmbeddingCache(tmp_path / "cache.sqlite")).embed_documents(["gamma", "alpha beta"])
    assert second.docs == 0 and np.allclose(again, a[[1, 0]])
    CachedEmbedder(second, EmbeddingCache(tmp_path / "cache.sqlite")).embed_queries(["gamma"])
    assert second.queries == 1  # query and document vectors are keyed apart


def test_loading_with_another_model_is_refused(tmp_path: Path) -> None:
    build_index(TOOLS, tmp_path, embedder=HashEmbedder(64))
    with pytest.raises(ConfigError, match="built with hash-64"):
        ToolIndex.load(tmp_path, HashEmbedder(32))
    with pytest.raises(UsageError, match="no tool index"):
        ToolIndex.load(tmp_path / "missing")


def test_duplicate_tool_ids_are_rejected() -> None:
    with pytest.raises(UsageError, match="share an id"):
        ToolIndex.build([TOOLS[0], TOOLS[0]], HashEmbedder(16))


def test_build_measures_methods_on_the_quality_set_and_stores_the_best(tmp_path: Path) -> None:
    queries = [QualityQuery(query=t.description, tools=[t.id]) for t in TOOLS] * 4
    index, _ = build_index(TOOLS, tmp_path, embedder=HashEmbedder(64), quality_set=queries)
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert set(meta["method_scores"]) == {"dense", "bm25", "hybrid"}
    best = max(meta["method_scores"].values(), key=lambda m: m["recall@5"])["recall@5"]
    assert meta["method_scores"][meta["default_method"]]["recall@5"] == best
    assert meta["method_source"].startswith("measured on 24")
    _, _ = build_index(TOOLS, tmp_path, embedder=HashEmbedder(64), quality_set=queries[:3])
    assert "built-in default" in json.loads((tmp_path / "meta.json").read_text())["method_source"]


def test_metrics_count_any_gold_tool_as_a_hit() -> None:
    queries = [QualityQuery(query="a", tools=["s/x", "s/y"]), QualityQuery(query="b", tools=["s/z"])]
    metrics = retrieval_metrics([["s/q", "s/y"], ["s/a", "s/b"]], queries, (1, 5))
    assert metrics == {"recall@1": 0.0, "recall@5": 0.5, "mrr": 0.25}


# --- embedders --------------------------------------------------------------------------------------------
def test_embedder_resolution() -> None:
    assert resolve_embedder("hash:48").name == "hash-48"
    with pytest.raises(ConfigError, match="no such model folder"):
        resolve_embedder("/nonexistent/model")
    default = resolve_embedder("minilm")
    assert isinstance(default, FlagEmbedder) and default.pooling == "mean" and default.kind == "flag"


def test_the_token_cap_is_part_of_the_vectors_name() -> None:
    """Vectors embedded at another cap differ, so an index or cache keyed by name must never mix them."""
    default = resolve_embedder("minilm")
    assert isinstance(default, FlagEmbedder) and default.max_length == MINILM_MAX_LENGTH
    own = resolve_embedder("minilm@256")  # the model's own max_seq_length: the plain name
    assert isinstance(own, FlagEmbedder) and own.name == "all-MiniLM-L6-v2" and own.max_length == 256
    capped = resolve_embedder("minilm@64")
    assert isinstance(capped, FlagEmbedder) and capped.name == "all-MiniLM-L6-v2@64" and capped.spec == "minilm@64"
    with pytest.raises(ConfigError, match="token cap"):
        resolve_embedder("minilm@lots")


def test_a_local_model_folder_is_recognised_by_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m3 = tmp_path / "bge-m3"
    m3.mkdir()
    (m3 / "config.json").write_text("{}")
    (m3 / "colbert_linear.pt").write_bytes(b"")
    monkeypatch.setenv("CWORLD_EMBED_MODEL", str(m3))
    found = resolve_embedder()
    assert isinstance(found, FlagEmbedder) and found.kind == "m3" and found.name == "bge-m3:bge-m3"
    mean = tmp_path / "st-model"
    (mean / "1_Pooling").mkdir(parents=True)
    (mean / "config.json").write_text("{}")
    (mean / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    local = resolve_embedder(str(mean))
    assert isinstance(local, FlagEmbedder) and (local.kind, local.pooling) == ("flag", "mean")
    with pytest.raises(ConfigError, match="no config.json"):
        resolve_embedder(str(tmp_path))


@pytest.fixture(scope="module")
def minilm() -> FlagEmbedder:
    embedder = resolve_embedder("minilm")
    assert isinstance(embedder, FlagEmbedder)
    return embedder


@pytest.mark.slow  # importing FlagEmbedding and loading the model: ~10-15 s on 2 cores
def test_packaged_minilm_embeds_normalised_vectors_that_rank_by_meaning(minilm: FlagEmbedder) -> None:
    index, _ = ToolIndex.build(TOOLS, minilm)
    assert index.dense.dim == 384
    assert np.allclose(np.linalg.norm(index.dense.vectors, axis=1), 1.0, atol=1e-4)
    hits = index.search(["write a message to my colleague", "what is in this folder"], 1, "dense")
    assert [h[0][0] for h in hits] == ["mail/send_email", "files/list_directory"]


# --- the quality set ------------------------------------------------------------------------------------------
def universe() -> list[ToolSpec]:
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.specs import tool_specs

    sandbox = [t for app in all_apps() for t in tool_specs(app)]
    real = [ToolSpec.model_validate(t) for t in json.loads(REAL_TOOLS.read_text())]
    crm = json.loads((ROOT / "registry" / "catalogs" / "helio_crm.json").read_text())
    return sandbox + real + [ToolSpec(server="helio-crm", name=t["name"]) for t in crm]


#: Server ids that are also everyday words ("what time is it", "my calendar") may appear in a request;
#: product-like ids (filesystem, sqlite, github, brave-search, helio-crm, datetime, git...) may not.
EVERYDAY_SERVER_WORDS = {"calendar", "chat", "clock", "docs", "finance", "mail", "shop", "travel", "crypto",
                         "graph", "math", "text", "units", "memory", "time", "fetch"}


def test_quality_set_is_large_and_every_gold_tool_exists() -> None:
    queries = load_queries(QUALITY_SET)
    assert len(queries) >= 150
    ids = {t.id for t in universe()}
    missing = sorted({g for q in queries for g in q.tools + q.prereqs if g not in ids})
    assert not missing, f"quality set names tools that do not exist: {missing[:10]}"
    servers = {g.split("/")[0] for q in queries for g in q.tools}
    assert {"filesystem", "memory", "git", "time", "sqlite", "fetch", "postgres"} <= servers
    assert len(servers) >= 15 and sum(1 for q in queries if q.prereqs) >= 40


def test_no_query_names_a_tool_or_a_server_id() -> None:
    tools = universe()
    phrases = {" " + " ".join(split_identifier(t.name)) + " " for t in tools}
    phrases |= {" " + " ".join(split_identifier(s)) + " " for s in {t.server for t in tools} - EVERYDAY_SERVER_WORDS}
    ids = {t.id for t in tools}
    for q in load_queries(QUALITY_SET):
        text = " " + " ".join(re.findall(r"[a-z0-9]+", q.query.lower())) + " "
        assert not re.search(r"[A-Za-z]_[A-Za-z]|\b[a-z]{2,}[A-Z][a-z]{2,}", q.query), f"identifier in: {q.query}"
        assert not any(i in q.query for i in ids), f"tool id in: {q.query}"
        named = [p.strip() for p in phrases if p in text]
        assert not named, f"{q.query!r} names {named}"


# --- `cworld search` ------------------------------------------------------------------------------------------
@pytest.fixture
def search_cli(monkeypatch: pytest.MonkeyPatch):
    from cworld.cli import main

    monkeypatch.setitem(main.COMMANDS, "search", "search")
    return main.cli


def test_cli_search_prints_hits_and_prerequisites(tmp_path: Path, search_cli, monkeypatch) -> None:
    from cworld.registry.search import build_search_index
    from cworld.sandbox.framework.app import Prerequisite

    ws = tmp_path / "ws"
    monkeypatch.setenv("CWORLD_WORKSPACE", str(ws))
    declared = [Prerequisite("mail/search_contacts", "mail/send_email", "produces", via="contact_id")]
    build_search_index(TOOLS, ws / "registry" / "index", embedder=HashEmbedder(64), declared=declared)
    runner = CliRunner()
    result = runner.invoke(search_cli, ["search", "send an email to Ana", "-k", "2", "--with-prereqs", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["hits"][0]["tool_id"] == "mail/send_email"
    assert data["hits"][0]["prerequisites"][0]["tool_id"] == "mail/search_contacts"
    assert len(data["hits"]) == 2 and data["method"] == "hybrid"
    table = runner.invoke(search_cli, ["search", "read a file", "--method", "bm25", "--with-prereqs"])
    assert table.exit_code == 0 and "files/read_text_file" in table.output and "run first" in table.output


def test_cli_search_without_an_index_says_how_to_build_one(tmp_path: Path, search_cli) -> None:
    result = CliRunner().invoke(search_cli, ["search", "anything", "--index", str(tmp_path / "none")])
    assert result.exit_code != 0
    assert "cworld registry build" in str(result.exception)
