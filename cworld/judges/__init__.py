"""The reward signal: verifiable metrics from the logs, an ensemble of LLM judges, and their aggregation.

    setup = JudgeSetup(JudgeContent.from_environment(env), tools, gateway=gw, judges=gw.models.judge)
    report = await judge_run(run_dir, setup)          # writes <run>/scores.jsonl
    score = await score_trajectory(trajectory, setup)  # one episode

Definitions of every metric, the personas and the weights are in docs/reward.md.
"""

from cworld.judges.calls import CALL_CLASSES, CallRecord, classify_calls, schema_errors
from cworld.judges.checkers import CHECKERS, CheckContext, checker, verify
from cworld.judges.content import JudgeContent, Rubric, Weights
from cworld.judges.ensemble import JudgeAnswer, aggregate, judge_episode
from cworld.judges.overall import BASIS_ALL, BASIS_VERIFIABLE, overall
from cworld.judges.personas import PERSONAS
from cworld.judges.runs import SCORES_FILE, load_scores, resolve_run
from cworld.judges.score_run import JudgeRunReport, judge_run
from cworld.judges.scoring import JudgeSetup, score_trajectory
from cworld.judges.verifiable import VerifiableResult, verifiable_scores

__all__ = [
    "BASIS_ALL",
    "BASIS_VERIFIABLE",
    "CALL_CLASSES",
    "CHECKERS",
    "PERSONAS",
    "SCORES_FILE",
    "CallRecord",
    "CheckContext",
    "JudgeAnswer",
    "JudgeContent",
    "JudgeRunReport",
    "JudgeSetup",
    "Rubric",
    "VerifiableResult",
    "Weights",
    "aggregate",
    "checker",
    "classify_calls",
    "judge_episode",
    "judge_run",
    "load_scores",
    "overall",
    "resolve_run",
    "schema_errors",
    "score_trajectory",
    "verifiable_scores",
    "verify",
]
