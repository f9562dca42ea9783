"""A local model server cworld started and that died is named, with its exit code, at the next call.

No model needed: a stand-in process is recorded on a free port where nothing listens, the way
`llm_local.start` records the real server, and then killed. The gateway's call to that api_base must
fail at once with `LocalServerDown`, not retry a "Connection error"; a port with no record keeps the
ordinary retries. The real server killed mid-run is in tests/test_local_model.py.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from cworld.cli import llm_local
from cworld.config import ModelConfig
from cworld.errors import InfraError
from cworld.llm import Gateway, ModelUnavailable, RetryPolicy, local_server
from cworld.llm._loader import load_litellm
from cworld.llm.preflight import check_use

PING = [{"role": "user", "content": "hi"}]


def _stand_in(port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    local_server.write_record(local_server.ServerRecord(pid=process.pid, port=port, model="smollm2", log="/x.log"))
    return process


def _model(port: int) -> ModelConfig:
    return ModelConfig(model="openai/smollm2", api_base=llm_local.api_base(port), api_key_env=None)


def test_a_recorded_server_is_alive_until_it_exits(workspace_dir) -> None:
    port = llm_local.free_port()
    process = _stand_in(port)
    assert local_server.down(llm_local.api_base(port)) is None
    process.send_signal(signal.SIGKILL)
    time.sleep(0.2)  # not reaped yet: a zombie is dead all the same
    local_server.record_exit(port, process.pid, process.wait())
    dead = local_server.down(f"http://localhost:{port}/v1")
    assert isinstance(dead, InfraError) and isinstance(dead, ModelUnavailable) and dead.fatal
    assert str(dead) == (f"the local model server 'smollm2' (pid {process.pid}, port {port}) exited with code -9 "
                         f"(SIGKILL); restart it with `cworld llm serve-local --port {port}` and rerun; its log: /x.log")


def test_a_reused_pid_is_not_the_server(workspace_dir) -> None:
    port = llm_local.free_port()
    process = _stand_in(port)
    record = local_server.read_record(port)
    assert record is not None and record.started is not None
    record.started -= 1  # what another process under the same pid would show
    assert not local_server.alive(record)
    process.kill()
    process.wait()


def test_remote_and_unrecorded_bases_are_not_local_servers(workspace_dir) -> None:
    assert local_server.local_port("https://api.openai.com/v1") is None
    assert local_server.down(llm_local.api_base(llm_local.free_port())) is None


async def test_the_gateway_names_the_dead_server_at_once(workspace_dir) -> None:
    port = llm_local.free_port()
    process = _stand_in(port)
    process.kill()
    local_server.record_exit(port, process.pid, process.wait())
    gateway = Gateway(retry=RetryPolicy(attempts=15, initial_s=5.0))  # retries would take minutes
    load_litellm()  # its import is not what is timed
    started = time.monotonic()
    with pytest.raises(local_server.LocalServerDown, match=rf"'smollm2' \(pid {process.pid}, port {port}\) exited"):
        await gateway.complete("agent", PING, model=_model(port))
    assert time.monotonic() - started < 10
    with pytest.raises(local_server.LocalServerDown, match="exited with code -9"):
        check_use("agent", _model(port))  # the preflight says the same


async def test_a_port_without_a_record_keeps_the_retries(workspace_dir) -> None:
    gateway = Gateway(retry=RetryPolicy.immediate(attempts=2))
    with pytest.raises(ModelUnavailable, match="after 2 attempt") as caught:
        await gateway.complete("agent", PING, model=_model(llm_local.free_port()))
    assert not isinstance(caught.value, local_server.LocalServerDown)
