"""Fail fast on what the user got wrong: a missing or refused key, an unknown model, a bad tasks line.

Each case is one line on stderr, a non-zero exit and no traceback, before any episode runs. No network:
the provider's answer to the 1-token call is stood in for by patching litellm's `completion`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from judges_helpers import sample_episode, sample_task, write_run

from cworld.cli.main import main
from cworld.config import ModelConfig, ModelsConfig
from cworld.errors import ConfigError, CworldError
from cworld.llm import CredentialError, Gateway, ModelUnavailable, RetryPolicy, mock, set_default_retry
from cworld.llm._loader import load_litellm
from cworld.llm.failures import is_transient
from cworld.llm.preflight import forget, preflight, role_models
from cworld.llm.retry import default_retry

FIXTURE = Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl"
BAD_KEY = "sk-test-refused-0123456789abcdef"
MISSING = "Missing credentials. Please pass an `api_key`, or set the `OPENAI_API_KEY` environment variable."


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, tmp_path):
    """No key, no earlier passes remembered, a private workspace; scripts cleared afterwards."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("CWORLD_PREFLIGHT", raising=False)
    monkeypatch.setenv("CWORLD_WORKSPACE", str(tmp_path / "ws"))
    forget()
    yield
    forget()
    mock.clear()


@pytest.fixture
def provider(monkeypatch):
    """Stands in for the provider: `provider.answer` is raised (an exception) or returned; calls counted."""

    class Provider:
        answer: Any = None
        calls: list[dict[str, Any]] = []

        def completion(self, **call: Any) -> Any:
            self.calls.append(call)
            if isinstance(self.answer, BaseException):
                raise self.answer
            return self.answer

        async def acompletion(self, **call: Any) -> Any:
            return self.completion(**call)

    fake = Provider()
    fake.calls = []
    litellm = load_litellm()
    monkeypatch.setattr(litellm, "completion", fake.completion)
    monkeypatch.setattr(litellm, "acompletion", fake.acompletion)
    return fake


def cli(capsys, *args: str) -> tuple[int, str]:
    """Run the real entry point in-process: (exit code, stderr)."""
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    return int(exit_.value.code or 0), capsys.readouterr().err


def assert_one_line(err: str) -> None:
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


# --- a missing key ------------------------------------------------------------------------------------
def test_run_without_the_key_stops_in_one_line_before_any_call(capsys, provider, tmp_path):
    set_default_retry(RetryPolicy())  # real back-off: a retried failure would sleep for seconds
    try:
        started = time.perf_counter()
        code, err = cli(capsys, "run", "--tasks", str(FIXTURE), "--agent", "openai/gpt-4o-mini", "--limit", "2",
                        "--out", str(tmp_path / "run"), "--no-progress")
        elapsed = time.perf_counter() - started
    finally:
        set_default_retry(RetryPolicy.immediate())
    assert code == 2
    assert_one_line(err)
    assert "the agent role's model 'openai/gpt-4o-mini' needs OPENAI_API_KEY" in err and "--agent" in err
    assert provider.calls == [] and elapsed < 10
    assert not (tmp_path / "run").exists()


def test_judge_without_the_key_names_the_judge_role(capsys, provider, tmp_path):
    run = write_run(tmp_path / "ws" / "runs" / "r1", [sample_episode(sample_task(3), "good", 0, skilled=True)])
    before = (run / "trajectories.jsonl").read_bytes()
    code, err = cli(capsys, "judge", str(run), "--judges", "openai/gpt-4o-mini")
    assert code == 2
    assert_one_line(err)
    assert "the judge role's model 'openai/gpt-4o-mini' needs OPENAI_API_KEY" in err and "--judges" in err
    assert provider.calls == [] and not (run / "scores.jsonl").exists()
    assert (run / "trajectories.jsonl").read_bytes() == before


