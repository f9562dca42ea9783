"""A family rule fits only the tools it can run: on harvested servers whose reads once met the task board's card
families without the record those families show, every tool answers (an error is data), never an internal error."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cworld.controller.factory import world_engine
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.environment import Environment, Workspace
from cworld.registry.tools import environment_tools
from cworld.schemas.realistic import value_for_schema

#: linear's `getNotifications()`, confluence's `get_spaces()` (a get with no id met a family about the record
#: found), trello's `get_acceptance_criteria()` (the card's id optional and not given)
SERVERS = ("tacticlaunch-mcp-linear", "better-confluence-mcp", "delorenj-mcp-server-trello")


@pytest.mark.parametrize("with_required", [True, False])
def test_no_tool_of_these_servers_meets_an_internal_error(tmp_path: Path, with_required: bool) -> None:
    env = Environment.resolve()
    ws = Workspace(tmp_path)
    tools = [t for t in environment_tools(env, ws).harvested if t.server in SERVERS]
    assert {t.server for t in tools} == set(SERVERS)
    engine = world_engine(env, ws, tools, load_cards(env.category_cards), by_server=True)
    rng = random.Random(0)
    crashed = []
    for tool in tools:
        props = tool.input_schema.get("properties") or {}
        args = {name: value_for_schema(props.get(name) or {}, rng, field=name)
                for name in (tool.input_schema.get("required") or [])} if with_required else {}
        result = engine.respond_sync(tool, args, SessionLog(seed=0))
        if result.is_error and "internal error" in result.text:
            crashed.append(f"{tool.id}: {result.text[:120]}")
    assert not crashed, crashed
