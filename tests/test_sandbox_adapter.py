"""The sandbox adapter: one MCP server per (session, app), with the call rules every app shares.

A tiny app defined here (not discovered by the catalog) exercises each rule through a real
`mcp.Client`; the serving tests start `cworld sandbox serve` over stdio and HTTP.
"""

from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import time
from typing import Annotated, Any

import mcp
import pytest
from click.testing import CliRunner
from pydantic import BaseModel, Field

from cworld.sandbox.framework import AppError, Prerequisite, SandboxApp, SandboxSession, tool
from cworld.sandbox.framework.server import build_all, build_server, tool_specs
from cworld.sandbox.framework.specs import app_prerequisites, unknown_prerequisite_tools


class Item(BaseModel):
    item_id: str
    name: str


class ItemList(BaseModel):
    items: list[Item]


class Vault(SandboxApp):
    name = "vault"
    description = "A toy store of items."
    category = "test"
    prerequisites = (
        Prerequisite("list_items", "remove_item", "produces", via="item_id"),
        Prerequisite("open_vault", "clock/now", "requires"),
    )

    def initial_state(self, rng: random.Random) -> dict[str, Any]:
        return {"items": {f"i{n}": {"item_id": f"i{n}", "name": rng.choice(["pen", "cup", "key"])} for n in range(3)}}

    @tool(read_only=True)
    def list_items(self, prefix: Annotated[str, Field(description="name prefix")] = "") -> ItemList:
        """List items whose name starts with a prefix."""
        return ItemList(items=[Item(**i) for i in self.state["items"].values() if i["name"].startswith(prefix)])

    @tool(read_only=False)
    def add_item(self, name: Annotated[str, Field(min_length=1, description="item name")],
                 copies: Annotated[int, Field(ge=1, le=3, description="how many")] = 1) -> ItemList:
        """Add copies of an item; more than two copies of 'cup' is a business error after writing."""
        added = []
        for _ in range(copies):
            rec = {"item_id": self.new_id("item"), "name": name}
            self.state["items"][rec["item_id"]] = rec
            added.append(Item(**rec))
        if name == "cup" and copies > 2:
            raise AppError("limit", "at most two cups; add fewer")
        return ItemList(items=added)

    @tool(read_only=False, destructive=True, idempotent=True)
    def remove_item(self, item_id: Annotated[str, Field(description="id from list_items")]) -> Item:
        """Remove an item."""
        rec = self.state["items"].pop(item_id, None)
        if rec is None:
            raise AppError("not_found", f"no item '{item_id}'; use list_items to find the id")
        return Item(**rec)

    @tool(read_only=False)
    def open_vault(self) -> int:
        """A tool with a bug: it writes, then crashes."""
        self.state["items"].clear()
        return 1 // 0


@pytest.fixture
def session() -> SandboxSession:
    return SandboxSession(seed=7, apps=[Vault])


async def test_lists_tools_with_schemas_and_true_annotations(session: SandboxSession) -> None:
    async with mcp.Client(build_server(session, "vault")) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"list_items", "add_item", "remove_item", "open_vault"}
    listing, remove = tools["list_items"], tools["remove_item"]
    assert listing.description == "List items whose name starts with a prefix."
    assert listing.annotations.read_only_hint is True and listing.annotations.idempotent_hint is True
    assert remove.annotations.destructive_hint is True and remove.annotations.read_only_hint is False
    assert remove.annotations.open_world_hint is False
    assert remove.input_schema["properties"]["item_id"]["description"] == "id from list_items"
    assert remove.input_schema["additionalProperties"] is False
    assert listing.output_schema["properties"]["items"]["type"] == "array"
    assert tools["open_vault"].output_schema["properties"]["result"]["type"] == "integer"


async def test_success_returns_structured_content_and_ticks_the_clock(session: SandboxSession) -> None:
    start = session.clock.now()
    async with mcp.Client(build_server(session, "vault")) as client:
        result = await client.call_tool("add_item", {"name": "lamp", "copies": 2})
    assert not result.is_error
    assert [i["item_id"] for i in result.structured_content["items"]] == ["item_0001", "item_0002"]
    assert session.calls == 1 and (session.clock.now() - start).total_seconds() == 20
    assert session.state["vault"]["items"]["item_0002"]["name"] == "lamp"


async def test_business_error_is_actionable_and_changes_nothing(session: SandboxSession) -> None:
    before = session.snapshot()
    async with mcp.Client(build_server(session, "vault")) as client:
        missing = await client.call_tool("remove_item", {"item_id": "zz"})
        partial = await client.call_tool("add_item", {"name": "cup", "copies": 3})
        after_error = session.snapshot()
        ok = await client.call_tool("add_item", {"name": "cup"})
    assert missing.is_error and missing.content[0].text == "not_found: no item 'zz'; use list_items to find the id"
    assert missing.meta["cworld"] == {"error_class": "not_found", "kind": "not_found"}
    assert partial.is_error and partial.meta["cworld"]["error_class"] == "business"
    assert after_error == before  # the two items written before the error were rolled back
    assert ok.structured_content["items"][0]["item_id"] == "item_0001"  # id counters rolled back too


