"""The harvested query set (registry/eval/harvested_{dev,heldout}.jsonl): it parses, its gold tools exist,
it spans many servers, its halves are disjoint, and no query copies its gold tool's description or name."""

from __future__ import annotations

import json
from pathlib import Path

from cworld.data_model.tools import ToolSpec
from cworld.environment import Environment
from cworld.registry.harvest.catalog import harvested_specs
from cworld.registry.index.quality import QualityQuery, copied_text, load_queries

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT / "registry" / "eval"
SPLITS = ("harvested_dev.jsonl", "harvested_heldout.jsonl")


def _harvested() -> dict[str, ToolSpec]:
    from cworld.registry.manifest import load_catalog

    env = Environment(ROOT)
    return {t.id: t for spec in harvested_specs(env) for t in load_catalog(env, spec)}


def _others() -> dict[str, ToolSpec]:
    """The non-harvested tools a gold list may also name (another server's tool that does the same job)."""
    from cworld.sandbox.catalog import all_apps
    from cworld.sandbox.framework.specs import tool_specs

    real = [ToolSpec.model_validate(t) for t in json.loads((ROOT / "registry/recorded/real_tools.json").read_text())]
    return {t.id: t for t in [*(t for app in all_apps() for t in tool_specs(app)), *real]}


def _queries() -> dict[str, list[QualityQuery]]:
    return {name: load_queries(EVAL / name) for name in SPLITS}


def test_both_halves_parse_are_disjoint_and_large() -> None:
    dev, held = _queries().values()
    assert len(dev) + len(held) >= 150 and abs(len(dev) - len(held)) <= 1
    assert not {q.query for q in dev} & {q.query for q in held}
    for name in SPLITS:
        assert (EVAL / name).read_text(encoding="utf-8").startswith("# "), "the header says how the set was written"


def test_every_gold_tool_exists_and_each_query_has_a_harvested_one() -> None:
    harvested, others = _harvested(), _others()
    queries = [q for qs in _queries().values() for q in qs]
    missing = sorted({t for q in queries for t in q.tools if t not in harvested and t not in others})
    assert not missing, f"gold tools that do not exist: {missing[:10]}"
    assert all(any(t in harvested for t in q.tools) for q in queries)
    servers = {t.split("/")[0] for q in queries for t in q.tools if t in harvested}
    assert len(servers) >= 60


def test_no_query_copies_its_gold_tools_text() -> None:
    by_id = {**_others(), **_harvested()}
    copied = [(q.query, why) for qs in _queries().values() for q in qs for t in q.tools
              if (why := copied_text(q.query, by_id[t]))]
    assert not copied, copied[:5]


def test_copied_text_catches_a_description_run_and_a_name() -> None:
    tool = ToolSpec(server="s", name="get_flight_status", description="Get the status of a flight by its number.")
    assert copied_text("what is the status of a flight BA1", tool)
    assert copied_text("show me the flight status for BA1", tool)
    assert copied_text("is BA1 delayed?", tool) is None
    one_word = ToolSpec(server="s", name="get_logs", description="Fetch recent log lines.")
    assert copied_text("show the logs from yesterday", one_word) is None
