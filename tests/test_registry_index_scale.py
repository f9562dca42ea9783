"""The index and the graph at harvest scale: batched, resumable, incremental builds over the 3,311 harvested
tools, and `cworld search --with-prereqs` finding a harvested tool's prerequisite."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cworld.data_model.tools import ToolSpec
from cworld.environment import Environment
from cworld.registry.graph import build_graph, prerequisites
from cworld.registry.harvest.catalog import harvested_specs
from cworld.registry.index import HashEmbedder, build_index
from cworld.registry.manifest import load_catalog
from cworld.registry.search import build_search_index

ROOT = Path(__file__).resolve().parent.parent
ENV = Environment.resolve(ROOT)


@pytest.fixture(scope="module")
def harvested() -> list[ToolSpec]:
    tools = [t for spec in harvested_specs(ENV) for t in load_catalog(ENV, spec)]
    assert len(tools) > 3000
    return tools


class Counting:
    """A hash embedder that counts document texts and can fail after some batches (an interrupted build)."""

    def __init__(self, fail_after: int | None = None) -> None:
        self.inner = HashEmbedder(32)
        self.name, self.spec = self.inner.name, self.inner.spec
        self.docs = self.calls = 0
        self.fail_after = fail_after

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise KeyboardInterrupt  # what Ctrl-C looks like in the middle of a build
        self.calls += 1
        self.docs += len(texts)
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_queries(texts)


def test_adding_a_harvested_server_embeds_only_its_tools(tmp_path: Path, harvested: list[ToolSpec]) -> None:
    last = harvested[-1].server
    before = [t for t in harvested if t.server != last]
    new = len(harvested) - len(before)
    progress: list[tuple[int, int]] = []
    first = Counting()
    # No multilingual part: the product pairs the hashing embedder with none (`default_multilingual`), but behind
    # Counting it did not see one and ran e5 over the ~3,300 tools' foreign rows (a minute, for nothing counted
    # here). The multilingual part, built, grown and searched, is test_registry_multilingual.py's.
    _, stats = build_index(before, tmp_path, embedder=first, progress=lambda done, total: progress.append((done, total)),
                           multilingual=None)
    assert (stats.embedded, first.docs) == (len(before), len(before))
    assert progress[-1] == (len(before), len(before)) and len(progress) == first.calls > 10  # one call per batch
    grown = Counting()
    index, stats = build_index(harvested, tmp_path, embedder=grown, multilingual=None)
    assert (grown.docs, stats.embedded, stats.cached, stats.reused) == (new, new, 0, len(before))
    assert index.meta.count == len(harvested)
    again = Counting()
    _, stats = build_index(harvested, tmp_path, embedder=again, multilingual=None)
    assert (again.docs, stats.embedded, stats.reused) == (0, 0, len(harvested))


def test_an_interrupted_build_resumes_from_the_cached_batches(tmp_path: Path, harvested: list[ToolSpec]) -> None:
    tools = harvested[:300]
    with pytest.raises(KeyboardInterrupt):
        build_index(tools, tmp_path, embedder=Counting(fail_after=3), batch=64)
    assert not (tmp_path / "meta.json").exists()  # no index was saved, but three batches are in the cache
    resumed = Counting()
    index, stats = build_index(tools, tmp_path, embedder=resumed, batch=64)
    assert (resumed.docs, stats.embedded, stats.cached, stats.reused) == (300 - 3 * 64, 300 - 3 * 64, 3 * 64, 0)
    fresh = build_index(tools, tmp_path / "fresh", embedder=HashEmbedder(32))[0]
    assert np.allclose(index.dense.vectors, fresh.dense.vectors)


def test_harvested_edges_stay_inside_their_server_and_skip_envelope_keys(harvested: list[ToolSpec]) -> None:
    graph = build_graph(harvested)
    assert graph.number_of_edges() > 200
    assert all(a.split("/")[0] == b.split("/")[0] for a, b in graph.edges())
    # every OneStop list returns PortalRecord.record_id: an envelope field, not a source of request ids
    portal = [(a, b) for a, b, d in graph.edges(data=True) if a.startswith("all-abt-ntu-mcp/") and d["via"] == "record_id"]
    assert portal == []
    # a tool that deletes records is no source of record ids
    assert not any(a == "airtable-mcp-server/delete_records" for a, _ in graph.edges())
    assert "airtable-mcp-server/list_records" in [p.tool_id for p in prerequisites(graph, "airtable-mcp-server/get_record")]


def test_search_with_prereqs_returns_a_harvested_tools_prerequisite(tmp_path: Path, harvested: list[ToolSpec],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from cworld.cli import main

    monkeypatch.setitem(main.COMMANDS, "search", "search")
    folder = tmp_path / "index"
    build_search_index(harvested, folder, embedder=HashEmbedder(64), declared=[])
    args = ["search", "get one airtable record by its id", "--index", str(folder), "--method", "bm25",
            "-k", "5", "--with-prereqs", "--json"]
    result = CliRunner().invoke(main.cli, args)
    assert result.exit_code == 0, result.output
    hits = {h["tool_id"]: h for h in json.loads(result.output)["hits"]}
    assert "airtable-mcp-server/get_record" in hits
    before = hits["airtable-mcp-server/get_record"]["prerequisites"]
    assert {"tool_id": "airtable-mcp-server/list_records", "via": "recordId"}.items() <= next(
        p for p in before if p["tool_id"] == "airtable-mcp-server/list_records").items()