async def test_schema_invalid_arguments_name_the_field_and_change_nothing(session: SandboxSession) -> None:
    before, clock = session.snapshot(), session.clock.now()
    async with mcp.Client(build_server(session, "vault")) as client:
        wrong_type = await client.call_tool("add_item", {"name": "lamp", "copies": "many"})
        out_of_range = await client.call_tool("add_item", {"name": "lamp", "copies": 9})
        missing = await client.call_tool("add_item", {})
        unknown = await client.call_tool("add_item", {"name": "lamp", "colour": "red"})
    for result, field in ((wrong_type, "copies"), (out_of_range, "copies"), (missing, "name"), (unknown, "colour")):
        assert result.is_error and result.meta["cworld"]["error_class"] == "invalid_args"
        assert result.content[0].text.startswith("invalid_args: add_item:") and field in result.content[0].text
    assert session.snapshot() == before and session.clock.now() == clock and session.calls == 0


async def test_crash_is_an_internal_error_result_and_is_rolled_back(session: SandboxSession) -> None:
    before = session.snapshot()
    async with mcp.Client(build_server(session, "vault")) as client:
        crashed = await client.call_tool("open_vault", {})
        still_alive = await client.call_tool("list_items", {})
    assert crashed.is_error
    assert crashed.content[0].text.startswith("internal error in vault/open_vault: ZeroDivisionError")
    assert crashed.meta["cworld"]["error_class"] == "server_crash"
    assert session.snapshot() == before and len(still_alive.structured_content["items"]) == 3


async def test_unknown_tool_is_an_error_result(session: SandboxSession) -> None:
    async with mcp.Client(build_server(session, "vault")) as client:
        result = await client.call_tool("explode", {})
    assert result.is_error and "has no tool 'explode'" in result.content[0].text
    assert "list_items" in result.content[0].text


def test_servers_of_one_session_share_its_state() -> None:
    from cworld.sandbox.apps.clock import ClockApp

    session = SandboxSession(seed=3, apps=[Vault, ClockApp])
    servers = build_all(session)
    assert set(servers) == {"vault", "clock"}
    servers["vault"].call_tool_sync("remove_item", {"item_id": "i0"})
    now = servers["clock"].call_tool_sync("now", {"timezone": "UTC"}).structured_content
    assert "i0" not in session.state["vault"]["items"] and session.calls == 2
    assert now["utc"] == session.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")


def test_tool_specs_match_the_listed_tools_without_a_server() -> None:
    specs = {s.name: s for s in tool_specs(Vault)}
    server = build_server(SandboxSession(seed=0, apps=[Vault]), "vault")
    listed = {t.name: t for t in server._tool_manager.list_tools()}
    assert set(specs) == set(listed)
    remove = specs["remove_item"]
    assert remove.id == "vault/remove_item" and remove.category == "test"
    assert remove.server_kind == "sandbox" and remove.availability == "live"
    assert remove.annotations.destructive_hint and remove.annotations.idempotent_hint
    assert remove.input_schema == listed["remove_item"].parameters
    assert specs["list_items"].output_schema == listed["list_items"].output_schema


def test_prerequisites_become_tool_ids_and_unknown_ends_are_found() -> None:
    edges = app_prerequisites(Vault)
    assert (edges[0].before, edges[0].after, edges[0].via) == ("vault/list_items", "vault/remove_item", "item_id")
    assert edges[1].after == "clock/now"
    assert unknown_prerequisite_tools(Vault) == ["clock/now"]
    assert unknown_prerequisite_tools(Vault, {"clock/now"}) == []


# --- serving ---------------------------------------------------------------------------
CLI = [sys.executable, "-c", "from cworld.cli.main import main; main()"]


async def test_stdio_server_answers_list_tools_and_a_call() -> None:
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "sandbox", "serve", "mail", "--seed", "5"])
    async with mcp.Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        page = await client.call_tool("list_messages", {"folder": "drafts"})
        bad = await client.call_tool("delete_forever", {"message_id": "mail_0001"})
    assert {"send_email", "search_contacts", "reply_to_message"} <= names
    assert page.structured_content["total"] >= 1
    assert bad.is_error and bad.content[0].text.startswith(("precondition:", "not_found:"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_http_server_binds_localhost_and_serves() -> None:
    port = _free_port()
    proc = subprocess.Popen([*CLI, "sandbox", "serve", "clock", "--transport", "http", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        async with mcp.Client(f"http://127.0.0.1:{port}/mcp") as client:
            result = await client.call_tool("now", {"timezone": "Asia/Tokyo"})
        assert result.structured_content["timezone"] == "Asia/Tokyo"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_cli_list_json_counts_tools() -> None:
    from cworld.cli.main import cli

    result = CliRunner().invoke(cli, ["sandbox", "list", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.output)}
    assert rows["mail"]["kind"] == "stateful" and rows["mail"]["tools"] >= 12
    assert rows["clock"]["tools"] >= 6


def test_cli_serve_unknown_app_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    from cworld.cli.main import main

    with pytest.raises(SystemExit) as exit_info:
        main(["sandbox", "serve", "nosuchapp"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "no sandbox app 'nosuchapp'" in err and "mail" in err
