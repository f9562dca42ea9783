"""`cworld engine cards|try` and `cworld forge` through the real entry point (errors: one line, exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cworld.cli import main as cli_main
from cworld.llm import mock

GOOD_TOOL = {
    "name": "list_stations", "description": "List charging stations near a place, nearest first.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string", "description": "city name"}},
                     "required": ["city"]},
    "output_schema": {"type": "object", "properties": {"stations": {"type": "array", "items": {"type": "object",
                      "properties": {"station_id": {"type": "string"}, "name": {"type": "string"}}}}},
                      "required": ["stations"]},
    "annotations": {"read_only_hint": True},
}


@pytest.fixture(autouse=True)
def commands(monkeypatch: pytest.MonkeyPatch, workspace_dir: Path) -> None:
    """The lead registers these in main.py; the tests register them the same way."""
    for name, module in (("engine", "engine"), ("forge", "forge"), ("llm", "llm_local")):
        monkeypatch.setitem(cli_main.COMMANDS, name, module)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        cli_main.main(list(argv))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_cards_coverage_leaves_no_live_tool_uncategorized(capsys) -> None:
    code, out, _ = run(capsys, "engine", "cards", "--json")
    report = json.loads(out)
    assert code == 0 and report["uncategorized"] == 0 and report["tools"] > 350
    assert report["cards"]["email"]["servers"] == ["mail"] and report["cards"]["crm"]["tools"] >= 1
    code, out, _ = run(capsys, "engine", "cards")
    assert code == 0 and "uncategorized (generic by fallback): 0" in out


def test_try_reports_whether_the_answer_validates(capsys) -> None:
    code, out, _ = run(capsys, "engine", "try", "mail/get_message", "--args", '{"message_id": "mail_0002"}', "--json")
    report = json.loads(out)
    assert code == 0 and report["validates"] is True and report["validated_against"] == "output_schema"
    assert report["result"]["structured_content"]["message_id"] == "mail_0002"
    code, out, _ = run(capsys, "engine", "try", "git/git_log", "--args", '{"repo_path": "/r"}')
    assert code == 0 and "Commit: " in out and "validates (card_pattern:text)" in out


def test_try_with_a_session_file_continues_it(capsys, tmp_path: Path) -> None:
    session = tmp_path / "session.json"
    args = '{"name": "Zed", "email": "zed@x.example"}'
    assert run(capsys, "engine", "try", "mail/add_contact", "--args", args, "--session", str(session), "--record")[0] == 0
    assert len(json.loads(session.read_text())["entries"]) == 1
    code, out, _ = run(capsys, "engine", "try", "mail/get_contact", "--args", '{"contact_id": "contact_0007"}',
                       "--session", str(session), "--json")
    assert code == 0 and json.loads(out)["result"]["structured_content"]["name"] == "Zed"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["engine", "try", "mail/get_message", "--args", "{bad"], "error: --args is not valid JSON"),
        (["engine", "try", "mail/get_message", "--args", "[1]"], "error: --args must be a JSON object"),
        (["engine", "try", "mail/get_mesage"], "did you mean mail/get_message"),
        (["engine", "try", "nonsense"], "is not SERVER/TOOL"),
        (["engine", "try", "mail/get_message", "--engine", "llm"], "set CWORLD_ENGINE_MODEL"),
        (["forge", "EV charging app", "--category", "nope", "--out", "x.json"], "no category card 'nope'"),
        (["forge", "EV charging app", "--category", "travel", "--out", "x.json"], "set CWORLD_SYNTH_MODEL"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(capsys, argv: list[str], expected: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and expected in err and len(err.strip().splitlines()) == 1 and out == ""


def test_forge_writes_a_catalog_the_engine_runs(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = {"tools": [{**GOOD_TOOL, "name": "List Stations"}]}  # not snake_case: sent back for repair
    good = {"tools": [GOOD_TOOL, {**GOOD_TOOL, "name": "get_station", "description": "One station by its id.",
                                  "input_schema": {"type": "object", "properties": {"station_id": {"type": "string"}},
                                                   "required": ["station_id"]}, "output_schema": None}]}
    monkeypatch.setenv("CWORLD_SYNTH_MODEL", "mock/forge_test")
    out_file = tmp_path / "catalogs" / "ev_charge.json"
    with mock.script("forge_test", [json.dumps(bad), json.dumps(good)]) as script:
        code, out, err = run(capsys, "forge", "An EV charging network", "--category", "travel", "--out", str(out_file),
                             "--json")
    assert code == 0, err
    assert "snake_case" in script.calls[1].messages[-1]["content"]
    written: list[dict[str, Any]] = json.loads(out_file.read_text())
    assert [t["name"] for t in written] == ["list_stations", "get_station"]
    assert set(written[0]) == {"name", "description", "input_schema", "output_schema", "annotations", "category"}
    report = json.loads(out)
    assert report["schema_engine"]["list_stations"] == "ok" and report["manifest_entry"]["id"] == "ev-charge"
    assert not list(out_file.parent.glob(".*"))  # no temporary file left behind
