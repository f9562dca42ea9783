"""`benchmarks/world_fidelity.py`'s core, small: one app, one seed, 20 explorer calls, the schema engine."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import world_fidelity as wf  # noqa: E402

from cworld.data_model import ToolResult  # noqa: E402
from cworld.sandbox.catalog import app_by_name  # noqa: E402


def test_schema_engine_figures_on_one_app() -> None:
    [episode] = wf.record([0], [app_by_name("docs")], calls=20, repeats=1)
    assert {call.result.is_error for call in episode.calls} == {True, False}  # the explorer errs and succeeds
    assert episode.end != episode.initial  # and some of its writes land
    result = asyncio.run(wf.measure(wf.SchemaSubject(wf.Env.resolve()), [episode], repeats=1, scale=None))
    figures = result.apps["ALL"].figures()
    assert figures["calls"] == 20 and figures["episodes"] == 1
    for key in ("live_error_share", "verdict", "error_class", "agreement", "r_c"):
        assert figures[key] is not None and 0.0 <= figures[key] <= 1.0, key
    assert figures["unwanted"] >= 0.0  # a share of live's changed leaves: it may exceed 1
    assert figures["live_calls_per_s"] > 0 and figures["engine_calls_per_s"] > 0
    assert wf.explore_live(0, app_by_name("docs"), 20).calls[-1].arguments == episode.calls[-1].arguments


def test_translation_pairs_new_ids_and_end_states_compare_leaves() -> None:
    values = wf.Translation(known={"doc_0001"})
    live = ToolResult.ok({"document_id": "doc_0009", "folder_id": "doc_0001", "token": "tok_7f3a91"})
    engine = ToolResult.ok({"document_id": "doc_0002", "folder_id": "doc_0001", "token": "tok_0001"})
    values.learn(live, engine, wanted={"tok_7f3a91"})
    assert values.ids == {"tok_7f3a91": "tok_0001"}  # passed again later: translated in arguments
    assert values.created == {"doc_0009": "doc_0002", "tok_7f3a91": "tok_0001"}
    initial = {"documents": {"doc_0001": {"title": "a", "saved_at": "t0"}}}
    end = {"documents": {"doc_0001": {"title": "b", "saved_at": "t1"}, "doc_0009": {"title": "c"}}}
    changed = wf.changed_leaves(initial, wf.translated(end, values.created), None)
    assert changed == {"documents/doc_0001/title": '"b"', "documents/doc_0002/title": '"c"'}  # saved_at is volatile
