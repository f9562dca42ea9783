"""What the judges are shown of a long episode: a budget sized to the judge model's context, the
observations that hold the final answer's facts kept whole, the rest cut to fit (through the real
gateway and the mock provider)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from judges_helpers import TrajectoryBuilder, write_run

from cworld.cli.judge import command as judge_command
from cworld.config import ModelConfig, ModelsConfig
from cworld.data_model import Task, Trajectory
from cworld.judges import JudgeContent, JudgeSetup, load_scores, score_trajectory
from cworld.judges import tags as evidence_tags
from cworld.judges.allot import water_level
from cworld.judges.budget import DEFAULT_CHARS, MAX_CHARS, evidence_budget
from cworld.judges.condense import evidence
from cworld.judges.facts import answer_facts, holders
from cworld.llm import Gateway, RetryPolicy, mock
from cworld.redact import Redactor
from cworld.seeding import derive_rng

CONTENT = JudgeContent.from_environment()
TASK = Task(id="t-inv", query="Find the overdue invoice of Harbor Logistics and tell me its total.",
            tools=["billing/search_invoices"])
CUSTOMERS = ["Alder Foods", "Birch Media", "Cobalt Air", "Dune Textiles", "Ember Labs", "Fjord Shipping"]
ANSWER = 'Invoice INV-88213 of Harbor Logistics totals 4,512.07 USD and is "overdue since March".'


@pytest.fixture(autouse=True)
def _clean_scripts():
    yield
    mock.clear()


def page(n: int, size: int, fact: bool = False) -> dict:
    """One page of invoices (about `size` characters); with `fact`, the answer's invoice in the middle."""
    rng = derive_rng(n, "test-judge-evidence")
    rows = [{"id": f"INV-{10000 + n * 100 + i}", "customer": rng.choice(CUSTOMERS),
             "total": round(rng.uniform(10, 9000), 2), "status": rng.choice(["paid", "open"]),
             "memo": "quarterly services and support, net 30"} for i in range(max(1, size // 125))]
    if fact:
        rows.insert(len(rows) // 2, {"id": "INV-88213", "customer": "Harbor Logistics", "total": 4512.07,
                                     "status": "overdue since March", "memo": "freight"})
    return {"page": n, "invoices": rows}


def long_episode(steps: int = 40, size: int = 1500, fact_size: int | None = None) -> Trajectory:
    builder = TrajectoryBuilder(TASK)
    for n in range(1, steps + 1):
        last = n == steps
        builder.call("billing/search_invoices", {"page": n}, result=page(n, fact_size if last and fact_size else size,
                                                                           fact=last))
    return builder.final(ANSWER).build()


def shown(text: str) -> str:
    """An observation as the judge sees it whole: whitespace collapsed, escaped."""
    return evidence_tags.data(" ".join(text.split()))


def grounding_judge(name: str) -> mock.Script:
    return mock.script(name, lambda messages, tools: json.dumps({"score": 8, "passed": True, "rationale": "ok"}))


def setup(*names: str, evidence_chars: int | None = None) -> JudgeSetup:
    judges = [ModelConfig(model=f"mock/{n}") for n in names]
    gateway = Gateway(ModelsConfig(judge=judges), retry=RetryPolicy.immediate())
    return JudgeSetup(CONTENT, tools={}, gateway=gateway, judges=judges, redactor=Redactor(),
                      evidence_chars=evidence_chars)


def grounding_prompt(script: mock.Script) -> str:
    return next(c.messages[-1]["content"] for c in script.calls if "# Dimension: Grounding" in c.messages[-1]["content"])


async def test_a_fact_from_the_40th_of_40_observations_reaches_the_judge_whole():
    trajectory = long_episode()
    fortieth = trajectory.steps[39].observation.text
    assert len(fortieth) > 1200 and sum(len(s.observation.text) for s in trajectory.steps[:40]) > 3 * DEFAULT_CHARS
    script = grounding_judge("j1")
    score = await score_trajectory(trajectory, setup("j1"))
    prompt = grounding_prompt(script)
    assert shown(fortieth) in prompt
    assert re.search(r'<observation step="39" [^>]*shown="whole">', prompt)
    assert score.details["judge_evidence"]["mock/j1"]["observations_whole_for_facts"] == [39]
    assert 'shown="excerpt"' in prompt                  # the other 39 pages were cut to fit the default budget


async def test_the_evidence_stays_near_its_budget_however_long_the_episode():
    for steps, size in ((60, 3000), (12, 20_000)):
        pieces = evidence(long_episode(steps, size), Redactor(), DEFAULT_CHARS).pieces
        assert sum(len(p) for p in pieces.values()) <= DEFAULT_CHARS * 1.1, (steps, size)
        assert pieces["trajectory"].count("<observation ") == steps          # every step stays, in order


async def test_a_huge_fact_observation_is_excerpted_around_the_facts():
    trajectory = long_episode(40, 1500, fact_size=200_000)
    shown_evidence = evidence(trajectory, Redactor(), DEFAULT_CHARS)
    steps = shown_evidence.pieces["trajectory"]
    fortieth = re.search(r'<observation step="39" [^>]*>(.*?)</observation>', steps)
    assert fortieth is not None and 'shown="excerpt"' in fortieth.group(0)
    assert '"id": "INV-88213", "customer": "Harbor Logistics", "total": 4512.07' in fortieth.group(1)
    assert sum(len(p) for p in shown_evidence.pieces.values()) <= DEFAULT_CHARS * 1.1


def test_the_budget_follows_the_judge_models_context():
    assert evidence_budget(ModelConfig(model="gpt-4o")) == MAX_CHARS >= 60_000      # 128k tokens: capped
    small = evidence_budget(ModelConfig(model="gpt-4"))                             # 8k tokens
    assert 5_000 < small < DEFAULT_CHARS
    assert evidence_budget(ModelConfig(model="mock/anything")) == DEFAULT_CHARS      # unknown context
    assert evidence_budget(ModelConfig(model="gpt-4o"), override=30_000) == 30_000


async def test_a_frontier_sized_budget_shows_every_observation_whole():
    trajectory = long_episode()
    script = grounding_judge("j1")
    score = await score_trajectory(trajectory, setup("j1", evidence_chars=evidence_budget(ModelConfig(model="gpt-4o"))))
    prompt = grounding_prompt(script)
    assert all(shown(s.observation.text) in prompt for s in trajectory.steps[:40])
    assert len(prompt) > 50_000 and 'shown="excerpt"' not in prompt
    assert score.details["judge_evidence"]["mock/j1"]["budget_chars"] == MAX_CHARS


def test_the_answers_facts_and_the_observations_that_hold_them():
    facts = {f.text: f.kind for f in answer_facts(ANSWER + " Sent to Deborah Lee (deborah@acme.io).")}
    assert {"INV-88213": "token", "4,512.07": "token", "4512.07": "token", "Harbor Logistics": "name",
            "overdue since March": "quoted", "Deborah Lee": "name", "deborah@acme.io": "token"}.items() <= facts.items()
    assert "Invoice" not in facts                          # a capital that only starts the sentence
    observations = ['{"total": 4512.07}', '{"year": 2024, "id": "INV-1"}', '{"year": 2024}', '{"year": 2024}',
                    '{"year": 2024}', '{"year": 2024}']
    held = holders(answer_facts("Total 4,512.07 in 2024."), observations)
    assert {i: [f.text for f in fs] for i, fs in held.items()} == {0: ["4512.07"]}   # 2024 is everywhere: no fact


def test_water_level_keeps_short_texts_whole_and_shares_the_rest():
    assert water_level([10, 20, 1000, 1000], 530) == 250
    assert water_level([10, 20], 1000) >= 20
    assert water_level([5, 5], 3) == 1


def test_cli_evidence_chars_sets_every_judges_budget_and_refuses_a_tiny_one(tmp_path):
    run = write_run(tmp_path / "ws" / "runs" / "r1", [long_episode(8, 500)])
    obj = {"env_dir": None, "workspace": str(tmp_path / "ws")}
    grounding_judge("cj")
    result = CliRunner().invoke(judge_command, [str(run), "--judges", "mock/cj", "--evidence-chars", "30000"], obj=obj)
    assert result.exit_code == 0, result.output
    (score,) = load_scores(run).values()
    assert score.details["judge_evidence"]["mock/cj"]["budget_chars"] == 30_000
    bad = CliRunner().invoke(judge_command, [str(run), "--judges", "mock/cj"], obj=obj,
                             env={"CWORLD_JUDGE_EVIDENCE_CHARS": "50"})
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert "--evidence-chars" in bad.output and "50 is not in the range" in bad.output
