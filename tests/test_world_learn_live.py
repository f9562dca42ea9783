"""Learning a launched MCP server's rules (`cworld world learn filesystem`, docs/world-engine.md "Learning
rules"): the MCP driver calls the real server through the live backend, shows it in the world's names and
reads its state; the command writes the learned file, keeps a corrected one and refuses a bad name."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from registry_helpers import servers_cache

from cworld.cli import main
from cworld.controller.learn import McpDriver, learn_server_live
from cworld.data_model import ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.learn.session import Run
from cworld.engine.world.real import WORLD_SCRATCH, manifest_spec
from cworld.environment import Environment, Workspace
from cworld.errors import UsageError
from cworld.registry.install import entry_path
from cworld.registry.tools import recorded_tools


def _workspace(tmp_path: Path, server: str) -> Workspace:
    """A workspace whose servers are the installed cache, or a skip when the server is not installed."""
    spec = manifest_spec(server)
    assert spec is not None
    cache = servers_cache()
    entry = entry_path(spec, cache)
    if entry is None or not entry.is_file():
        pytest.skip(f"the real {server} server is not installed (make setup)")
    ws = Workspace(tmp_path / "ws")
    ws.root.mkdir(parents=True)
    (ws.root / "servers").symlink_to(cache, target_is_directory=True)
    return ws


def _tools(server: str) -> list[ToolSpec]:
    return [t for t in recorded_tools(Environment.resolve()) if t.server == server]


def test_the_driver_shows_a_live_server_in_the_worlds_names(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "filesystem")
    spec = manifest_spec("filesystem")
    assert spec is not None
    tools = {t.name: t for t in _tools("filesystem")}
    driver = McpDriver(spec, ws, 0)
    try:
        root = f"{WORLD_SCRATCH}/filesystem"
        assert driver.told() == {"path": root}
        before = driver.state()
        assert before is not None and before["root"] == root and "notes.txt" in before["files"]
        listed = driver.call(tools["list_allowed_directories"], {})
        assert root in listed.text and driver.scratch not in listed.text
        wrote = driver.call(tools["write_file"], {"path": f"{root}/new.txt", "content": "hi\n"})
        assert not wrote.is_error, wrote.text
        after = driver.state()
        assert after is not None and after["files"]["new.txt"]["content"] == "hi\n"
        assert Path(driver.scratch, "filesystem", "new.txt").is_file()  # written live, in the launch's scratch
    finally:
        driver.close()
    assert not Path(driver.scratch).exists()  # the episode's scratch is removed


def _learned_live(tmp_path: Path, server: str, calls: int) -> Run:
    """`server` learned live from `calls` calls of seed 0, in a workspace of its own."""
    spec = manifest_spec(server)
    assert spec is not None
    cards = load_cards(Environment.resolve().category_cards)
    return learn_server_live(spec, _workspace(tmp_path, server), _tools(server), cards, calls=calls, seeds=(0,))


def test_a_real_servers_rules_are_learned_from_its_live_traffic(tmp_path: Path) -> None:
    run = _learned_live(tmp_path, "filesystem", calls=60)
    assert len(run.traffic.calls) == 60
    assert all(o.before is not None and o.before["root"] == f"{WORLD_SCRATCH}/filesystem" for o in run.traffic.calls)
    by_tool = {t.tool: t for t in run.learning.tools}
    writes = by_tool["write_file"]
    assert writes.source == "traffic" and writes.final.agree > writes.base.agree  # better than the card's rule
    assert writes.rule is not None and writes.rule.do  # a file written, learned from the state diff


def test_learn_writes_a_real_servers_file_keeps_a_corrected_one_and_refuses_a_bad_name(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "memory")
    out = tmp_path / "memory.learned.yaml"
    args = ["--workspace", str(ws.root), "world", "learn", "memory", "--calls", "40", "--seed", "0", "--out", str(out)]
    first = CliRunner().invoke(main.cli, args)
    assert first.exit_code == 0, first.output
    assert f"written to {out}" in first.output
    doc = yaml.safe_load(out.read_text())
    assert doc["server"] == "memory" and doc["learned"]["calls"] == 40
    doc["tools"]["read_graph"] = {"answer": "{'entities': []}"}  # a person's rule: the fingerprint no longer holds
    out.write_text("# corrected by hand\n" + yaml.safe_dump(doc, sort_keys=False))
    corrected = out.read_text()
    second = CliRunner().invoke(main.cli, args)
    assert second.exit_code == 0, second.output
    assert out.read_text() == corrected and Path(f"{out}.proposed").is_file()
    bad = CliRunner().invoke(main.cli, ["--workspace", str(ws.root), "world", "learn", "memroy"])
    assert isinstance(bad.exception, UsageError) and "did you mean memory?" in str(bad.exception)  # one line


def test_a_server_whose_state_cannot_be_read_still_teaches_its_checks(tmp_path: Path) -> None:
    run = _learned_live(tmp_path, "time", calls=40)
    assert all(o.before == {} and o.after is None for o in run.traffic.calls)  # no state: nothing known after
    convert = next(t for t in run.learning.tools if t.tool == "convert_time")
    assert convert.rule is not None and convert.final.agree > convert.base.agree
    assert any("args['time']" in str(step.fail) for step in convert.rule.check)  # the HH:MM form it refuses
