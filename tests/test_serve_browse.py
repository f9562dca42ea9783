"""`cworld serve` outside an episode: `search_tools` browses the whole built registry; no tool runs there
(running a tool is an episode's business, through the state controller)."""

from __future__ import annotations

import asyncio
import shutil

import pytest
from mcp import Client
from registry_helpers import make_environment
from serve_helpers import FIXTURE

from cworld.data_model import Task, read_jsonl
from cworld.environment import Environment, Workspace
from cworld.judges import JudgeContent, JudgeSetup
from cworld.registry.build import build_registry
from cworld.registry.tools import environment_tools
from cworld.rollout import RolloutContext
from cworld.serve import EpisodeService, RegistryBrowse, build_server


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("browse")
    servers = [{"id": "units", "kind": "sandbox", "transport": "memory", "app": "units"},
               {"id": "crm", "kind": "catalog", "transport": "catalog", "catalog": "helio_crm.json"}]
    env = make_environment(root / "env", servers)
    shutil.copy(Environment.resolve().registry / "catalogs" / "helio_crm.json", env.registry)
    ws = Workspace(root / "ws")
    ws.root.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CWORLD_EMBED_MODEL", "hash")
        asyncio.run(build_registry(env, ws))
    return env, ws


async def test_search_tools_browses_the_registry_outside_an_episode(built, monkeypatch, tmp_path):
    monkeypatch.setenv("CWORLD_EMBED_MODEL", "hash")
    env, ws = built
    ctx = RolloutContext(env, ws, environment_tools(env, ws).episode())
    service = EpisodeService(ctx, read_jsonl(FIXTURE, Task), tmp_path / "run",
                             judges=JudgeSetup(JudgeContent.from_environment(), tools=ctx.tools))
    browse = RegistryBrowse.of(ws)
    assert browse is not None and RegistryBrowse.of(Workspace(tmp_path / "unbuilt")) is None
    async with Client(build_server(service, browse), mode="legacy") as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["list_tasks", "start_episode", "search_tools"]
        found = await client.call_tool("search_tools", {"query": "convert a length from kilometers to miles", "k": 5})
        assert "units/convert_length" in [t["tool"] for t in found.structured_content["tools"]]
        empty = await client.call_tool("search_tools", {"query": "  "})
        assert empty.is_error and "needs a query" in empty.content[0].text
        outside = await client.call_tool("units__convert_length", {"value": 5})
        assert outside.is_error and "start_episode" in outside.content[0].text
