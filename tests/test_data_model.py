from __future__ import annotations

import json
from pathlib import Path

import pytest

from cworld.data_model import (
    SCHEMA_VERSION,
    Constraint,
    Intervention,
    Step,
    Task,
    ToolCall,
    ToolResult,
    ToolSpec,
    Trajectory,
    append_jsonl,
    read_jsonl,
)
from cworld.errors import UsageError


def test_tool_result_helpers_classify_errors():
    ok = ToolResult.ok({"a": 1})
    assert not ok.is_error and json.loads(ok.text) == {"a": 1}
    err = ToolResult.error("server_crash", "connection closed")
    assert err.is_error and err.is_infra_error and err.text == "connection closed"
    assert not ToolResult.error("business", "insufficient funds").is_infra_error
    with pytest.raises(ValueError):
        ToolResult(is_error=True, error_class="made_up")  # type: ignore[arg-type]


def test_tool_spec_id_and_version():
    spec = ToolSpec(server="mail", name="send_message")
    assert spec.id == "mail/send_message"
    assert json.loads(spec.model_dump_json())["schema_version"] == SCHEMA_VERSION


def test_trajectory_round_trips_through_jsonl(tmp_path):
    task = Task(id="t1", query="q", constraints=[Constraint(id="c1", type="budget", description="under $50")])
    step = Step(
        index=0,
        turn=1,
        tool_call=ToolCall(id="call_1", tool="shop/search", arguments={"q": "x"}),
        raw_result=ToolResult.ok({"items": []}),
        observation=ToolResult.error("timeout", "timed out"),
        interventions=[Intervention(kind="timeout", level="tool", turn=1, tool="shop/search")],
    )
    traj = Trajectory(episode_id="e1", task_id="t1", task=task, agent="scripted:oracle", mode="live", steps=[step])
    path = tmp_path / "t.jsonl"
    append_jsonl(path, [traj, traj])
    back = read_jsonl(path, Trajectory)
    assert back == [traj, traj]
    assert back[0].interventions[0].kind == "timeout"


def test_torn_last_line_is_skipped_but_bad_middle_line_is_an_error(tmp_path):
    path = tmp_path / "t.jsonl"
    good = Task(id="t1", query="q").model_dump_json()
    path.write_text(good + "\n" + good[:10])
    assert [t.id for t in read_jsonl(path, Task)] == ["t1"]
    path.write_text(good[:10] + "\n" + good + "\n")
    with pytest.raises(UsageError, match=r"t.jsonl:1: not a task \(invalid JSON: .* at column \d+\); fix or delete"):
        read_jsonl(path, Task)


def test_a_bad_last_line_with_its_newline_is_an_error_naming_the_field(tmp_path):
    """Only a line without its newline is torn; a complete bad line is the user's, and says so."""
    path = tmp_path / "t.jsonl"
    good = Task(id="t1", query="q").model_dump_json()
    path.write_text(good + "\n\n" + '{"id": "t2"}\n')
    with pytest.raises(UsageError, match=r"t.jsonl:3: not a task \(query: Field required\)") as info:
        read_jsonl(path, Task)
    assert "\n" not in str(info.value)


def test_missing_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        read_jsonl(tmp_path / "nope.jsonl", Task)


def test_writers_racing_on_one_file_each_replace_it_whole(tmp_path: Path) -> None:
    """serve's workers build the same seed's world at once: no writer may lose its temp file to another."""
    from concurrent.futures import ThreadPoolExecutor

    from cworld.data_model.jsonl import write_text_atomic

    target = tmp_path / "worlds" / "seed-0" / "chat.json"
    texts = [str(n) * 2000 for n in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda text: [write_text_atomic(target, text) for _ in range(20)], texts))
    assert target.read_text(encoding="utf-8") in texts
    assert [p.name for p in target.parent.iterdir()] == ["chat.json"]
    assert oct(target.stat().st_mode & 0o777) == "0o644"
