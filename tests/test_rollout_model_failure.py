"""A model that dies mid-run (issue 27): the engine's mock model answers the first three episodes, then
fails every call. Under each `on_model_failure` policy the run ends as the policy says: `infra` records
`infra_error` episodes that `--resume` runs again once the model is back (one episode per id after), `stop`
ends the run in one line with the finished episodes kept, `fallback` goes on and counts every fallback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cworld.cli.main import cli, main
from cworld.data_model import Task, read_jsonl
from cworld.llm import mock
from cworld.llm.mock import failure
from cworld.rollout import TRAJECTORIES_FILE, read_trajectories
from cworld.rollout.summary import engine_fallbacks

FIXTURE = Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl"
TASKS = read_jsonl(FIXTURE, Task)[:5]
FOURTH = " ".join(TASKS[3].query.split())[:60]
"""The engine's prompt opens with the task's request: the model dies when it first sees the fourth task's."""


class DyingModel:
    """Words the world's answers (echoes the facts it is given) until it meets the fourth task; then every
    call is a provider outage, until `revive`."""

    def __init__(self) -> None:
        self.dead = self.back = False

    def __call__(self, messages: list[Any], tools: Any) -> Any:
        text = " ".join(str(m.get("content", "")) for m in messages)
        self.dead = not self.back and (self.dead or FOURTH in " ".join(text.split()))
        if self.dead:
            return failure("unavailable", "the quota is spent")
        last = str(messages[-1]["content"])
        marker = "add only what it lacks:\n"
        facts = json.loads(last.split(marker, 1)[1]) if marker in last else {}
        return json.dumps({"status": "ok", "result": facts})

    def revive(self) -> None:
        self.dead, self.back = False, True


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One workspace for the module: the seed's world is built once. Each test names its own mock model, so
    the LLM cache of one never answers for another."""
    return tmp_path_factory.mktemp("ws")


@pytest.fixture
def model(workspace: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[DyingModel]:
    name = f"dying-{request.node.name.split('_')[1]}"
    (workspace / "config.yaml").write_text(f"models:\n  engine: mock/{name}\n")
    monkeypatch.setenv("CWORLD_WORKSPACE", str(workspace))
    monkeypatch.setenv("COLUMNS", "200")
    dying = DyingModel()
    with mock.script(name, dying):
        yield dying


def run_args(out: Path, *extra: str) -> list[str]:
    return ["run", "--tasks", str(FIXTURE), "--limit", "5", "--mode", "synthesized", "--agent", "scripted:oracle",
            "--policy", "none", "--concurrency", "1", "--infra-retries", "1", "--no-progress", "--out", str(out),
            *extra]


def lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / TRAJECTORIES_FILE).read_text().splitlines()]


def test_infra_records_infra_error_and_resume_reruns_it_once_the_model_is_back(model: DyingModel,
                                                                               tmp_path: Path) -> None:
    out, runner = tmp_path / "run", CliRunner()
    first = runner.invoke(cli, [*run_args(out), "--json"], catch_exceptions=False)
    assert first.exit_code == 0, first.output
    statuses = json.loads(first.stdout)["statuses"]  # stdout: a logged warning goes to stderr
    assert statuses.pop("infra_error") == 2 and sum(statuses.values()) == 3  # the three before the model died
    assert [r.get("status", "completed") == "infra_error" for r in lines(out)] == [False] * 3 + [True] * 2

    kept = runner.invoke(cli, [*run_args(out), "--resume", "--no-retry-infra", "--json"], catch_exceptions=False)
    assert json.loads(kept.stdout)["ran"] == 0 and len(lines(out)) == 5  # today's behaviour, on request

    model.revive()
    again = runner.invoke(cli, [*run_args(out), "--resume"], catch_exceptions=False)
    assert again.exit_code == 0, again.output
    assert "2 episode(s) run (2 re-run after an infra_error), 3 already done" in again.output
    assert len(lines(out)) == 7  # the old records stay on disk, superseded
    episodes = list(read_trajectories(out))
    assert [t.task_id for t in episodes] == [t.id for t in TASKS]  # one per id, the latest
    assert "infra_error" not in {t.status for t in episodes}
    assert all(t.infra_errors == [] for t in episodes)


def test_stop_ends_the_run_in_one_line_and_keeps_the_finished_episodes(model: DyingModel, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exit_:
        main(run_args(out, "--on-model-failure", "stop"))
    err = capsys.readouterr().err.strip()
    assert exit_.value.code == 1 and len(err.splitlines()) == 1
    assert "on_model_failure: stop" in err and "the quota is spent" in err
    assert [r["task_id"] for r in lines(out)] == [t.id for t in TASKS[:3]]
    assert all(r.get("status", "completed") != "infra_error" for r in lines(out))

    model.revive()
    capsys.readouterr()
    main_ok = CliRunner().invoke(cli, [*run_args(out, "--on-model-failure", "stop"), "--resume", "--json"],
                                 catch_exceptions=False)
    assert json.loads(main_ok.stdout)["ran"] == 2 and len(list(read_trajectories(out))) == 5


def test_fallback_goes_on_and_counts_every_fallback(model: DyingModel, workspace: Path, tmp_path: Path) -> None:
    (workspace / "config.yaml").write_text((workspace / "config.yaml").read_text() + "on_model_failure: fallback\n")
    out = tmp_path / "run"
    done = CliRunner().invoke(cli, [*run_args(out), "--json"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert sum(report["statuses"].values()) == 5 and "infra_error" not in report["statuses"]
    per_episode = [engine_fallbacks(t) for t in read_trajectories(out)]
    tool_calls = [sum(s.kind == "tool" for s in t.steps) for t in read_trajectories(out)]
    assert per_episode[:3] == [0, 0, 0] and per_episode[3:] == tool_calls[3:] and all(tool_calls[3:])
    assert report["rows"][0]["fallbacks"] == sum(per_episode)
    shown = CliRunner().invoke(cli, [*run_args(out), "--resume"], catch_exceptions=False)
    assert f"{sum(per_episode)} engine answer(s) were made without the engine's model" in shown.output


def test_the_gym_follows_the_workspaces_policy(model: DyingModel, workspace: Path) -> None:
    """A served episode (the gym; `cworld serve` and the trainer doors build theirs alike) reads
    `on_model_failure` from the workspace: `fallback` lets the engine answer without its model, counted;
    `stop` acts as `infra` there (the episode fails with the cause; a server keeps serving others)."""
    from cworld.config import serving_failure_policy
    from cworld.environment import Workspace
    from cworld.gym import make

    model.dead = True
    config = workspace / "config.yaml"
    config.write_text(config.read_text() + "on_model_failure: fallback\n")
    env = make(TASKS[0], mode="synthesized", policy="none", workspace=Workspace.resolve(workspace))
    env.reset(seed=0)
    obs, _, _, _, _ = env.step({"tool": "mail/search_messages", "arguments": {"query": "audit"}})  # no infra error
    env.close()
    assert obs["result"] is not None and not obs["result"]["is_error"] and env.ctx.on_model_failure == "fallback"
    config.write_text(config.read_text().replace("fallback", "stop"))
    assert serving_failure_policy(workspace) == "infra"
