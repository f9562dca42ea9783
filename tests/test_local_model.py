"""The real-model path, run by default (`make test`): SmolLM2-135M through llama.cpp (`cworld llm
serve-local`), reached through litellm as `openai/smollm2`, for each role once, small and bounded.

An agent episode of a few turns, one World Engine answer, one judge vote and one synthesis draft, then
a server killed mid-run: the episode is an infrastructure failure naming the dead server and the run
exits non-zero with one line. The model is tiny; what is shown is that every path works with a real
model (nothing here can pass on the mock provider). `make test` installs the server (`cworld llm
install-local`); if it is missing these tests fail with that one line. `CWORLD_LOCAL_LLM=0` skips them.
The 20-completion soak with tools is opt-in (`local_llm`, CWORLD_LOCAL_LLM=1).
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import yaml
from judges_helpers import sample_episode, sample_task, write_run
from rollout_helpers import scratch_context

from cworld.agents import LLMAgent
from cworld.cli import llm_install, llm_local
from cworld.config import ModelConfig, ModelsConfig
from cworld.data_model import Task, read_jsonl
from cworld.engine.cards.card import load_cards
from cworld.engine.llm.engine import LLMEngine
from cworld.engine.llm.settings import LLMEngineSettings
from cworld.engine.protocol import SessionLog
from cworld.environment import Environment, Workspace
from cworld.judges import JudgeContent, JudgeSetup, judge_run, load_scores
from cworld.llm import Gateway, local_server
from cworld.rollout import build_episode, read_trajectories, run_episode
from cworld.sandbox.catalog import app_by_name
from cworld.sandbox.framework.server import tool_specs
from cworld.synth import SynthOptions, prepare, run_prepared

ROOT = Path(__file__).resolve().parents[1]
TASKS_FILE = ROOT / "tests" / "fixtures" / "tasks_sandbox.jsonl"
TASK = "sbx-travel-kathmandu"
MODEL = f"openai/{llm_local.MODEL_ALIAS}"
# One thread: on a shared, loaded 2-core machine two llama.cpp threads wait on each other at every
# barrier, and generation fell from 5.0 to 0.6 tokens/s (docs/local-model.md).
THREADS = int(os.environ.get("CWORLD_LOCAL_LLM_THREADS", "1"))


@dataclass
class Server:
    port: int
    process: subprocess.Popen[bytes]
    workspace: Path
    log: Path

    def model(self, **kwargs: object) -> ModelConfig:
        return ModelConfig(model=MODEL, api_base=llm_local.api_base(self.port), api_key_env=None, **kwargs)


def _installed_or_fail() -> None:
    if os.environ.get("CWORLD_LOCAL_LLM", "").strip() == "0":
        pytest.skip("CWORLD_LOCAL_LLM=0: the real-model tests are off")
    problem = llm_install.missing()
    if problem is not None:
        pytest.fail(f"{problem} (or set CWORLD_LOCAL_LLM=0 to skip the real-model tests)", pytrace=False)


def _serve(root: Path) -> Server:
    _installed_or_fail()
    root.mkdir(parents=True, exist_ok=True)
    port, log = llm_local.free_port(), root / "server.log"
    process = llm_local.start(port, log, THREADS, workspace=root / "ws")
    llm_local.wait_ready(port, process, 180.0)  # one real completion answered
    return Server(port, process, root / "ws", log)


def _stop(server: Server) -> None:
    if server.process.poll() is None:
        server.process.terminate()
    server.process.wait(timeout=30)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = _serve(tmp_path_factory.mktemp("smollm2"))
    yield running
    _stop(running)


async def test_an_agent_episode_of_a_few_turns(server: Server, tmp_path: Path) -> None:
    ctx = scratch_context(tmp_path / "ws")
    ctx.max_turns = 2
    task = {t.id: t for t in read_jsonl(TASKS_FILE, Task)}[TASK]
    gateway = Gateway(cache_path=None, timeout_s=240.0)
    agent = LLMAgent(server.model(max_tokens=48), gateway, style="react", name="smollm2")
    episode = build_episode(task, agent=agent.name, access="search", mode="live", policy="none", seed=0, ctx=ctx)
    trajectory = await run_episode(agent, episode)
    gateway.close()
    assert trajectory.status in ("completed", "turn_limit", "gave_up"), trajectory.infra_errors
    assert trajectory.usage["agent"].calls >= 1 and trajectory.usage["agent"].prompt_tokens > 100
    assert trajectory.steps and trajectory.steps[-1].turn <= 2


async def test_one_world_engine_answer(server: Server, tmp_path: Path) -> None:
    cards = load_cards(ROOT / "category_cards")
    tool = {t.name: t for t in tool_specs(app_by_name("mail"))}["get_contact"]
    gateway = Gateway(ModelsConfig(engine=server.model()), cache_path=None, timeout_s=240.0)
    engine = LLMEngine(cards, gateway, cards_dir=ROOT / "category_cards", tools=[tool], max_repairs=0, retries=0,
                       max_tokens=80, budget_tokens=300, settings=LLMEngineSettings(cut_retries=0))  # one call
    result = await engine.respond(tool, {"contact_id": "contact_0002"}, SessionLog(seed=1))
    gateway.close()
    stats = engine.stats.as_dict()
    assert stats["model_calls"] >= 1 and "model error" not in stats["fallback_reasons"], stats
    assert result.text


async def test_one_judge_vote(server: Server, tmp_path: Path) -> None:
    judge = server.model(max_tokens=60)
    content = JudgeContent.from_environment()
    content = replace(content, rubrics={"completeness": content.rubrics["completeness"]})
    run = write_run(tmp_path / "run", [sample_episode(sample_task(1), "careful", 0, skilled=True)])
    gateway = Gateway(ModelsConfig(judge=[judge]), cache_path=None, timeout_s=240.0)
    await judge_run(run, JudgeSetup(content, tools={}, gateway=gateway, judges=[judge], max_repairs=0), resume=False)
    gateway.close()
    (score,) = load_scores(run).values()
    assert score.judge_usage[judge.model].calls >= 1 and score.judge_usage[judge.model].prompt_tokens > 100
    (vote,) = score.dimensions["completeness"].votes
    assert vote.score is None and vote.rationale.startswith("unscored") or 0 <= (vote.score or 0) <= 10


async def test_one_synthesis_draft(server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")
    ws = Workspace.resolve(tmp_path / "ws")
    ws.root.mkdir(parents=True)
    synth = {"model": MODEL, "api_base": llm_local.api_base(server.port), "max_tokens": 120}
    (ws.root / "config.yaml").write_text(yaml.safe_dump({"models": {"synth": synth}}))
    options = SynthOptions(n=1, seed=1, max_attempts=1, max_rounds=1, min_tools=3, max_tools=4)
    prepared = await asyncio.to_thread(prepare, Environment.resolve(), ws, options, out=tmp_path / "tasks.jsonl")
    assert prepared.synthesis.source == "llm"
    result, summary = await run_prepared(prepared)
    assert summary.accepted + summary.rejected == 1 and result.attempts == 1
    for outcome in result.rejected:
        assert outcome.code and outcome.reason and "unreachable" not in outcome.reason


class RecordingProxy:
    """Between cworld and the local server: forwards each request and keeps the JSON bodies it carried, so a
    test reads what reached the server rather than what cworld meant to send."""

    def __init__(self, upstream: str) -> None:
        self.upstream, self.bodies = upstream.rstrip("/"), []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy.bodies.append(json.loads(body or b"{}"))
                request = urllib.request.Request(proxy.upstream + self.path.removeprefix("/v1"), data=body,
                                                 headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=600) as answer:
                    reply, status = answer.read(), answer.status
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def test_an_agent_set_only_by_environment_variables_sends_its_budget(server: Server, tmp_path: Path) -> None:
    """docs/local-model.md's path: the model by CWORLD_AGENT_MODEL and CWORLD_API_BASE, no budget set by hand.
    The agent role's default cap (1,024 tokens) must reach the server on every agent request."""
    proxy = RecordingProxy(llm_local.api_base(server.port))
    out = tmp_path / "run"
    env = {**os.environ, "CWORLD_WORKSPACE": str(tmp_path / "ws"), "CWORLD_AGENT_MODEL": MODEL,
           "CWORLD_API_BASE": proxy.url, "PYTHONPATH": str(ROOT)}
    try:
        run = subprocess.run([sys.executable, "-m", "cworld", "run", "--tasks", str(TASKS_FILE), "--limit", "1",
                              "--agent", MODEL, "--style", "react", "--policy", "none", "--max-turns", "2",
                              "--no-progress", "--out", str(out)], env=env, capture_output=True, text=True,
                             timeout=900)
    finally:
        proxy.close()
    assert run.returncode == 0, run.stderr
    agent_requests = [b for b in proxy.bodies if b.get("max_tokens") != 1]  # 1: the preflight's ping
    assert agent_requests and all(b.get("max_tokens") == 1024 for b in agent_requests), proxy.bodies
    (trajectory,) = read_trajectories(out)
    assert trajectory.steps, trajectory.status
    calls = [c for c in trajectory.model_calls if c.role == "agent"]
    assert len(calls) == len(agent_requests) and all(c.max_tokens == 1024 for c in calls)
    assert all(c.completion_tokens <= 1024 for c in calls)
    assert "agent model: " in run.stdout and "latency p50" in run.stdout


