from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from cworld import __version__
from cworld.cli.main import cli


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cworld", *args], capture_output=True, text=True, timeout=120)


def test_version_and_help():
    runner = CliRunner()
    assert __version__ in runner.invoke(cli, ["--version"]).output
    out = runner.invoke(cli, ["--help"]).output
    for name in ("doctor", "init"):
        assert name in out


def test_doctor_json_offline(tmp_path):
    result = CliRunner().invoke(cli, ["--workspace", str(tmp_path / "ws"), "doctor", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["packages"]["mcp"].startswith("2.")
    assert data["llm_roles"]["agent"] == "not configured (offline path)"
    assert data["embedding"]["present"] is True


def test_bad_env_is_one_line_and_nonzero(tmp_path):
    proc = run_cli("--env", str(tmp_path / "nope"), "doctor", "--no-ping")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0
    assert "not a cworld environment" in proc.stderr


def test_unknown_command_is_one_line(tmp_path):
    proc = run_cli("frobnicate")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr


def test_init_command(tmp_path):
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "e")])
    assert result.exit_code == 0
    assert (tmp_path / "e" / "judges").is_dir()
