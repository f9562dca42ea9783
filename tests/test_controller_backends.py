"""Backends behind the controller: live (sandbox in process, real servers per episode), synthesized, hybrid."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

from cworld.controller import StateController, build_controller
from cworld.controller.backends import (
    EngineBackend,
    HybridBackend,
    LiveBackend,
    RealServerBackend,
    SandboxBackend,
)
from cworld.controller.policy import FaultRule, Policy
from cworld.data_model import ServerSpec, Task, ToolResult, ToolSpec
from cworld.engine.protocol import SessionLog
from cworld.engine.rules import RulesEngine
from cworld.environment import Environment, Workspace
from cworld.errors import ModelError
from cworld.registry.tools import sandbox_tools
from cworld.sandbox.statediff import sandbox_initial_state

ENV = Environment.resolve()
TOOLS = sandbox_tools()
TOY = Path(__file__).parent / "fixtures" / "mcp_servers" / "toy_server.py"
TASK = Task(id="ctl-backends", query="q", tools=["mail/list_messages", "toy/echo"])
NONE = Policy(name="none")

CATALOG_TOOL = ToolSpec(
    server="crm", name="create_lead", description="Create a sales lead.", availability="schema-only",
    server_kind="catalog", category="generic",
    input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
)


def toy_tool(name: str, properties: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(server="toy", name=name, server_kind="real",
                    input_schema={"type": "object", "properties": properties or {}})


def toy_backend(tmp_path: Path) -> RealServerBackend:
    spec = ServerSpec(id="toy", kind="real", command=sys.executable, args=[str(TOY)],
                      env={"TOY_SCRATCH": "{scratch}"}, timeout_s=20)
    return RealServerBackend({"toy": spec}, Workspace(tmp_path / "ws"), episode="ctl-test")


CALLS = [("mail/list_messages", {}), ("mail/star_message", {"message_id": "mail_0002", "starred": True}),
         ("mail/get_message", {"message_id": "mail_0002"}), ("mail/get_message", {"message_id": "nope"}),
         ("calendar/list_events", {"page_size": 3})]


async def test_direct_and_mcp_sandbox_paths_agree() -> None:
    results, states = [], []
    for via in ("direct", "mcp"):
        backend = SandboxBackend(via=via)  # type: ignore[arg-type]
        await backend.open(4)
        results.append([await backend.call(TOOLS[t], a) for t, a in CALLS])
        states.append(await backend.end_state())
        await backend.close()
    direct, mcp = results
    assert [(r.structured_content, r.is_error, r.text) for r in direct] == [
        (r.structured_content, r.is_error, r.text) for r in mcp]
    assert direct[3].error_class == mcp[3].error_class == "not_found"
    assert states[0] == states[1] and states[0]["mail"]["messages"]["mail_0002"]["starred"] is True


async def test_each_episode_gets_a_fresh_sandbox_session(tmp_path: Path) -> None:
    c = build_controller(TASK, mode="live", policy="none", seed=2, agent="a", env=ENV,
                         workspace=Workspace(tmp_path), tools=TOOLS)
    await c.open()
    start = await c.end_state()
    await c.call(TOOLS["mail/star_message"], {"message_id": "mail_0002", "starred": True}, turn=1)
    assert await c.end_state() != start
    await c.open()  # a gym-style reset: same seed, the seeded start again
    assert await c.end_state() == start
    await c.close()


async def test_live_mode_refuses_schema_only_tools() -> None:
    backend = LiveBackend(SandboxBackend())
    await backend.open(1)
    out = await backend.call(CATALOG_TOOL, {"name": "Ana"})
    assert out.error_class == "unavailable" and "synthesized or hybrid" in out.text


async def test_synthesized_mode_uses_the_world_engine_and_is_deterministic(tmp_path: Path) -> None:
    """The default engine is the world engine: a sandbox tool is an operation on the seed's world (its records,
    by its card's rules), a tool the world holds nothing for is the schema engine's, marked simulated."""
    live = SandboxBackend()
    await live.open(3)
    listed_live = await live.call(TOOLS["mail/list_messages"], {})
    answers = []
    for _ in range(2):
        c = build_controller(TASK, mode="synthesized", policy="none", seed=3, agent="a", env=ENV,
                             workspace=Workspace(tmp_path), tools=TOOLS)
        assert isinstance(c.backend, EngineBackend) and isinstance(c.backend.engine, RulesEngine)
        await c.open()
        outs = [await c.call(TOOLS["mail/list_messages"], {}, turn=1),
                await c.call(CATALOG_TOOL, {"name": "Ana"}, turn=2)]
        answers.append([o.observation.model_dump(exclude={"meta"}) for o in outs])
        assert all(o.observation.meta["source"] == "engine" for o in outs)
        listed, lead = (o.observation for o in outs)
        assert listed.meta["rule"] in ("family", "inferred")  # what any mail server gets (issue 32)
        shown = {m["message_id"] for m in listed.structured_content["messages"]}  # type: ignore[index]
        assert shown and shown <= {m["message_id"] for m in listed_live.structured_content["messages"]} | \
            set(sandbox_initial_state(3)["mail"]["messages"])  # the seed's records, none made up
        assert lead.meta["simulated"] is True and not lead.is_error
        assert await c.end_state() == sandbox_initial_state(3)  # the seed's world, full; reads change nothing
    assert answers[0] == answers[1]


class DownEngine:
    name = "down"

    async def respond(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult:
        raise ModelError("engine model unreachable: connection refused")


async def test_an_engine_that_is_down_is_an_infra_error_not_the_agents() -> None:
    c = StateController(EngineBackend(DownEngine()), task=TASK, policy=NONE, agent="a", tools=TOOLS)
    await c.open(1)
    out = await c.call(CATALOG_TOOL, {"name": "Ana"}, turn=1)
    assert out.infra and out.observation.error_class == "infra" and c.infra_errors == [out.observation]


class FallingBackEngine:
    """Answers like the LLM engine does when it had to fall back to the schema engine."""

    name = "llm"

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def respond(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult:
        return ToolResult.ok({"id": "lead_1"}, source="engine", fallback=True, fallback_reason=self.reason)


async def test_engine_model_down_is_infra_but_an_unusable_answer_is_not() -> None:
    outcomes = []
    for reason in ("model error: APIConnectionError: connection refused", "invalid response: not JSON"):
        backend = EngineBackend(FallingBackEngine(reason))
        await backend.open(1)
        outcomes.append(await backend.call(CATALOG_TOOL, {"name": "Ana"}))
    down, unusable = outcomes
    assert down.is_infra_error and "model error" in down.text
    assert not unusable.is_error and unusable.structured_content == {"id": "lead_1"}


async def test_hybrid_routes_live_tools_live_and_schema_only_tools_to_the_engine(tmp_path: Path) -> None:
    c = build_controller(TASK, mode="hybrid", policy="none", seed=3, agent="a", env=ENV,
                         workspace=Workspace(tmp_path), tools=TOOLS)
    assert isinstance(c.backend, HybridBackend) and isinstance(c.backend.engine.engine, RulesEngine)
    await c.open()
    live = await c.call(TOOLS["mail/list_messages"], {}, turn=1)
    simulated = await c.call(CATALOG_TOOL, {"name": "Ana"}, turn=2)
    assert live.observation.meta["source"] == "live" and simulated.observation.meta["source"] == "engine"
    assert simulated.observation.meta["simulated"] is True  # no world holds a crm: the schema engine answers
    assert await c.end_state() == sandbox_initial_state(3)  # the live sandbox snapshot, nothing written


async def test_real_server_killed_mid_episode_is_infra_and_episodes_get_fresh_scratch(tmp_path: Path) -> None:
    """One test, because every start of a real server costs seconds: crash, restart, then a second episode."""
    real = toy_backend(tmp_path)
    truncate_early = Policy(name="t", faults={"truncated": FaultRule(budget=1, turns=(1, 1),
                                                                    params={"max_chars": 20, "min_chars": 5})})
    c = StateController(LiveBackend(SandboxBackend(), real), task=TASK, policy=truncate_early, agent="a", tools=TOOLS)
    echo = toy_tool("echo", {"text": {"type": "string"}})
    await c.open(1)
    try:
        pid = int((await c.call(toy_tool("pid"), {}, turn=1)).raw.text)  # type: ignore[union-attr]
        assert c.fault_report().unfired  # a pid is too short to truncate: the fault waits
        first_scratch = real.scratch_root
        slow = asyncio.create_task(c.call(toy_tool("slow", {"seconds": {"type": "number"}}), {"seconds": 10}, turn=2))
        await asyncio.sleep(0.4)
        os.kill(pid, signal.SIGKILL)
        crashed = await slow
        again = await c.call(echo, {"text": "back after a restart, and long enough to cut"}, turn=3)
        restarts, infra_seen = real.connections["toy"].restarts, list(c.infra_errors)
        await c.open(2)
        second = await c.call(echo, {"text": "episode two"}, turn=1)
        second_scratch_ok = real.scratch_root is not None and (real.scratch_root / "toy" / "notes.txt").is_file()
    finally:
        await c.close()
    assert crashed.infra and crashed.observation.error_class == "server_crash" and crashed.interventions == []
    assert infra_seen == [crashed.observation]
    assert restarts == 1 and "[truncated:" in again.observation.text  # the deferred fault fired on a good call
    assert c.infra_errors == [] and not second.observation.is_error  # a new episode starts clean
    assert first_scratch is not None and real.scratch_root is not None and first_scratch != real.scratch_root
    assert "-s1-" in first_scratch.name and not first_scratch.exists()  # removed when its episode closed
    assert second_scratch_ok
