"""A reference steps into a JSON object or array held as text in an answer field (issue 34, "draw across the
pool"): a FastMCP tool whose output is one string answers `{"result": "<JSON text>"}` (594 harvested tools on
38 servers), so its finders are read by the probe, the gold plan's replay and the agents alike, one rule for
all (`agents.references.json_in_text`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cworld.agents.observe import opened, payload
from cworld.agents.references import UnresolvedReference, json_in_text, resolve
from cworld.data_model import PlanStep, ToolResult
from cworld.environment import Environment, Workspace
from cworld.synth.argument_checks import id_problems
from cworld.synth.offline.goal_chain import _lists
from cworld.synth.offline.shape_chain import named_records
from cworld.synth.outcome import answer_value, run_plan

GOALS = {"items": [{"id": "g1", "name": "Ship v2"}, {"id": "g2", "name": "Q3 budget"}], "total": 2}


def wrapped(value: Any) -> ToolResult:
    """An answer as a FastMCP tool with a `str` output sends it: the text, and the string in `result`."""
    body = json.dumps(value)
    return ToolResult(content=[{"type": "text", "text": body}], structured_content={"result": body})


def test_a_reference_steps_into_json_text_held_in_a_field() -> None:
    raw = {"s1": {"result": json.dumps(GOALS)}}
    assert resolve("{{s1.result.items[name=Q3 budget].id}}", raw) == "g2"
    assert resolve("{{s1.result.total}}", raw) == 2
    assert resolve("{{s1.result}}", raw) == json.dumps(GOALS)  # ending on the field: the text as it stands
    listed = {"s1": {"result": json.dumps(GOALS["items"])}}
    assert resolve("{{s1.result[name~ship].id}}", listed) == resolve("{{s1.result.0.id}}", listed) == "g1"


def test_a_text_that_holds_no_object_or_array_is_not_stepped_into() -> None:
    for text in ("Deleted 3 records.", "42", '"g1"', "{not json"):
        assert json_in_text(text) is None
        with pytest.raises(UnresolvedReference, match="cannot step into a str"):
            resolve("{{s1.result.id}}", {"s1": {"result": text}})


def test_the_agents_read_a_wrapped_answer_with_its_field_opened() -> None:
    answer = wrapped(GOALS)
    assert payload(answer) == answer_value(answer) == {"result": GOALS}
    ref = {"goal_id": "{{s1.result.items[name=Q3 budget].id}}"}
    # the agents hold the payload, the raw answer holds the text: a reference reads both alike
    assert resolve(ref, {"s1": payload(answer)}) == resolve(ref, {"s1": answer.structured_content}) == {"goal_id": "g2"}
    assert _lists(answer_value(answer)) == [("result.items", GOALS["items"])]
    assert _lists(answer.structured_content) == []  # read as it came, the answer held no list to pick from


def test_only_a_sole_field_is_opened() -> None:
    file = {"path": "a.json", "content": '{"a": 1}'}  # a file's JSON content is what the file holds: text
    assert opened(file) == file
    assert opened({"result": "done"}) == {"result": "done"}
    assert payload(ToolResult(content=[{"type": "text", "text": json.dumps({"result": '[{"id": 1}]'})}])) == {
        "result": [{"id": 1}]}


@pytest.fixture(scope="module")
def harvested(tmp_path_factory: pytest.TempPathFactory, shared_worlds: Any) -> tuple[Any, Any]:
    """(tools, world engine) of the harvested pool, as `cworld synth --pool harvested` builds them."""
    from cworld.synth import api
    from cworld.synth.toolset import load_universe

    env = Environment.resolve()
    ws = shared_worlds(Workspace.resolve(tmp_path_factory.mktemp("jsontext") / "ws"))
    universe = load_universe(env, ws, need_search=False, harvested=True)
    return universe, api._engine(env, ws, universe)


def test_a_wrapped_finder_serves_a_plan_that_replays(harvested: tuple[Any, Any]) -> None:
    """`clickup-rest-mcp/list_goals` answers its goals as JSON text in `result`: the composer reads a named goal
    in it, and a plan that picks that goal for `get_goal` runs on the world engine."""
    from cworld.engine import SessionLog

    universe, engine = harvested
    tools = {t: universe.tools[f"clickup-rest-mcp/{t}"] for t in ("list_goals", "get_goal")}
    answer = engine.respond_sync(tools["list_goals"], {}, SessionLog(seed=3))
    assert not answer.is_error and _lists(answer.structured_content) == []
    path, items = _lists(answer_value(answer))[0]
    goal = named_records(items)[0]
    plan = [PlanStep(id="s1", tool=tools["list_goals"].id, arguments={}),
            PlanStep(id="s2", tool=tools["get_goal"].id,
                     arguments={"goal_id": f"{{{{s1.{path}[name={goal['name']}].id}}}}"})]
    trace, _ = run_plan(plan, {t.id: t for t in tools.values()}, engine, SessionLog(seed=3))
    assert trace.failure is None
    assert trace.calls[1].arguments == {"goal_id": goal["id"]}
    wrong = [plan[0], PlanStep(id="s2", tool=tools["get_goal"].id, arguments={"goal_id": "goal_9999"})]
    assert run_plan(wrong, {t.id: t for t in tools.values()}, engine, SessionLog(seed=3))[0].failure  # it checks
    assert id_problems(plan[1], tools["get_goal"], {s.id: s for s in plan}, universe) == []  # `result`: no kind


def test_rows_written_in_pythons_repr_are_read_as_a_client_reads_them() -> None:
    """The sqlite server (and the SQL card's servers the engine answers as it) write `str(rows)`: the agents,
    the probe and the gold plan read those rows as records; a text that only looks like one stays text."""
    rows = "[{'table_id': 7, 'name': 'orders', 'rows': None}, {'table_id': 8, 'name': 'refunds', 'rows': 12}]"
    answer = ToolResult(content=[{"type": "text", "text": rows}])
    assert payload(answer) == [{"table_id": 7, "name": "orders", "rows": None},
                               {"table_id": 8, "name": "refunds", "rows": 12}]
    assert resolve("{{s1.result[name=refunds].table_id}}", {"s1": {"result": rows}}) == 8
    assert json_in_text("[__import__('os')]") is None  # no code is run: a literal or nothing
    assert payload(ToolResult(content=[{"type": "text", "text": "[not, a, list"}])) == {"text": "[not, a, list"}