def test_fidelity_experiment_checks_its_llm_agents(capsys, provider, tmp_path):
    code, err = cli(capsys, "fidelity", "experiment", "--tasks", str(FIXTURE), "--limit", "1", "--no-progress",
                    "--agents", "scripted:oracle,heuristic:basic,openai/gpt-4o-mini", "--out", str(tmp_path / "x"))
    assert code == 2
    assert_one_line(err)
    assert "agent role's model 'openai/gpt-4o-mini' needs OPENAI_API_KEY" in err
    assert not (tmp_path / "x").exists()


def test_a_named_key_variable_is_what_the_message_names(monkeypatch, provider):
    monkeypatch.delenv("CWORLD_TEST_KEY", raising=False)
    models = ModelsConfig(engine=ModelConfig(model="openai/gpt-4o-mini", api_key_env="CWORLD_TEST_KEY"))
    with pytest.raises(CredentialError, match=r"engine role's model 'openai/gpt-4o-mini' needs CWORLD_TEST_KEY"):
        preflight(role_models(models, ["engine"]))


# --- a refused key, an unknown model ----------------------------------------------------------------
def test_run_with_a_refused_key_stops_in_one_line_and_keeps_the_run(capsys, provider, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", BAD_KEY)
    provider.answer = load_litellm().AuthenticationError(
        message=f"Incorrect API key provided: {BAD_KEY}", llm_provider="openai", model="gpt-4o-mini")
    run = write_run(tmp_path / "run", [sample_episode(sample_task(3), "good", 0, skilled=True)])
    before = sorted(p.name for p in run.iterdir()), (run / "trajectories.jsonl").read_bytes()
    code, err = cli(capsys, "run", "--tasks", str(FIXTURE), "--agent", "openai/gpt-4o-mini", "--limit", "2",
                    "--out", str(run), "--resume", "--no-progress")
    assert code == 2
    assert_one_line(err)
    assert "the agent role's model 'openai/gpt-4o-mini': the key in OPENAI_API_KEY was refused" in err
    assert BAD_KEY not in err and "REDACTED" in err              # the SDK read the key: masked all the same
    assert len(provider.calls) == 1 and provider.calls[0]["max_tokens"] == 1       # one tiny call, not retried
    assert (sorted(p.name for p in run.iterdir()), (run / "trajectories.jsonl").read_bytes()) == before


@pytest.mark.parametrize(("answer", "words"), [
    (lambda lit: lit.NotFoundError(message="The model `gpt-4o-mnii` does not exist", model="gpt-4o-mnii",
                                   llm_provider="openai"), "is not known to the provider"),
    (lambda lit: lit.BadRequestError(message="model not found: gpt-4o-mnii", model="gpt-4o-mnii",
                                     llm_provider="openai"), "is not known to the provider"),
    (lambda lit: lit.PermissionDeniedError(message="no access", model="m", llm_provider="openai",
                                           response=httpx.Response(403, request=httpx.Request("POST", "http://x"))),
     "may not use this model"),
    (lambda lit: lit.RateLimitError(message="You exceeded your current quota", model="m", llm_provider="openai"),
     "out of quota"),
])
def test_permanent_answers_to_the_tiny_call_are_one_line(monkeypatch, provider, answer, words):
    monkeypatch.setenv("OPENAI_API_KEY", BAD_KEY)
    provider.answer = answer(load_litellm())
    with pytest.raises(ConfigError, match=words) as info:
        preflight([("agent", ModelConfig(model="openai/gpt-4o-mnii"))])
    assert "\n" not in str(info.value) and BAD_KEY not in str(info.value)
    assert len(provider.calls) == 1


def test_a_busy_provider_passes_and_every_model_is_checked_once(monkeypatch, provider):
    monkeypatch.setenv("OPENAI_API_KEY", BAD_KEY)
    provider.answer = load_litellm().RateLimitError(message="slow down", model="m", llm_provider="openai")
    uses = [("agent", ModelConfig(model="openai/gpt-4o-mini")), ("judge", ModelConfig(model="openai/gpt-4o-mini"))]
    preflight(uses)
    preflight(uses)
    assert len(provider.calls) == 1


def test_a_dead_local_server_is_retried_once_then_unavailable(provider):
    provider.answer = load_litellm().APIConnectionError(message="connection refused", model="smol",
                                                        llm_provider="openai")
    cfg = ModelConfig(model="openai/smol", api_base="http://127.0.0.1:9/v1")    # keyless: no key check
    with pytest.raises(ModelUnavailable, match=r"agent role's model 'openai/smol' did not answer"):
        preflight([("agent", cfg)])
    assert len(provider.calls) == 2


def test_mock_models_are_checked_as_strings_and_lose_nothing_of_their_script(provider):
    script = mock.script("kept", ["one"])
    preflight([("agent", ModelConfig(model="mock/kept")), ("synth", ModelConfig(model="mock/later"))])
    assert script.remaining == 1 and provider.calls == []
    with pytest.raises(ConfigError, match=r"^the agent role's model 'mock/ bad' is malformed; use"):
        preflight([("agent", ModelConfig(model="mock/ bad"))])


def test_it_can_be_turned_off_for_a_cached_replay(monkeypatch, provider):
    monkeypatch.setenv("CWORLD_PREFLIGHT", "0")
    preflight([("agent", ModelConfig(model="openai/gpt-4o-mini"))])
    assert provider.calls == []


# --- the retry policy ---------------------------------------------------------------------------------
async def test_a_missing_key_reported_as_a_500_is_not_retried(provider):
    """openai's SDK reports a missing key as an InternalServerError; retrying it cost 15 calls a run."""
    provider.answer = load_litellm().InternalServerError(message=MISSING, llm_provider="openai", model="gpt-4o-mini")
    assert not is_transient(provider.answer)
    gw = Gateway(ModelsConfig(agent=ModelConfig(model="openai/gpt-4o-mini")), retry=RetryPolicy.immediate())
    with pytest.raises(CredentialError, match=r"role 'agent': authentication failed; set OPENAI_API_KEY") as info:
        await gw.complete("agent", [{"role": "user", "content": "hi"}])
    assert len(provider.calls) == 1 and isinstance(info.value, CworldError) and info.value.exit_code == 2
    assert default_retry() == RetryPolicy.immediate()


async def test_outages_are_still_retried(provider):
    provider.answer = load_litellm().InternalServerError(message="upstream broke", llm_provider="openai", model="m")
    assert is_transient(provider.answer)
    gw = Gateway(ModelsConfig(agent=ModelConfig(model="openai/m", api_base="http://127.0.0.1:9/v1")),
                 retry=RetryPolicy.immediate(3))
    with pytest.raises(ModelUnavailable):
        await gw.complete("agent", [{"role": "user", "content": "hi"}])
    assert len(provider.calls) == 3


# --- a bad tasks file -------------------------------------------------------------------------------
def test_a_bad_tasks_line_names_the_file_and_line(capsys, tmp_path):
    good = FIXTURE.read_text().splitlines()[0]
    bad = tmp_path / "tasks.jsonl"
    bad.write_text(f"{good}\n\n{{\"id\": \"x\", \"query\": 3\n")      # line 3: a line cut short, with its newline
    code, err = cli(capsys, "run", "--tasks", str(bad), "--agent", "scripted:oracle", "--no-progress",
                    "--out", str(tmp_path / "run"))
    assert code == 2
    assert_one_line(err)
    assert f"{bad}:3: not a task (invalid JSON:" in err and "fix or delete that line" in err
    bad.write_text(f"{good}\n{{\"id\": \"x\"}}\n")
    code, err = cli(capsys, "run", "--tasks", str(bad), "--agent", "scripted:oracle", "--no-progress")
    assert code == 2 and f"{bad}:2: not a task (query: Field required)" in err
    assert not (tmp_path / "run").exists()


def test_an_empty_tasks_file_still_says_it_holds_no_tasks(capsys, tmp_path):
    empty = tmp_path / "tasks.jsonl"
    empty.write_text("\n\n")
    code, err = cli(capsys, "run", "--tasks", str(empty), "--agent", "scripted:oracle", "--no-progress")
    assert code == 2
    assert_one_line(err)
    assert f"{empty}: the tasks file holds no tasks" in err
