"""A tool whose argument names the kind it reads (`engine/rules/selectors.py`): HubSpot's
`list_objects(objectType)` and kubectl's `get(resourceType, name)` read the kind the call names, refuse a type
the service does not take, and read a type it takes but the world holds none of as empty."""

from __future__ import annotations

from engine_helpers import rules_caller, tool_spec

STR = {"type": "string"}
TYPE = {"type": "string", "description": "The object type. Valid values include: contacts, deals, tickets"}

TOOLS = [tool_spec("crm-api", "list_objects", {"objectType": TYPE, "limit": {"type": "integer"}}, ["objectType"]),
         tool_spec("crm-api", "kubectl_get", {"resourceType": STR, "name": STR}, ["resourceType"]),
         tool_spec("crm-api", "list_progressions", {"object_type": STR, "object_id": STR},
                   ["object_type", "object_id"])]


def crm() -> object:
    state = {"contacts": {"ct_1": {"name": "Priya Patel"}, "ct_2": {"name": "Carlos Garcia"}},
             "deals": {"dl_1": {"name": "Renewal 2027"}}}
    return rules_caller("crm-api", "crm", state, {"contact": "contacts", "deal": "deals"}, TOOLS)


def test_a_list_reads_the_kind_its_argument_names() -> None:
    call = crm()
    contacts = call("list_objects", objectType="contacts")  # type: ignore[operator]
    assert "Priya Patel" in contacts.text and "Renewal 2027" not in contacts.text, contacts.text
    assert "Renewal 2027" in call("list_objects", objectType="Deal").text  # type: ignore[operator]


def test_an_unknown_type_is_refused_and_a_taken_one_the_world_lacks_is_empty() -> None:
    call = crm()
    assert call("list_objects", objectType="widgets").error_class in ("invalid", "invalid_args")  # type: ignore[operator]
    empty = call("list_objects", objectType="tickets")  # type: ignore[operator]
    assert not empty.is_error and "Priya" not in empty.text, empty.text


def test_a_get_finds_the_named_record_of_that_kind_or_lists_them_all() -> None:
    call = crm()
    assert "Carlos Garcia" in call("kubectl_get", resourceType="contacts", name="carlos garcia").text  # type: ignore[operator]
    assert call("kubectl_get", resourceType="deals", name="Carlos Garcia").error_class == "not_found"  # type: ignore[operator]
    every = call("kubectl_get", resourceType="contacts")  # type: ignore[operator]
    assert "Priya Patel" in every.text and "Carlos Garcia" in every.text, every.text


def test_a_call_about_one_record_of_the_named_type_needs_that_record() -> None:
    """Accelo's `list_progressions(object_type, object_id)`: the type must be one the service takes, and the
    record of that type must be there."""
    call = crm()
    assert call("list_progressions", object_type="contact", object_id="ct_9").error_class == "not_found"  # type: ignore[operator]
    assert call("list_progressions", object_type="deal", object_id="ct_1").error_class == "not_found"  # type: ignore[operator]
    assert call("list_progressions", object_type="widget", object_id="ct_1").error_class in ("invalid", "invalid_args")  # type: ignore[operator]
    assert call("list_progressions", object_type="contact", object_id="ct_1").error_class != "not_found"  # type: ignore[operator]
