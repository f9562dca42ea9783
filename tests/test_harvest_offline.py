"""Harvested servers are listed and validated offline (issue 27): in a network namespace of their own they
cannot reach a listener the test opens on the host's loopback, the provenance says they were listed
offline, a server that needs the network to list its tools is its own failure class, and where no namespace
can be made the harvest says so in one line and goes on. No test aims at any address beyond loopback."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from cworld.cli.main import cli
from cworld.data_model import ServerSpec
from cworld.environment import Environment
from cworld.registry.harvest import netns
from cworld.registry.harvest.catalog import SUMMARY
from cworld.registry.harvest.entries import HarvestEntry
from cworld.registry.harvest.run import HarvestOptions, harvest
from cworld.registry.launch import LaunchContext
from cworld.registry.validate_server import Check, check_server

BAD = Path(__file__).parent / "fixtures" / "harvest_bad"
pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="needs node and npm"),
]
needs_namespace = pytest.mark.skipif(not netns.network_isolation().offline,
                                     reason="no network namespace can be made on this machine")


class Listener:
    """A TCP listener on the host's loopback that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    opened = Listener()
    yield opened
    opened.sock.close()


def entries(port: int) -> list[HarvestEntry]:
    return [HarvestEntry(id=f"bad-{name}", npm=str(BAD), command=name, env={"CWORLD_FIXTURE_PORT": str(port)},
                         category="utilities") for name in ("phones-home", "needs-network")]


def harvested(tmp_path: Path, port: int, *, offline: bool) -> dict[str, dict]:
    options = HarvestOptions(out=tmp_path / "catalog", workspace=tmp_path / "ws", handshake_timeout_s=15,
                             list_timeout_s=15, offline=offline)
    outcomes = {o.id: o.as_dict() for o in asyncio.run(harvest(entries(port), options))}
    record = options.out / "bad-phones-home.json"
    outcomes["record"] = json.loads(record.read_text()) if record.is_file() else {}
    outcomes["summary"] = json.loads((options.out / SUMMARY).read_text())
    return outcomes


@needs_namespace
def test_a_server_listed_offline_cannot_reach_the_hosts_loopback(listener: Listener, tmp_path: Path) -> None:
    got = harvested(tmp_path / "offline", listener.port, offline=True)
    assert listener.accepted == 0, "a harvested server reached the host's loopback while it listed its tools"
    phoned = got["bad-phones-home"]
    assert (phoned["status"], phoned["offline"]) == ("ok", True)
    assert got["record"]["provenance"]["listed_offline"] is True
    assert got["record"]["tools"][0]["description"] == "probe: connect ECONNREFUSED 127.0.0.1"
    needy = got["bad-needs-network"]
    assert needy["failure"] == "needs_network" and "ECONNREFUSED" in needy["detail"]
    assert got["summary"]["listed_offline"] == 2 and got["summary"]["failures"] == {"needs_network": 1}

    control = harvested(tmp_path / "online", listener.port, offline=False)  # the same servers with the network
    assert listener.accepted == 2 and control["record"]["tools"][0]["description"] == "probe: reached"
    assert control["record"]["provenance"]["listed_offline"] is False
    assert control["bad-needs-network"]["status"] == "ok"


@needs_namespace
def test_a_harvested_server_is_validated_offline(listener: Listener, tmp_path: Path) -> None:
    spec = ServerSpec(id="phones", kind="real", command="node", args=[str(BAD / "bin" / "phones_home.js")],
                      env={"CWORLD_FIXTURE_PORT": str(listener.port)}, timeout_s=15)
    ctx = LaunchContext(tmp_path, tmp_path / "servers", tmp_path / "scratch")
    outcome = asyncio.run(check_server(Environment.resolve(), spec, ctx, Check(15, offline=True)))
    assert outcome.validation.started and outcome.validation.reason.endswith("(offline: no network beyond its loopback)")
    assert [t.description for t in outcome.tools] == ["probe: connect ECONNREFUSED 127.0.0.1"]
    assert listener.accepted == 0
    online = asyncio.run(check_server(Environment.resolve(), spec, ctx, Check(15)))
    assert [t.description for t in online.tools] == ["probe: reached"] and listener.accepted == 1


def test_without_a_namespace_the_harvest_says_so_in_one_line_and_goes_on(listener: Listener, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    netns.network_isolation.cache_clear()
    monkeypatch.setattr(netns, "_candidates", lambda: [[str(tmp_path / "no-unshare"), "--net", "--"]])
    monkeypatch.setenv("CWORLD_WORKSPACE", str(tmp_path / "ws"))
    listed = tmp_path / "harvest.yaml"
    listed.write_text(yaml.safe_dump({"servers": [entries(listener.port)[0].model_dump(exclude_defaults=True)]}))
    try:
        done = CliRunner().invoke(cli, ["registry", "harvest", "--list", str(listed), "--out", str(tmp_path / "cat"),
                                        "--timeout", "15"], catch_exceptions=False)
    finally:
        netns.network_isolation.cache_clear()
    assert done.exit_code == 0, done.output
    said = [line for line in done.output.splitlines() if "no network namespace can be made here" in line]
    assert len(said) == 1 and said[0].endswith("servers are listed with this machine's network")
    record = json.loads((tmp_path / "cat" / "bad-phones-home.json").read_text())
    assert record["provenance"]["listed_offline"] is False and listener.accepted == 1
