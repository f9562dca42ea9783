"""The LLM synthesizer on the production path with the mock provider: revise from feedback, JSON repair, a
model that never converges, the critic, fuzzy rewriting, concurrency, and model checks before any work."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from cworld.environment import Environment, Workspace
from cworld.errors import ConfigError, ModelError
from cworld.llm import mock
from cworld.seeding import derive_seed
from cworld.synth import SynthOptions, prepare, run_prepared
from cworld.synth.draft import Draft
from cworld.synth.offline import OfflineDrafter, Revision
from cworld.synth.pipeline import WORLD_SEEDS
from cworld.synth.sampling import Candidates
from cworld.synth.scenario import write_scenario

ENV = Environment.resolve()
OK = json.dumps({"passed": True, "issues": []})


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """A fresh workspace per test: the gateway's response cache must not carry answers across tests."""
    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")
    yield Workspace.resolve(tmp_path / "ws")
    mock.clear()


def _options(**extra) -> SynthOptions:
    return SynthOptions(
        **{"n": 1, "seed": 7, "min_candidate_share": 0.0, "max_attempts": 1, "max_rounds": 2, **extra}
    )


def _prepare(ws: Workspace, script: str, options: SynthOptions | None = None):
    return prepare(ENV, ws, options or _options(), model=f"mock/{script}", out=ws.root / "tasks.jsonl")


def _good(prepared, options: SynthOptions) -> Draft:
    """A draft that executes in attempt 0's world: what a capable model would return."""
    universe = prepared.synthesis.universe
    drafter = OfflineDrafter(universe, options, prepared.synthesis.leaks)
    world = derive_seed(options.seed, "synth:world:0") % WORLD_SEEDS
    candidates = Candidates(seeds=[], query="", tools=sorted(drafter.pool())[:8])
    draft, _ = drafter.draft(
        candidates, world, random.Random(1), Revision(everything=True), schema_only=False
    )
    scenario, _ = write_scenario(draft, universe, world)
    return draft.model_copy(update={"scenario": scenario})


def _unneeded(draft: Draft, universe) -> Draft:
    extra = [t for t in sorted(universe.tools) if t not in draft.tools and universe.executable(t)][
        : len(draft.tools)
    ]
    return draft.model_copy(
        update={
            "tools": [*draft.tools, *extra],
            "rationales": {**draft.rationales, **{t: f"needed: {draft.query[:40]}" for t in extra}},
        }
    )


def _rounds(task) -> list[dict]:
    return [p for p in task.provenance if p["stage"] == "round"]


def test_a_draft_that_fails_coverage_is_revised_and_passes(ws: Workspace) -> None:
    prepared = _prepare(ws, "revise")
    good = _good(prepared, _options())
    bad = _unneeded(good, prepared.synthesis.universe)
    script = mock.script("revise", [bad.model_dump_json(), good.model_dump_json(), OK])
    result, summary = asyncio.run(run_prepared(prepared))
    assert summary.accepted == 1 and summary.source == "llm"
    task = result.accepted[0]
    first, second = _rounds(task)
    assert "unneeded_tools" in {i["code"] for i in first["checks"]["issues"]} and second["checks"]["passed"]
    assert first["draft"]["tools"] == bad.tools and task.tools == good.tools
    revise_prompt = script.calls[1].messages[-1]["content"]
    assert "did not pass review" in revise_prompt and first["feedback"].splitlines()[0] in revise_prompt
    assert task.verifiable and task.ground_truth is not None and task.metadata["drafter"] == "llm:mock/revise"
    assert len(script.calls) == 3


def test_malformed_json_is_repaired(ws: Workspace) -> None:
    prepared = _prepare(ws, "repair")
    good = _good(prepared, _options())
    script = mock.script("repair", ['Here you go: {"query": "oops", ', good.model_dump_json(), OK])
    result, summary = asyncio.run(run_prepared(prepared))
    assert summary.accepted == 1 and result.accepted[0].metadata["rounds"] == 1
    assert "could not be used" in script.calls[1].messages[-1]["content"]


