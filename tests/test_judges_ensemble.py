"""The LLM-judge ensemble through the real gateway and the mock provider: majority vote, median, split,
unparseable answers (retried, then unscored, never 0), and what the judges are shown."""

from __future__ import annotations

import json
import re

import pytest
from judges_helpers import TrajectoryBuilder

from cworld.config import ModelConfig, ModelsConfig
from cworld.data_model import Constraint, Task
from cworld.judges import BASIS_VERIFIABLE, JudgeContent, JudgeSetup, score_trajectory
from cworld.judges.ensemble import aggregate
from cworld.llm import Gateway, RetryPolicy, mock
from cworld.redact import MASK, Redactor

CONTENT = JudgeContent.from_environment()
TASK = Task(id="t-mail", query="Forward the audit email to Deborah.", tools=["mail/forward_message"],
            constraints=[Constraint(id="c-budget", type="efficiency", description="At most 5 tool calls.",
                                    verification={"kind": "max_calls", "value": 5})])
LATE = Constraint(id="c-late", type="format", description="End with a line starting 'SUMMARY:'.",
                  verification={"kind": "final_answer_contains", "value": "SUMMARY:"})


@pytest.fixture(autouse=True)
def _clean_scripts():
    yield
    mock.clear()


def dimension_of(messages) -> str:
    title = re.search(r"# Dimension: (.+)", messages[-1]["content"] if len(messages) == 2 else messages[1]["content"])
    assert title, "the judge prompt names its dimension"
    return {r.title: r.dimension for r in CONTENT.rubrics.values()}[title.group(1).strip()]


def judge(name: str, scores: dict[str, float], passed: dict[str, bool] | None = None):
    """A mock judge that grades each dimension with a fixed score."""

    def respond(messages, tools):
        dim = dimension_of(messages)
        verdict = (passed or {}).get(dim, scores[dim] >= 6)
        return json.dumps({"score": scores[dim], "passed": verdict, "rationale": f"{name} on {dim}"})

    return mock.script(name, respond)


def episode(secret: str = ""):
    return (TrajectoryBuilder(TASK, agent="agent-a")
            .call("mail/forward_message", {"message_id": "m1", "to": ["p1"], "note": secret}, result={"ok": True})
            .user("Also end with a line starting 'SUMMARY:'.", LATE)
            .final("Forwarded it.\nSUMMARY: done")
            .build())


def setup(*names: str, redactor: Redactor | None = None) -> JudgeSetup:
    judges = [ModelConfig(model=f"mock/{n}") for n in names]
    gateway = Gateway(ModelsConfig(judge=judges), retry=RetryPolicy.immediate())
    return JudgeSetup(CONTENT, tools={}, gateway=gateway, judges=judges, redactor=redactor or Redactor())


async def test_three_disagreeing_judges_majority_vote_and_median():
    dims = ("completeness", "grounding", "format", "tradeoff")
    judge("j1", dict.fromkeys(dims, 8.0))
    judge("j2", dict.fromkeys(dims, 3.0))
    judge("j3", {**dict.fromkeys(dims, 7.0), "grounding": 2.0})
    score = await score_trajectory(episode(), setup("j1", "j2", "j3"))
    assert set(score.dimensions) == set(dims)          # no plan logged: the planning dimensions do not apply
    comp = score.dimensions["completeness"]
    assert (comp.score, comp.passed, comp.split) == (7.0, True, True)
    grounding = score.dimensions["grounding"]
    assert (grounding.score, grounding.passed, grounding.split) == (3.0, False, True)
    assert [v.judge for v in comp.votes] == ["mock/j1", "mock/j2", "mock/j3"]
    assert score.overall_basis == "verifiable+judges" and score.overall is not None
    assert score.judges == ["mock/j1", "mock/j2", "mock/j3"]
    assert {m: u.calls for m, u in score.judge_usage.items()} == dict.fromkeys(score.judges, 4)
    assert all(u.prompt_tokens > 0 for u in score.judge_usage.values())


async def test_a_judge_passing_against_its_score_votes_its_score_and_is_flagged():
    dims = ("completeness", "grounding", "format", "tradeoff")
    judge("j1", dict.fromkeys(dims, 5.0), passed=dict.fromkeys(dims, True))
    judge("j2", dict.fromkeys(dims, 5.0), passed=dict.fromkeys(dims, True))
    judge("j3", dict.fromkeys(dims, 9.0), passed=dict.fromkeys(dims, False))
    score = await score_trajectory(episode(), setup("j1", "j2", "j3"))
    fmt = score.dimensions["format"]
    assert fmt.passed is False and fmt.score == 5.0            # two 5s under a threshold of 6: failed
    assert [(v.passed, v.claimed_passed) for v in fmt.votes] == [(False, True), (False, True), (True, False)]
    assert "mock/j1 said passed=true with 5" in fmt.note and "passed taken from the score" in fmt.note


