"""`benchmarks/world_invariants.py` on three small harvested servers: figures well formed and sane."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import world_invariants as wi  # noqa: E402

from cworld.data_model import ToolResult, ToolSpec  # noqa: E402

SERVERS = ["apple-calendar-mcp", "mcp-google-drive", "takescake-1password-mcp"]


def test_invariants_on_three_servers(tmp_path: Path) -> None:
    out = tmp_path / "invariants.json"
    assert wi.main(["--servers", *SERVERS, "--seed", "0", "--quiet", "--examples", "1",
                    "--workspace", str(tmp_path / "ws"), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    overall = data["overall"]
    assert overall["servers"] == 3 and overall["tools_tested"] == overall["tools"] > 0
    assert set(data["servers"]) == set(SERVERS)
    checks = overall["checks"]
    assert set(checks) == set(wi.CHECKS)
    for name, figures in checks.items():
        assert 0 <= figures["holds"] <= figures["applicable"], name
        assert figures["share"] is None or 0.0 <= figures["share"] <= 1.0, name
        assert figures["not_applicable"] == sum(figures["not_applicable_reasons"].values()), name
        assert sum(figures["failure_reasons"].values()) == figures["applicable"] - figures["holds"], name
    for name, figures in overall["subs"].items():
        assert 0 <= figures["holds"] <= figures["applicable"] and 0.0 <= (figures["share"] or 0.0) <= 1.0, name
    assert checks["unknown_id"]["applicable"] > 0
    assert checks["determinism"]["applicable"] > 0 and checks["determinism"]["share"] == 1.0
    origins = overall["origins"]
    assert origins and abs(sum(o["share"] for o in origins.values()) - 1.0) < 1e-9
    assert all(0.0 <= o["share"] <= 1.0 for o in origins.values())
    assert sum(o["answers"] for o in origins.values()) == overall["answers"] > 0
    # the cards partition the servers and the instances
    cards = data["cards"].values()
    assert sum(c["servers"] for c in cards) == 3
    for name in wi.CHECKS:
        assert sum(c["checks"][name]["applicable"] for c in cards) == checks[name]["applicable"]
    for name, split in overall["by_origin"].items():
        assert sum(v["applicable"] for v in split.values()) == checks[name]["applicable"]


def test_heuristics() -> None:
    def tool(name: str, props: dict, required: tuple[str, ...] = ()) -> ToolSpec:
        return ToolSpec(server="s", name=name, input_schema={"type": "object", "properties": props,
                                                             "required": list(required)})

    assert wi.name_noun(tool("get_cards_by_list_id", {}), None, "x") == "card"
    assert wi.name_noun(tool("list_testcase_comments", {}), None, "x") == "comment"
    assert wi.name_noun(tool("sb_book", {}), "sb", "x") == "book"
    assert wi.name_noun(tool("get_booking_details", {}), None, "x") == "booking"
    paged = tool("list_things", {"page": {"type": "integer", "minimum": 0, "default": 0}, "limit": {"type": "integer"}})
    assert wi.paging_arg(paged) == ("number", "page", 0)
    dated = tool("list_things", {"from": {"type": "string", "format": "date"}, "cursor": {"type": "string"}})
    assert wi.paging_arg(dated) == ("cursor", "cursor", None)  # `from` as a date is no offset
    assert wi.found_items(ToolResult.ok({"items": [], "total": 0})) is None
    assert wi.found_items(ToolResult.ok({"items": [], "total": 12})) == "no items but a total > 0"
    assert wi.found_items(ToolResult.ok({"results": [{"id": 1}]})) == "items"
    assert wi.found_items(ToolResult.ok(None, text="No results found.")) is None


def test_rows_written_as_pythons_repr_are_read_as_items() -> None:
    """The sqlite server answers `str(rows)`; its rows are items, and prose is none."""
    rows = ToolResult.ok(None, text="[{'id': 1, 'name': 'Ada'}, {'id': 2, 'name': None}]")
    assert wi.items_of(rows) == [{"id": 1, "name": "Ada"}, {"id": 2, "name": None}]
    assert wi.identities(rows) == ["1", "2"]
    assert wi.items_of(ToolResult.ok(None, text="[not a list, just prose")) is None