def test_a_model_that_never_converges_is_dropped_with_its_reason(ws: Workspace) -> None:
    prepared = _prepare(ws, "stubborn")
    bad = _unneeded(_good(prepared, _options()), prepared.synthesis.universe)
    script = mock.script("stubborn", lambda messages, tools: bad.model_dump_json())
    result, summary = asyncio.run(run_prepared(prepared))
    assert summary.accepted == 0 and summary.rejected_by_reason == {"coverage:unneeded_tools": 1}
    (outcome,) = result.rejected
    assert outcome.rounds == 2 and "appear in no plan step" in outcome.reason
    assert len(script.calls) == 2 and not (ws.root / "tasks.jsonl").exists()


def test_the_critic_can_send_a_draft_back(ws: Workspace) -> None:
    prepared = _prepare(ws, "critic")
    good = _good(prepared, _options())
    no = json.dumps({"passed": False, "issues": ["the budget should bind harder"]})
    again = good.model_copy(
        update={"query": "Thanks in advance! " + good.query}
    )  # a new request, not a cache hit
    mock.script("critic", [good.model_dump_json(), no, again.model_dump_json(), OK])
    result, _ = asyncio.run(run_prepared(prepared))
    (task,) = result.accepted
    first, second = _rounds(task)
    assert [i["code"] for i in first["checks"]["issues"]] == ["critic"] and "bind harder" in first["feedback"]
    assert second["checks"]["passed"]


def test_a_query_that_names_tools_is_rewritten(ws: Workspace) -> None:
    prepared = _prepare(ws, "rewrite")
    good = _good(prepared, _options())
    leaky = good.model_copy(
        update={"query": good.query + " Use travel/book_flight and post_message for this."}
    )
    script = mock.script("rewrite", [leaky.model_dump_json(), json.dumps({"query": good.query}), OK])
    result, _ = asyncio.run(run_prepared(prepared))
    (task,) = result.accepted
    rewrite = _rounds(task)[0]["rewrite"]
    assert "tool id 'travel/book_flight'" in rewrite["leaks"] and rewrite["after"] == good.query == task.query
    assert "Identifiers that must disappear" in script.calls[1].messages[-1]["content"]


def test_model_calls_overlap_with_concurrency(ws: Workspace) -> None:
    options = _options(n=2, max_attempts=2, max_rounds=1, concurrency=2)
    prepared = _prepare(ws, "slow", options)
    bad = _unneeded(_good(prepared, options), prepared.synthesis.universe)
    script = mock.script("slow", lambda messages, tools: bad.model_dump_json(), delay_s=0.3)
    result, _ = asyncio.run(run_prepared(prepared))
    assert len(result.rejected) == 2 and script.max_in_flight == 2


def test_wrong_or_unreachable_model_fails_before_any_work(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_work(*args, **kwargs):
        raise AssertionError("work started before the model was checked")

    monkeypatch.setattr("cworld.synth.api.load_universe", no_work)
    with pytest.raises(ConfigError) as bad_name:
        prepare(ENV, ws, _options(), model="nosuchprovider/some-model", out=ws.root / "a.jsonl")
    assert "\n" not in str(bad_name.value) and "nosuchprovider" in str(bad_name.value)
    monkeypatch.setenv("CWORLD_API_BASE", "http://127.0.0.1:9/v1")
    with pytest.raises(ModelError) as down:
        prepare(ENV, ws, _options(), model="openai/nothing-listens-here", out=ws.root / "b.jsonl")
    assert "\n" not in str(down.value)
    assert not (ws.root / "a.jsonl").exists() and not (ws.root / "b.jsonl").exists()


def test_the_model_is_asked_for_a_scenario_and_a_malformed_one_is_revised(ws: Workspace) -> None:
    prepared = _prepare(ws, "scenario")
    good = _good(prepared, _options())
    assert good.scenario.entities
    malformed = json.loads(good.model_dump_json())
    malformed["scenario"] = {"entities": [{"app": "finance"}], "relations": "none"}
    script = mock.script("scenario", [json.dumps(malformed), good.model_dump_json(), OK])
    result, summary = asyncio.run(run_prepared(prepared))
    assert summary.accepted == 1
    (task,) = result.accepted
    first = next(p for p in task.provenance if p["stage"] == "round")
    assert [i["code"] for i in first["checks"]["issues"]] == ["malformed"]
    assert "`scenario`" in script.calls[0].messages[-1]["content"]
    assert task.scenario == good.scenario and task.scenario.entities
