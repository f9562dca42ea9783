"""The offline real servers' worlds (cworld/engine/world/real.py) and their operation rules
(category_cards/_operations/{filesystem,memory,git,sqlite}.yaml): the world is the scratch a live launch
prepares, and the world engine answers on it as the live server does."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from registry_helpers import servers_cache

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.rules import RulesEngine
from cworld.engine.rules.spec import load_operations
from cworld.engine.world.base import World
from cworld.engine.world.build import world_now
from cworld.engine.world.real import WORLD_SCRATCH, launch_paths, manifest_spec, read_state, real_server_world
from cworld.environment import Environment, Workspace
from cworld.registry.install import entry_path
from cworld.registry.launch import LaunchContext, resolve
from cworld.registry.tools import recorded_tools

ROOT = f"{WORLD_SCRATCH}/filesystem"


@pytest.fixture(scope="module")
def setup() -> tuple[dict[str, Any], dict[str, ToolSpec], dict[str, Any]]:
    env = Environment.resolve()
    tools = {t.id: t for t in recorded_tools(env) if t.server in ("filesystem", "memory", "git", "sqlite")}
    return load_cards(env.category_cards), tools, load_operations(env.category_cards / "_operations")


class Engine:
    """The world engine over one real server's world, one session, answering by tool name."""

    def __init__(self, setup: tuple[dict[str, Any], dict[str, ToolSpec], dict[str, Any]], server: str, seed: int = 0):
        cards, tools, operations = setup
        self.server, self.tools = server, {t.name: t for t in tools.values() if t.server == server}
        world = World(seed=seed, now=world_now(seed), servers={server: real_server_world(server, seed)})
        self.engine = RulesEngine(cards, list(self.tools.values()), world=world, operations=operations)
        self.session = SessionLog(seed=seed)

    def __call__(self, name: str, **arguments: Any) -> ToolResult:
        result = self.engine.respond_sync(self.tools[name], arguments, self.session)
        self.session.record(self.tools[name].id, arguments, result)
        assert result.meta.get("rule") == "override", result
        return result


def _without_times(state: dict[str, Any]) -> dict[str, Any]:
    files = {path: {k: v for k, v in f.items() if k not in ("created", "modified")} for path, f in state["files"].items()}
    return {**state, "root": ROOT, "files": files}


def _live_filesystem(tmp_path: Path) -> Any:
    """The filesystem server launched as a live episode launches it (RealServerBackend), or a skip."""
    from cworld.controller.backends.real import RealServerBackend

    spec = manifest_spec("filesystem")
    assert spec is not None
    cache = servers_cache()
    entry = entry_path(spec, cache)
    if entry is None or not entry.is_file():
        pytest.skip("the real filesystem server is not installed (make setup)")
    ws = Workspace(tmp_path / "ws")
    ws.root.mkdir(parents=True)
    (ws.root / "servers").symlink_to(cache, target_is_directory=True)
    return RealServerBackend({"filesystem": spec}, ws, episode="test-world-real")


def test_the_filesystem_world_is_what_the_live_scratch_holds(tmp_path, setup):
    world = real_server_world("filesystem", 0)
    assert world is not None and world.source == "initial:filesystem" and world.state["root"] == ROOT
    assert sorted(world.state["files"]) == ["docs/readme.md", "move-me.txt", "notes.txt", "pixel.png"]
    assert world.state["directories"] == {"docs": {"parent": ""}}
    assert world.state["files"]["notes.txt"]["content"] == "first line\nsecond line\nthird line\n"
    assert real_server_world("filesystem", 0).state == world.state  # the same world every time
    assert real_server_world("weather", 0) is None

    backend = _live_filesystem(tmp_path)
    engine = Engine(setup, "filesystem")

    async def live() -> tuple[dict[str, Any], dict[str, str]]:
        await backend.open(0)
        try:
            tool = engine.tools["directory_tree"]
            # the scratch the backend launches the server on (made by its own launch context)
            ctx = LaunchContext(backend.workspace.root, backend.workspace.servers, backend.scratch_root)
            root = launch_paths("filesystem", resolve(manifest_spec("filesystem"), ctx))["root"]
            answers = {"tree": (await backend.call(tool, {"path": str(root)})).text}
            for path in world.state["files"]:
                read = await backend.call(engine.tools["read_text_file"], {"path": f"{root}/{path}"})
                answers[path] = read.structured_content["content"]
            return read_state("filesystem", {"root": root}), answers
        finally:
            await backend.close()

    state, answers = asyncio.run(live())
    assert _without_times(state) == _without_times(world.state)
    assert engine("directory_tree", path=ROOT).structured_content["content"] == answers["tree"]
    for path in world.state["files"]:
        assert engine("read_text_file", path=f"{ROOT}/{path}").structured_content["content"] == answers[path]


def test_a_write_to_a_missing_folder_and_a_read_of_a_missing_file_fail_as_live(tmp_path, setup):
    backend = _live_filesystem(tmp_path)
    engine = Engine(setup, "filesystem")
    calls = [("write_file", {"path": "nowhere/new.txt", "content": "x"}), ("read_text_file", {"path": "missing.txt"}),
             ("read_text_file", {"path": "/etc/hostname"}), ("read_text_file", {"path": "docs"}),
             ("list_directory", {"path": "notes.txt"}), ("move_file", {"source": "gone.txt", "destination": "new.txt"})]

    async def live() -> list[ToolResult]:
        await backend.open(0)
        try:
            return [await backend.call(engine.tools[name], args) for name, args in calls]
        finally:
            await backend.close()

    for (name, args), live_result in zip(calls, asyncio.run(live()), strict=True):
        synthesized = engine(name, **args)
        assert live_result.is_error and synthesized.is_error, (name, args, live_result.text, synthesized.text)
        assert synthesized.error_class == live_result.error_class, (name, args, live_result.text, synthesized.text)
        assert synthesized.text.split(":")[0] == live_result.text.split(":")[0]
    missing = engine("read_text_file", path=f"{ROOT}/missing.txt")
    assert missing.error_class == "not_found"
    assert missing.text == f"ENOENT: no such file or directory, open '{ROOT}/missing.txt'"
    assert engine("write_file", path=f"{ROOT}/nowhere/new.txt", content="x").error_class == "not_found"
    assert "nowhere/new.txt" not in engine.engine.end_state(engine.session).get("_world", {}).get("filesystem", {}).get(
        "files", {}).get("after", {})


