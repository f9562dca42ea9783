"""Every engine answer says where it came from (issue 32): a per-tool rule (`override`), a card's family rule,
an inferred rule, nothing (`simulated`), the tool's own implementation (`computed`) or the input schema; the
shares appear in the run summary, `cworld fidelity` and the report's drill-down."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from cworld.cli.main import cli
from cworld.data_model import ToolResult
from cworld.engine.origin import ORIGINS, answer_origin, origin_shares

FIXTURE = Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl"


@pytest.mark.parametrize("meta, error, origin", [
    ({"source": "engine", "engine": "world", "rule": "override"}, None, "override"),
    ({"source": "engine", "engine": "world", "rule": "family"}, None, "family"),
    ({"source": "engine", "engine": "world", "rule": "inferred"}, "not_found", "inferred"),
    ({"source": "engine", "engine": "llm", "world": "inferred"}, None, "inferred"),
    ({"source": "engine", "engine": "world", "simulated": True, "rule": "inferred"}, None, "simulated"),
    ({"source": "engine", "engine": "schema"}, None, "simulated"),
    ({"source": "engine", "engine": "pure", "computed": True}, None, "computed"),
    ({"source": "engine", "engine": "world"}, "invalid_args", "input"),
    ({"source": "live"}, None, None),
    ({"source": "fault"}, "timeout", None),
])
def test_each_answer_has_one_origin(meta: dict, error: str | None, origin: str | None) -> None:
    result = ToolResult.error(error, "x", **meta) if error else ToolResult.ok({}, **meta)  # type: ignore[arg-type]
    assert answer_origin(result) == origin


def test_shares_are_in_a_fixed_order_and_add_up() -> None:
    line = origin_shares(Counter({"simulated": 1, "inferred": 2, "computed": 1}))
    assert line == "inferred 50% · simulated 25% · computed 25% (4 answers)"
    assert origin_shares(Counter()) == "" and ORIGINS[:3] == ("override", "family", "inferred")


def test_a_synthesized_run_reports_its_answers_by_origin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CWORLD_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("COLUMNS", "200")
    args = ["run", "--tasks", str(FIXTURE), "--limit", "2", "--mode", "synthesized", "--agent", "scripted:oracle",
            "--policy", "none", "--no-progress", "--out", str(tmp_path / "run")]
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)["rows"]
    origins = row["engine_origins"]
    assert origins and set(origins) <= set(ORIGINS) and sum(origins.values()) >= row["tool_calls"] > 0
    shown = CliRunner().invoke(cli, [*args, "--resume"])
    assert "engine answers by origin: " in shown.output and "answers)" in shown.output


def test_the_reports_drilldown_badges_each_engine_answer_with_its_origin() -> None:
    from cworld.data_model import Step, ToolCall
    from cworld.redact import Redactor
    from cworld.report.drilldown import Text, _step

    answer = ToolResult.ok({"ok": True}, source="engine", engine="world", rule="inferred")
    step = Step(index=0, turn=1, tool_call=ToolCall(id="c", tool="shop/list_orders", arguments={}),
                raw_result=answer, observation=answer)
    html = _step(step, None, {}, Text(Redactor()), "ep")
    assert 'class="badge origin-inferred"' in html and "engine: inferred" in html
    live = step.model_copy(update={"raw_result": ToolResult.ok({}, source="live")})
    assert "origin-" not in _step(live, None, {}, Text(Redactor()), "ep")
