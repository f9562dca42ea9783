"""A plan's references read an answer as the agents that run the plan read it (`agents.observe.payload`): a
finder that answers its list as JSON text (no structured content: `zereight-mcp-gitlab/list_projects`) is a
list of records the synthesizer can pick from, and the reference it writes resolves when the plan is run."""

from __future__ import annotations

from cworld.agents.observe import payload
from cworld.agents.references import resolve
from cworld.data_model import ToolResult
from cworld.synth.offline.goal_chain import _lists
from cworld.synth.outcome import answer_value


def text(body: str) -> ToolResult:
    return ToolResult(content=[{"type": "text", "text": body}])


def test_a_json_text_answer_is_read_as_its_json_and_resolves_as_the_agents_read_it() -> None:
    answer = text('{"items": [{"id": "p1", "name": "Website redesign"}, {"id": "p2", "name": "Q3 budget"}]}')
    value = answer_value(answer)
    assert _lists(value) == [("items", value["items"])]  # the raw text held no list a finder could read
    assert _lists(answer.text) == []
    ref = {"project_id": "{{s1.items[name=Q3 budget].id}}"}
    assert resolve(ref, {"s1": value}) == resolve(ref, {"s1": payload(answer)}) == {"project_id": "p2"}


def test_structured_content_wins_and_a_plain_text_stays_text() -> None:
    structured = ToolResult(content=[{"type": "text", "text": "ignored"}], structured_content={"items": []})
    assert answer_value(structured) == {"items": []}
    assert answer_value(text("Deleted 3 records.")) == "Deleted 3 records."
    assert answer_value(text("42")) == "42"  # JSON, but no record: the text as the service wrote it