def test_a_file_written_through_the_world_engine_reads_back(setup):
    engine = Engine(setup, "filesystem")
    wrote = engine("write_file", path=f"{ROOT}/docs/plan.md", content="# Plan\n\nship it\n")
    assert not wrote.is_error and wrote.structured_content == {"content": f"Successfully wrote to {ROOT}/docs/plan.md"}
    assert engine("read_text_file", path="docs/plan.md").structured_content == {"content": "# Plan\n\nship it\n"}
    assert engine("read_text_file", path=f"{ROOT}/docs/plan.md", head=1).structured_content == {"content": "# Plan"}
    assert engine("list_directory", path=f"{ROOT}/docs").structured_content == {"content": "[FILE] plan.md\n[FILE] readme.md"}
    assert engine("search_files", path=ROOT, pattern="**/*.md").structured_content == {
        "content": f"{ROOT}/docs/plan.md\n{ROOT}/docs/readme.md"}
    edited = engine("edit_file", path=f"{ROOT}/docs/plan.md", edits=[{"oldText": "ship it", "newText": "ship it today"}])
    assert not edited.is_error and "-ship it\n+ship it today" in edited.structured_content["content"]
    moved = engine("move_file", source=f"{ROOT}/docs/plan.md", destination=f"{ROOT}/plan.md")
    assert not moved.is_error
    assert engine("read_text_file", path=f"{ROOT}/plan.md").structured_content == {"content": "# Plan\n\nship it today\n"}
    assert engine("read_text_file", path=f"{ROOT}/docs/plan.md").error_class == "not_found"
    changed = engine.engine.end_state(engine.session)["_world"]["filesystem"]["files"]
    assert changed["after"]["plan.md"]["content"] == "# Plan\n\nship it today\n" and changed["after"]["plan.md"]["size"] == 22
    assert "docs/plan.md" not in changed["after"] and "docs/plan.md" not in changed["before"]


def test_a_memory_entity_created_is_found_and_a_search_without_match_finds_nothing(setup):
    assert real_server_world("memory", 0).state == {"entities": {}, "relations": {}}  # the graph starts empty
    engine = Engine(setup, "memory")
    made = engine("create_entities", entities=[{"name": "Ada Lovelace", "entityType": "person",
                                                "observations": ["wrote the first program"]}])
    assert made.structured_content == {"entities": [{"name": "Ada Lovelace", "entityType": "person",
                                                     "observations": ["wrote the first program"]}]}
    again = engine("create_entities", entities=[{"name": "Ada Lovelace", "entityType": "robot", "observations": []}])
    assert again.structured_content == {"entities": []}  # an entity that exists is not made again
    engine("create_relations", relations=[{"from": "Ada Lovelace", "to": "Charles Babbage", "relationType": "knows"}])
    found = engine("search_nodes", query="FIRST program")
    assert [e["name"] for e in found.structured_content["entities"]] == ["Ada Lovelace"]
    assert found.structured_content["relations"] == [{"from": "Ada Lovelace", "to": "Charles Babbage",
                                                      "relationType": "knows"}]
    assert engine("search_nodes", query="zeppelin").structured_content == {"entities": [], "relations": []}
    missing = engine("add_observations", observations=[{"entityName": "Nobody", "contents": ["x"]}])
    assert missing.is_error and missing.error_class == "not_found" and missing.text == "Entity with name Nobody not found"


def test_git_and_sqlite_worlds_are_their_scratch_and_answer_in_the_servers_text(setup):
    git = real_server_world("git", 0).state
    assert git["repo"] == f"{WORLD_SCRATCH}/git/repo" and git["head"] == {"branch": "main", "commit": None}
    assert list(git["index"]) == ["CHANGELOG.md", "README.md"] and len(git["commits"]) == 1
    engine = Engine(setup, "git")
    repo = git["repo"]
    assert engine("git_status", repo_path=repo).text.startswith("Repository status:\nOn branch main\nChanges to be committed")
    committed = engine("git_commit", repo_path=repo, message="Add changelog")
    assert committed.text.startswith("Changes committed successfully with hash ")
    assert engine("git_commit", repo_path=repo, message="again").error_class == "business"
    assert engine("git_status", repo_path="/tmp").error_class == "business"

    sqlite = real_server_world("sqlite", 0).state
    assert list(sqlite["tables"]) == ["items"] and len(sqlite["tables"]["items"]["rows"]) == 3
    db = Engine(setup, "sqlite")
    assert db("write_query", query="INSERT INTO items (name, qty) VALUES ('gear', '7')").text == "[{'affected_rows': 1}]"
    assert db("read_query", query="SELECT name, qty FROM items WHERE qty < 10 ORDER BY qty").text == (
        "[{'name': 'washer', 'qty': 5}, {'name': 'gear', 'qty': 7}]")
    assert db("read_query", query="SELECT * FROM nope").text == "Database error: no such table: nope"
