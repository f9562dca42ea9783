"""A date argument is one a date as the request states it can fill (`offline/action_space.date_args`): an argument
that takes only a number (`due_date: anyOf [integer, null]`, ClickUp's milliseconds) is no date a schedule sets,
so a composer does not fill it with `2026-05-01` only to have the schema refuse the step."""

from __future__ import annotations

from cworld.data_model import ToolSpec
from cworld.synth.offline.action_space import date_args, when_args

NULL = {"type": "null"}


def tool(**props: dict[str, object]) -> ToolSpec:
    return ToolSpec(server="srv", name="create_task", description="create a task", category="project_management",
                    input_schema={"type": "object", "properties": {"name": {"type": "string"}, **props}})


def test_a_date_that_takes_text_is_a_date_argument() -> None:
    spec = tool(start_date={"type": "string"}, due_date={"anyOf": [{"type": "string"}, NULL]},
                end={"type": ["string", "null"]}, when={"format": "date-time"})
    assert date_args(spec) == ["start_date", "due_date", "end", "when"]
    assert when_args(spec) == ["start_date", "due_date", "end", "when"]


def test_a_date_that_takes_only_a_number_is_not() -> None:
    spec = tool(due_date={"anyOf": [{"type": "integer"}, NULL]}, start={"type": "integer"},
                end={"oneOf": [{"type": "number"}, NULL]})
    assert date_args(spec) == when_args(spec) == []
