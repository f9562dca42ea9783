"""`cworld export-sft` end to end on real rollouts (scripted agents, sandbox, default fault policy)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cworld.cli import main as cli_main
from cworld.data_model import Task, read_jsonl
from cworld.environment import Environment, Workspace
from cworld.export import check_openai_file, check_sharegpt_record
from cworld.registry.tools import environment_tools
from cworld.rollout import RolloutContext, RunConfig, Runner

FIXTURE = Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl"


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Until cworld/cli/main.py lists the command (the lead registers it)."""
    monkeypatch.setitem(cli_main.COMMANDS, "export-sft", "export_sft")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("export")
    ws = Workspace.resolve(root / "ws")
    tasks = read_jsonl(FIXTURE, Task)[:3]
    ctx = RolloutContext(Environment.resolve(), ws, environment_tools(workspace=ws).episode())
    out = root / "run"
    for agent in ("scripted:oracle", "scripted:no-retry"):
        config = RunConfig(agent=agent, mode="live", policy="default", resume=True, progress=False)
        asyncio.run(Runner(tasks, config, ctx, out).run())
    return out


def cworld(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        cli_main.main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_openai_and_sharegpt_from_real_runs(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sft.jsonl"
    code, stdout, err = cworld(
        ["--workspace", str(tmp_path / "ws"), "export-sft", str(run_dir), "--out", str(out)], capsys
    )
    assert code == 0, err
    assert "openai export:" in stdout and str(out) in stdout
    assert check_openai_file(out) == []
    summary = json.loads(Path(str(out) + ".summary.json").read_text())
    assert summary["episodes"] == 6 and summary["examples"] >= 1 and summary["tokens"]["total"] > 0
    assert summary["faults_seen"], "the default policy injects faults; they must be kept"
    sg = tmp_path / "sg.jsonl"
    code, stdout, err = cworld(
        ["export-sft", str(run_dir), "--format", "sharegpt", "--out", str(sg), "--json"], capsys
    )
    assert code == 0, err
    assert json.loads(stdout)["format"] == "sharegpt"
    assert all(check_sharegpt_record(json.loads(line)) == [] for line in sg.read_text().splitlines())


def test_first_round_from_real_runs(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fr.jsonl"
    code, _, err = cworld(["export-sft", str(run_dir), "--first-round", "--out", str(out)], capsys)
    assert code == 0, err
    assert check_openai_file(out) == []
    for line in out.read_text().splitlines():
        messages = json.loads(line)["messages"]
        invoked = [
            c for m in messages for c in m.get("tool_calls", []) if c["function"]["name"] != "search_tools"
        ]
        assert len(invoked) == 1 and messages[-1]["role"] == "tool"


def test_user_errors_are_one_line_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.jsonl"
    ws = ["--workspace", str(tmp_path / "ws")]
    code, _, err = cworld([*ws, "export-sft", "--out", str(out)], capsys)
    assert code == 2 and err.startswith("error: no run in workspace") and err.count("\n") == 1
    code, _, err = cworld([*ws, "export-sft", str(tmp_path / "nope"), "--out", str(out)], capsys)
    assert code == 2 and "holds no trajectories.jsonl" in err
    code, _, err = cworld(
        [*ws, "export-sft", str(tmp_path / "nope"), "--out", str(out), "--fault-types", "meteor"], capsys
    )
    assert code == 2 and "unknown fault type(s) meteor" in err
    assert not out.exists()


def test_min_score_without_scores_says_to_judge(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.jsonl"
    code, _, err = cworld(["export-sft", str(run_dir), "--min-score", "5", "--out", str(out)], capsys)
    assert code == 2 and "cworld judge" in err and not out.exists()
