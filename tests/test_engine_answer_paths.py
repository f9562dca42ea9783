"""The per-answer helpers the world engine runs on every call, each kept to what it did before it was made
cheaper (issue 33, speed): the paths an answer made up, a tool's documented formats read once per schema,
and an answer's fit to its schema decided by the compiled check alone."""

from __future__ import annotations

from typing import Any

import jsonschema

from cworld.engine.rules.engine import made_up
from cworld.engine.rules.formats import format_error
from cworld.schemas.validation import conforms


def test_made_up_names_the_paths_of_values_neither_the_payload_nor_the_arguments_hold_in_document_order() -> None:
    answer = {"id": "ord_1", "total": 12.5, "lines": [{"sku": "A", "qty": 2}, {"sku": "Z", "qty": 7}],
              "note": "", "cursor": None, "meta": {"source": "made", "tags": []}, "city": "Madrid"}
    payload = {"id": "ord_1", "lines": [{"sku": "A", "qty": 2}], "extra": {"deep": [12.5]}}
    found = made_up(answer, (payload, {"city": "Madrid"}))
    assert found == ["$.lines[1].sku", "$.lines[1].qty", "$.meta.source"]


def test_made_up_reads_a_scalar_answer_and_stops_at_fifty_paths() -> None:
    assert made_up("drawn", ({"name": "held"}, {})) == ["$"]
    assert made_up("held", ({"name": "held"}, {})) == []
    many = {f"f{i}": f"v{i}" for i in range(60)}
    assert made_up(many, ({}, {})) == [f"$.f{i}" for i in range(50)]


def _dated(description: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"due": {"type": "string", "description": description},
                                             "color": {"type": "string", "description": "one of red or blue"}}}


def test_each_input_schema_answers_for_its_own_documented_forms() -> None:
    pinned, open_form = _dated("due time as YYYY-MM-DDTHH:MM"), _dated("due time, ISO 8601 with any offset")
    late = {"due": "2026-05-01", "color": "red"}
    for _ in range(2):  # the second call reads what the first one found for the same schema
        assert format_error(pinned, late) == ("'due' is '2026-05-01', not in the documented form: give it as "
                                              "YYYY-MM-DDTHH:MM")
        assert format_error(open_form, late) is None
        assert format_error(open_form, {"due": "x", "color": "Green"}) == "'color' is 'Green', not one of red, blue"
        assert format_error(pinned, {"due": "2026-05-01T09:30Z", "color": " BLUE "}) is None


def test_conforms_gives_jsonschemas_verdict_where_the_compiled_check_refuses() -> None:
    schema = {"type": "object", "required": ["id"], "additionalProperties": False,
              "properties": {"id": {"type": "integer"}, "tags": {"type": "array", "items": {"enum": ["a", 1]}}}}
    values = [{"id": 1}, {"id": 1.0, "tags": ["a", 1.0]}, {"id": True}, {"tags": []}, {"id": 1, "x": 0},
              {"id": 2, "tags": [True]}, [], None]
    reference = jsonschema.Draft202012Validator(schema)
    assert [conforms(schema, v) for v in values] == [reference.is_valid(v) for v in values]
    assert [conforms(schema, v) for v in values] == [True, True, False, False, False, False, False, False]
