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
