"""Gold-plan references: `{{step.path}}` resolution, selectors, and what an unresolvable one says."""

from __future__ import annotations

import pytest

from cworld.agents.references import UnresolvedReference, referenced_steps, references, resolve

RESULTS = {
    "find": {"contacts": [{"name": "Ann Lee", "contact_id": "c1", "favorite": True},
                          {"name": "Omar Hussain", "contact_id": "c2", "favorite": False}],
             "total": 2},
    "slots": {"slots": [["09:00", "09:30"], ["10:00", "10:30"]]},
}


def test_whole_string_reference_keeps_the_value_type():
    assert resolve("{{find.total}}", RESULTS) == 2
    assert resolve("{{slots.slots.1}}", RESULTS) == ["10:00", "10:30"]
    assert resolve("{{find.contacts.-1.contact_id}}", RESULTS) == "c2"


def test_embedded_references_become_text_and_containers_resolve_item_by_item():
    args = {"to": ["{{find.contacts.0.contact_id}}"], "note": "Hi {{find.contacts.0.name}}, {{find.total}} found",
            "n": 3, "nested": {"start": "{{slots.slots.0.0}}"}}
    assert resolve(args, RESULTS) == {"to": ["c1"], "note": "Hi Ann Lee, 2 found", "n": 3,
                                      "nested": {"start": "09:00"}}


def test_selectors_pick_items_by_content():
    assert resolve("{{find.contacts[name=omar hussain].contact_id}}", RESULTS) == "c2"
    assert resolve("{{find.contacts[name~ann].contact_id}}", RESULTS) == "c1"
    assert resolve("{{find.contacts[favorite=false&name~o].contact_id}}", RESULTS) == "c2"
    assert resolve("{{find.contacts[1].name}}", RESULTS) == "Omar Hussain"


@pytest.mark.parametrize(("text", "reason"), [
    ("{{nope.x}}", "no result yet"),
    ("{{find.missing}}", "no such field"),
    ("{{find.contacts.5}}", "out of range"),
    ("{{find.contacts[name=Zed].contact_id}}", "no item matches"),
    ("{{find.total.x}}", "cannot step into"),
])
def test_unresolvable_references_say_where_they_failed(text, reason):
    with pytest.raises(UnresolvedReference) as err:
        resolve(text, RESULTS)
    assert reason in str(err.value)
    assert err.value.step_id == text[2:].split(".")[0].split("}")[0]


def test_loose_resolution_leaves_what_it_cannot_resolve():
    assert resolve("to {{nope.x}} and {{find.total}}", RESULTS, strict=False) == "to {{nope.x}} and 2"
    assert resolve(["{{nope.x}}"], RESULTS, strict=False) == ["{{nope.x}}"]


def test_references_are_listed_in_order():
    args = {"a": "{{s1.x[name=A B].id}}", "b": ["{{s2.y}} {{s1.z}}"]}
    assert references(args) == [("s1", ".x[name=A B].id"), ("s2", ".y"), ("s1", ".z")]
    assert referenced_steps(args) == ["s1", "s2"]
