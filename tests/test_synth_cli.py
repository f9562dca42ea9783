"""`cworld synth` through the real root command group (registered here as the lead will in
cworld/cli/main.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cworld.cli import main
from cworld.data_model import Task, read_jsonl


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setitem(main.COMMANDS, "synth", "synth")
    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")
    monkeypatch.setenv("CWORLD_WORKSPACE", str(tmp_path / "ws"))
    return CliRunner()


def test_synth_writes_tasks_and_a_summary(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    result = cli.invoke(
        main.cli, ["synth", "--n", "2", "--seed", "3", "--out", str(out), "--json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["accepted"] == 2 and summary["output"] == str(out)
    assert [t.id for t in read_jsonl(out, Task)] == ["synth-3-0000", "synth-3-0001"]
    latest = (tmp_path / "ws" / "LATEST_TASKS").read_text().strip()
    assert latest == str(out.resolve())


def test_synth_prints_the_summary_lines(cli: CliRunner, tmp_path: Path) -> None:
    result = cli.invoke(
        main.cli, ["synth", "--n", "1", "--seed", "2", "--concurrency", "1"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "accepted 1/1 (offline)" in result.stdout and "verifiable:" in result.stdout
    assert "accepted 1, rejected" in result.stderr
    files = list((tmp_path / "ws" / "tasks").glob("tasks-*.jsonl"))
    assert len(files) == 1 and len(read_jsonl(files[0], Task)) == 1


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["synth", "--min-tools", "8", "--max-tools", "5"], "--max-tools"),
        (["synth", "--model", "nosuchprovider/x"], "nosuchprovider"),
    ],
)
def test_bad_options_and_models_fail_in_one_line(
    cli: CliRunner, capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], needle: str
) -> None:
    with pytest.raises(SystemExit) as stop:
        main.main(argv)
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and err.startswith("error:") and needle in err and "\n" not in err
    assert not (tmp_path / "ws" / "tasks").exists()
