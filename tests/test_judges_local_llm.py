"""The judges end to end against a real model: SmolLM2-135M served by llama.cpp (`cworld llm serve-local`),
reached through litellm as `openai/smollm2`. Marked `local_llm` (run with CWORLD_LOCAL_LLM=1).

The model is tiny: its grades mean little and it may not produce valid JSON. What this shows is the
path: rubric prompt -> litellm -> OpenAI-compatible server -> JSON repair -> vote, or "unscored" (never
0), with tokens accounted per judge, the answers cached, and scores.jsonl written by `judge_run`.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
from judges_helpers import sample_episode, sample_task, write_run

from cworld.cli import llm_local
from cworld.config import ModelConfig, ModelsConfig
from cworld.errors import MissingDependency
from cworld.judges import JudgeContent, JudgeSetup, judge_run, load_scores
from cworld.llm import Gateway


@pytest.mark.local_llm
async def test_judges_run_once_against_smollm2(tmp_path: Path) -> None:
    try:
        llm_local.ensure_installed(install=False)
    except MissingDependency as exc:
        pytest.skip(str(exc))
    port = llm_local.free_port()
    process = llm_local.start(port, tmp_path / "server.log")
    try:
        await asyncio.to_thread(llm_local.wait_ready, port, process, 180.0)
        judge = ModelConfig(model=f"openai/{llm_local.MODEL_ALIAS}", api_base=llm_local.api_base(port),
                            max_tokens=160, api_key_env=None)
        content = JudgeContent.from_environment()
        content = replace(content, rubrics={k: content.rubrics[k] for k in ("completeness", "grounding")})
        run = write_run(tmp_path / "run", [sample_episode(sample_task(1), "careful", 0, skilled=True)])

        async def judge_once() -> JudgeSetup:
            gateway = Gateway(ModelsConfig(judge=[judge]), cache_path=tmp_path / "llm.sqlite", timeout_s=240.0)
            setup = JudgeSetup(content, tools={}, gateway=gateway, judges=[judge], max_repairs=1)
            await judge_run(run, setup, resume=False)
            gateway.close()
            return setup

        await judge_once()
        (score,) = load_scores(run).values()
        usage = score.judge_usage[judge.model]
        assert usage.calls >= 2 and usage.prompt_tokens > 200        # the rubric prompts really went to the model
        assert set(score.dimensions) == {"completeness", "grounding"}
        for dim in score.dimensions.values():
            (vote,) = dim.votes
            if vote.score is None:
                assert vote.passed is None and vote.rationale.startswith("unscored") and dim.unscored
            else:
                assert 0 <= vote.score <= 10 and dim.score == vote.score and dim.passed is vote.passed
        await judge_once()                                               # same requests: served from the cache
        (again,) = load_scores(run).values()
        assert again.judge_usage[judge.model].calls == 0 and again.judge_usage[judge.model].cache_hits >= 2
        assert {d: v.score for d, v in again.dimensions.items()} == {d: v.score for d, v in score.dimensions.items()}
    finally:
        process.terminate()
        process.wait(timeout=30)
