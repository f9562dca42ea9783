"""The LLM drafter sees what tools return and hears which keys a failed reference could have used.

The revision test's mock reads the revision prompt and takes the key it lists that is closest to its wrong
guess: what a real model does with the same prompt. With the one-line feedback of before (no keys), it has
nothing to pick from and the draft stays broken.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from cworld.data_model.references import REFERENCE
from cworld.environment import Environment, Workspace
from cworld.llm import mock
from cworld.seeding import derive_seed
from cworld.synth import SynthOptions, prepare, run_prepared
from cworld.synth.draft import Draft
from cworld.synth.llm_drafter import tool_card
from cworld.synth.offline import OfflineDrafter, Revision
from cworld.synth.pipeline import WORLD_SEEDS
from cworld.synth.samples import SampleAnswers
from cworld.synth.sampling import Candidates
from cworld.synth.scenario import write_scenario
from cworld.synth.shapes import schema_shape, value_shape

ENV = Environment.resolve()
OK = json.dumps({"passed": True, "issues": []})
_LISTED = re.compile(r"fails at '\.([^']+)' .*?there is (?:an object with keys|.*?each item has keys): ([^\n]+)")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")
    yield Workspace.resolve(tmp_path / "ws")
    mock.clear()


def _options() -> SynthOptions:
    return SynthOptions(n=1, seed=7, min_candidate_share=0.0, max_attempts=1, max_rounds=2)


def _good(prepared: Any, options: SynthOptions) -> Draft:
    """A draft that executes in attempt 0's world (the offline drafter's), with references between steps."""
    universe = prepared.synthesis.universe
    drafter = OfflineDrafter(universe, options, prepared.synthesis.leaks)
    world = derive_seed(options.seed, "synth:world:0") % WORLD_SEEDS
    candidates = Candidates(seeds=[], query="", tools=sorted(drafter.pool())[:8])
    draft, _ = drafter.draft(candidates, world, random.Random(1), Revision(everything=True), schema_only=False)
    scenario, _ = write_scenario(draft, universe, world)
    return draft.model_copy(update={"scenario": scenario})


def _with_a_guessed_key(good: Draft) -> tuple[Draft, str, str]:
    """The good draft with the last field of its first reference renamed: (draft, real key, guessed key)."""
    text = good.model_dump_json()
    for step in good.gold_plan:
        for match in REFERENCE.finditer(json.dumps(step.arguments)):
            last = re.search(r"\.([A-Za-z_][A-Za-z0-9_]*)$", match.group(2))
            if last:
                real = last.group(1)
                guess = "id" if real != "id" else "identifier"
                broken = match.group(0)[: -len(real) - 2] + guess + "}}"
                return Draft.model_validate_json(text.replace(match.group(0), broken, 1)), real, guess
    raise AssertionError("the offline draft has no reference to a field")


def _reviser(messages: list[Any], tools: Any) -> str:
    """A model that fixes the reference with a key the feedback lists (if it lists any): the one named like
    the argument it fills, else the one closest to its guess."""
    prompt = mock.text_of(mock.field_of(messages[-1], "content"))
    previous = mock.text_of(mock.field_of(messages[-2], "content"))
    found = _LISTED.search(prompt)
    if found is None:
        return previous  # nothing to go on: the same draft again
    guess, keys = found.group(1), [k.strip() for k in found.group(2).split(",")]
    argument = re.search(r'"([^"]+)":\s*"\{\{[^}]*\.' + re.escape(guess) + r'\}\}"', previous)
    wanted = argument.group(1) if argument else guess
    right = max(keys, key=lambda k: (k == wanted, difflib.SequenceMatcher(None, wanted, k).ratio()))
    return previous.replace(f".{guess}}}}}", f".{right}}}}}")


def test_a_guessed_key_is_fixed_in_one_revision(ws: Workspace) -> None:
    prepared = prepare(ENV, ws, _options(), model="mock/keyfix", out=ws.root / "tasks.jsonl")
    good = _good(prepared, _options())
    bad, real, guess = _with_a_guessed_key(good)
    script = mock.script("keyfix", [bad.model_dump_json(), OK, _reviser, OK])
    result, summary = asyncio.run(run_prepared(prepared))
    revise_prompt = script.calls[2].messages[-1]["content"]
    assert f"fails at '.{guess}'" in revise_prompt and real in revise_prompt.split("fails at", 1)[1]
    assert "sent" in revise_prompt or "could not be sent" in revise_prompt
    assert summary.accepted == 1, result.rejected[0].reason if result.rejected else ""
    (task,) = result.accepted
    assert task.metadata["rounds"] == 2 and task.verifiable


def test_a_failed_tool_call_is_fed_back_with_its_resolved_arguments(ws: Workspace) -> None:
    prepared = prepare(ENV, ws, _options(), model="mock/args", out=ws.root / "tasks.jsonl")
    good = _good(prepared, _options())
    step = next(s for s in good.gold_plan if any(REFERENCE.search(json.dumps(v)) for v in s.arguments.values()))
    key = next(k for k, v in step.arguments.items() if REFERENCE.search(json.dumps(v)))
    plan = [s if s.id != step.id else s.model_copy(update={"arguments": {**s.arguments, "no_such_arg": 1}})
            for s in good.gold_plan]
    bad = good.model_copy(update={"gold_plan": plan})
    script = mock.script("args", [bad.model_dump_json(), OK, good.model_copy(update={"query": good.query + " "})
                                  .model_dump_json(), OK])
    asyncio.run(run_prepared(prepared))
    revise_prompt = script.calls[2].messages[-1]["content"]
    sent = re.search(rf"step {step.id} sent \(references resolved\): (.*)", revise_prompt)
    assert sent is not None and "{{" not in sent.group(1) and f'"{key}"' in sent.group(1)
    assert "returned: {" in revise_prompt


def test_the_candidate_list_shows_what_each_tool_returns(ws: Workspace) -> None:
    prepared = prepare(ENV, ws, _options(), model="mock/cands", out=ws.root / "tasks.jsonl")
    mock.script("cands", [])
    drafter = prepared.synthesis.llm
    tools = sorted(t for t in prepared.synthesis.universe.tools if t.startswith("mail/"))[:3]
    text = drafter._fill(tools, 1)["candidates"]
    for tool in tools:
        spec = prepared.synthesis.universe.tools[tool]
        shape = schema_shape(spec.output_schema)
        assert shape and f"returns {shape}" in text
        first_key = next(iter(spec.output_schema["properties"]))
        assert f"{first_key}:" in shape


def test_a_tool_without_an_output_schema_is_shown_a_sample_answer(ws: Workspace) -> None:
    prepared = prepare(ENV, ws, _options(), model="mock/sample", out=ws.root / "tasks.jsonl")
    universe = prepared.synthesis.universe
    spec = universe.tools["mail/list_messages"].model_copy(update={"output_schema": None})
    samples = SampleAnswers(3, executable=universe.executable)
    answer = samples.answer(spec)
    assert isinstance(answer, dict) and answer
    shape = value_shape(answer)
    assert all(f"{k}:" in shape for k in list(answer)[:5])
    card = tool_card(spec, prepared.synthesis.llm._returns(spec))  # the run's own sampler
    assert "returns (a sample answer) {" in card and f"{next(iter(answer))}:" in card
