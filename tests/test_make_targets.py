"""The Makefile's two commands: `make demo` sets up what the demo uses and never builds the local model's
llama.cpp wheel (4 to 40 minutes); `make test` (what CI runs) still installs everything, the local model too.
Checked on make's own plan (`make -n -B`: every step printed as on a fresh clone, none run)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUILDS_LOCAL_MODEL = "cworld llm install-local"


def plan(target: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


#: The project's own install with the extras every door and test needs.
INSTALL = "pip install -q -e '.[dev,inspect,ray,openenv,verifiers]'"


def test_the_demo_sets_up_without_building_the_local_model():
    steps = plan("demo")
    assert INSTALL in steps and "cworld servers install" in steps
    assert "scripts/demo.sh" in steps
    assert BUILDS_LOCAL_MODEL not in steps


def test_make_test_installs_everything_the_tests_use_the_local_model_too():
    steps = plan("test")
    for step in (INSTALL, "pip install -q --no-deps verifiers", "scripts/ensure_system_packages.sh",
                 "cworld servers install", BUILDS_LOCAL_MODEL, "ruff check", "mypy cworld", "-m pytest"):
        assert step in steps, step


DEMO = ROOT / "scripts" / "demo.sh"
#: A stand-in for cworld: chatty on every command, and `registry` fails with one error line.
FAKE_CWORLD = """#!/usr/bin/env bash
for i in $(seq 1 60); do echo "detail $i of cworld $1"; done
if [[ $1 == registry ]]; then echo "error: no server started" >&2; exit 3; fi
"""


def demo(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    fake = tmp_path / "cworld"
    fake.write_text(FAKE_CWORLD)
    fake.chmod(0o755)
    variables = {"PATH": "/usr/bin:/bin", "DEMO_CWORLD": str(fake), "CWORLD_WORKSPACE": str(tmp_path / "ws"), **env}
    return subprocess.run(["bash", str(DEMO)], cwd=ROOT, env=variables, capture_output=True, text=True, timeout=60)


def test_each_demo_step_prints_one_line_and_a_failing_one_its_log_tail_and_exit_code(tmp_path):
    done = demo(tmp_path)
    assert done.returncode == 3
    out = done.stdout.splitlines()
    assert len(out) == 2 and out[1].startswith("doctor ")  # the step's 60 lines went to its log
    logs = next((tmp_path / "ws" / "logs").glob("demo-*"))
    assert (logs / "doctor.log").read_text().count("detail") == 60
    assert "FAILED (exit 3)" in done.stderr and str(logs / "registry.log") in done.stderr
    assert "error: no server started" in done.stderr and len(done.stderr.splitlines()) <= 30


def test_bad_demo_input_is_one_clear_line(tmp_path):
    done = demo(tmp_path, DEMO_TASKS="twenty")
    assert done.returncode == 2
    assert done.stderr.strip() == "demo: DEMO_TASKS must be a whole number above 0, not 'twenty'"
    assert done.stdout == ""