def _posts(log: Path) -> int:
    return log.read_text(errors="replace").count("POST /v1/chat/completions") if log.exists() else 0


def test_a_server_killed_mid_run_is_an_infra_failure_and_one_line(tmp_path: Path) -> None:
    """The run's preflight call is answered, then the server is killed (SIGKILL) as the episode starts."""
    killed = _serve(tmp_path / "killed")
    out = tmp_path / "run"
    env = {**os.environ, "CWORLD_WORKSPACE": str(killed.workspace), "CWORLD_AGENT_MODEL": MODEL,
           "CWORLD_API_BASE": llm_local.api_base(killed.port), "PYTHONPATH": str(ROOT)}
    run = subprocess.Popen([sys.executable, "-m", "cworld", "run", "--tasks", str(TASKS_FILE), "--limit", "1",
                            "--agent", MODEL, "--style", "react", "--policy", "none", "--max-turns", "3",
                            "--no-progress", "--out", str(out)],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while _posts(killed.log) < 2 and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # 1: the readiness completion; 2: the run's preflight ping
        killed.process.send_signal(signal.SIGKILL)
        _, stderr = run.communicate(timeout=180)
    finally:
        if run.poll() is None:
            run.kill()
        _stop(killed)
    assert run.returncode == 1, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr and len(lines) == 1, stderr
    assert f"the local model server 'smollm2' (pid {killed.process.pid}, port {killed.port}) exited" in lines[0]
    assert "SIGKILL" in lines[0] and "infra_error" in lines[0]
    (record,) = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert record["status"] == "infra_error"
    assert all("local model server 'smollm2'" in e["message"] for e in record["infra_errors"])
    assert len(record["infra_errors"]) == 1  # a dead server is not retried
    assert local_server.read_record(killed.port, killed.workspace).exit_code == -9  # type: ignore[union-attr]


@pytest.mark.local_llm
async def test_twenty_consecutive_completions_with_tools(server: Server) -> None:
    """The soak of the issue: 20 chat completions offering tools, each answered; tokens/s printed."""
    mail = tool_specs(app_by_name("mail"))[:4]
    tools = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                "parameters": t.input_schema}} for t in mail]
    gateway = Gateway(cache_path=None, timeout_s=240.0)
    cfg, started, generated, prompt = server.model(max_tokens=64), time.monotonic(), 0, 0
    for i in range(20):
        messages = [{"role": "user", "content": f"Find the contact of person number {i} and tell me their email."}]
        reply = await gateway.complete("agent", messages, model=cfg, tools=tools, seed=i)
        assert reply.text or reply.tool_calls
        generated, prompt = generated + reply.usage.completion_tokens, prompt + reply.usage.prompt_tokens
    elapsed = time.monotonic() - started
    gateway.close()
    print(f"\nSmolLM2 x20 with {len(tools)} tools: {elapsed:.1f} s, prompt {prompt} tok, generated {generated} tok, "
          f"{generated / elapsed:.1f} generated tok/s, {(prompt + generated) / elapsed:.1f} total tok/s")