async def test_unparseable_answer_is_retried_then_unscored_never_zero():
    dims = ("completeness", "grounding", "format", "tradeoff")
    judge("j1", dict.fromkeys(dims, 9.0))
    babble = mock.script("j2", lambda messages, tools: "I think it went fine, maybe a 7?")
    score = await score_trajectory(episode(), setup("j1", "j2"))
    assert len(babble.calls) == 8                        # 4 dimensions x (1 ask + 1 repair)
    repairs = [c for c in babble.calls if "could not be used" in c.messages[-1]["content"]]
    assert len(repairs) == 4
    comp = score.dimensions["completeness"]
    bad = next(v for v in comp.votes if v.judge == "mock/j2")
    assert bad.score is None and bad.passed is None and bad.rationale.startswith("unscored")
    assert (comp.score, comp.passed, comp.split) == (9.0, True, False)   # the usable vote decides; no 0 mixed in
    assert "1 of 2 judge(s) unscored" in comp.note


async def test_all_judges_unparseable_leaves_the_dimension_unscored_and_the_overall_verifiable():
    mock.script("j1", lambda messages, tools: "no json here")
    score = await score_trajectory(episode(), setup("j1"))
    assert all(d.unscored for d in score.dimensions.values())
    assert all(d.score is None and d.passed is None for d in score.dimensions.values())
    assert score.overall_basis == BASIS_VERIFIABLE and score.overall is not None


async def test_out_of_range_score_is_repaired():
    answers = iter([json.dumps({"score": 42, "passed": True}), json.dumps({"score": 4.5, "passed": False})])
    mock.script("j1", lambda messages, tools: next(answers) if dimension_of(messages) == "completeness"
                else json.dumps({"score": 6, "passed": True}))
    score = await score_trajectory(episode(), setup("j1"))
    assert score.dimensions["completeness"].score == 4.5


async def test_a_mid_episode_constraint_and_the_trajectory_reach_the_judge():
    dims = ("completeness", "grounding", "format", "tradeoff")
    script = judge("j1", dict.fromkeys(dims, 8.0))
    await score_trajectory(episode(), setup("j1"))
    prompts = {dimension_of(c.messages): c.messages[-1]["content"] for c in script.calls}
    completeness = prompts["completeness"]
    assert "[c-late] (format) End with a line starting 'SUMMARY:'." in completeness
    assert "added at turn 2 by the user during the episode" in completeness
    assert "[c-budget]" in completeness and "Forward the audit email to Deborah." in completeness
    assert '<call step="0" turn="1" tool="mail/forward_message">' in completeness
    assert '<user_message step="1" turn="2">' in completeness
    assert "SUMMARY: done" in completeness
    assert "<call " not in prompts["format"]          # format sees the answer, not the steps


async def test_secrets_never_reach_the_judges():
    dims = ("completeness", "grounding", "format", "tradeoff")
    script = judge("j1", dict.fromkeys(dims, 8.0))
    secret = "hunter2-very-secret-value"
    await score_trajectory(episode(f"use Bearer abc.def.ghi and {secret}"),
                           setup("j1", redactor=Redactor.from_env({"MAIL_API_KEY": secret})))
    sent = json.dumps([c.messages for c in script.calls])
    assert secret not in sent and "abc.def.ghi" not in sent and MASK in sent


async def test_planning_dimensions_apply_when_the_agent_logged_a_plan():
    t = (TrajectoryBuilder(TASK)
         .plan([{"id": "g1", "description": "forward", "depends_on": []}])
         .call("mail/forward_message", {"message_id": "m1", "to": ["p1"]})
         .progress({"g1": "complete"})
         .final("done").build())
    seen = []
    mock.script("j1", lambda messages, tools: seen.append(dimension_of(messages)) or '{"score": 7, "passed": true}')
    score = await score_trajectory(t, setup("j1"))
    assert {"goal_decomposition", "progress_tracking"} <= set(score.dimensions) and len(seen) == len(score.dimensions)


def test_aggregate_tie_is_settled_by_the_median():
    from cworld.data_model import JudgeVote

    rubric = CONTENT.rubrics["completeness"]
    votes = [JudgeVote(judge="a", score=9, passed=True), JudgeVote(judge="b", score=4, passed=False)]
    result = aggregate(rubric, votes)
    assert (result.score, result.passed, result.split) == (6.5, True, True) and "tie" in result.note


def test_a_replan_note_without_sub_goals_is_no_plan_to_grade():
    from cworld.judges.condense import applies, plan_text

    t = (TrajectoryBuilder(TASK).call("mail/forward_message", {"message_id": "m1", "to": ["p1"]}).final("ok").build())
    t.planner_events.append({"turn": 2, "event": "replan", "constraint": "c-late"})
    assert not applies(CONTENT.rubrics["goal_decomposition"], t)
    assert "turn 2 replan" in plan_text(t) and '"constraint": "c-late"' in plan_text(t)
