"""`registry show --harvest` stays readable on a narrow terminal: the counts never collapse away."""

from __future__ import annotations

from rich.console import Console

from cworld.registry.harvest.report import harvest_tables

SUMMARY = {
    "servers_ok": 1, "servers_tried": 2, "tools": 21,
    "servers": [
        {"id": "agent-infra-mcp-server-browser", "registry": "npm", "category": "browser", "status": "ok",
         "tools": 21, "failure": "", "detail": ""},
        {"id": "playwright-mcp-server", "registry": "npm", "category": "browser", "status": "failed",
         "tools": 0, "failure": "handshake_timeout", "detail": "no answer\nto initialize\n  after 30 s"},
    ],
    "categories": {"browser": 1}, "failures": {"handshake_timeout": 1},
}


def render(width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    for table in harvest_tables(SUMMARY, width):
        console.print(table)
    return console.export_text()


def test_narrow_terminal_keeps_every_count_and_status() -> None:
    text = render(80)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "│    21 │" in text and "handshake_timeout" in text and "note" not in text


def test_wide_terminal_shows_the_failure_note_on_one_line() -> None:
    text = render(160)
    assert "no answer to initialize after 30 s" in text
