"""Task synthesis end to end against a real model: SmolLM2-135M served by llama.cpp (`cworld llm
serve-local`),
reached through litellm as `openai/smollm2`. Marked `local_llm` (run with CWORLD_LOCAL_LLM=1).

The model is tiny: it will rarely write a task that passes the checks. What this shows is the path:
draft prompt -> litellm -> OpenAI-compatible server -> JSON repair -> checks -> (revision) -> a summary,
with every rejection carrying its reason, and nothing crashing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from cworld.cli import llm_local
from cworld.environment import Environment, Workspace
from cworld.errors import MissingDependency
from cworld.synth import SynthOptions, prepare, run_prepared


@pytest.mark.local_llm
async def test_synthesis_runs_once_against_smollm2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        llm_local.ensure_installed(install=False)
    except MissingDependency as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")
    port = llm_local.free_port()
    process = llm_local.start(port, tmp_path / "server.log")
    try:
        await asyncio.to_thread(llm_local.wait_ready, port, process, 180.0)
        ws = Workspace.resolve(tmp_path / "ws")
        ws.root.mkdir(parents=True)
        synth = {
            "model": f"openai/{llm_local.MODEL_ALIAS}",
            "api_base": llm_local.api_base(port),
            "max_tokens": 200,
        }
        (ws.root / "config.yaml").write_text(yaml.safe_dump({"models": {"synth": synth}}))
        options = SynthOptions(n=1, seed=1, max_attempts=1, max_rounds=2, min_tools=3, max_tools=4)
        prepared = await asyncio.to_thread(
            prepare, Environment.resolve(), ws, options, out=tmp_path / "tasks.jsonl"
        )
        assert prepared.synthesis.source == "llm"
        result, summary = await run_prepared(prepared)
        assert summary.accepted + summary.rejected == 1 and result.attempts == 1
        for outcome in result.rejected:
            assert outcome.code and outcome.reason
            rounds = [p for p in outcome.provenance if p["stage"] == "round"]
            assert rounds and all("checks" in r or "error" in r for r in rounds)
        reasons = [o.reason[:160] for o in result.rejected]
        print(
            f"\nSmolLM2 synthesis: accepted {summary.accepted}, rejected {summary.rejected_by_reason} {reasons}"
        )
    finally:
        process.terminate()
        process.wait(timeout=30)
