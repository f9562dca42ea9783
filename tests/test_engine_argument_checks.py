"""What services refuse in a call's arguments whatever their world holds (`engine/rules/arguments.py`), and a
record named by a field the argument's name gives (`card_title`, `uid`, the kind itself). The service is written
for the test: a small ticket desk on the task-board card, with a weather lookup beside it that no rule covers."""

from __future__ import annotations

from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolResult, ToolSpec

SERVER = "ticket-desk"
TICKETS = {f"card_{n:04d}": {"title": f"Ticket {n}", "uid": f"u-{n}", "status": "open"} for n in range(1, 31)}
INT, NUM, STR = {"type": "integer"}, {"type": "number"}, {"type": "string"}


def tool(name: str, props: dict[str, Any], required: list[str] | None = None) -> ToolSpec:
    return ToolSpec(server=SERVER, name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": required or []})


TOOLS = [
    tool("list_cards", {"limit": INT, "offset": INT, "page": INT}),
    tool("list_cards_odata", {"top": INT, "skip": INT}),
    tool("list_cards_bounded", {"limit": {"type": "integer", "minimum": 5}}),
    tool("attach_link", {"cardId": STR, "url": STR, "mirror_urls": {"type": "array", "items": STR}}, ["cardId", "url"]),
    tool("read_card_attachment", {"cardId": STR, "file_path": STR}, ["cardId", "file_path"]),
    tool("get_forecast", {"latitude": NUM, "longitude": NUM}, ["latitude", "longitude"]),
    tool("sign_in", {"email": STR, "password": STR}, ["email", "password"]),
    tool("get_card_by_title", {"card_title": STR}, ["card_title"]),
    tool("get_card_by_uid", {"uid": STR}, ["uid"]),
    tool("show_card", {"card": STR}, ["card"]),
    tool("create_card", {"card_title": STR}, ["card_title"]),
]


def desk() -> Any:
    """A fresh session on the desk's world (`engine_helpers.rules_caller`): `desk()("list_cards", limit=5)`."""
    state = {"cards": TICKETS, "me": {"email": "rosa@desk.example", "password": "s3cret-desk", "name": "Rosa"},
             "auth": {}}
    return rules_caller(SERVER, "task_board", state, {"card": "cards"}, TOOLS)


def refused(result: ToolResult, words: str) -> bool:
    return result.is_error and result.error_class == "invalid_args" and words in str(result.content)


def test_page_sizes_below_one_and_negative_offsets_are_refused() -> None:
    call = desk()
    assert refused(call("list_cards", limit=-5), "'limit' -5 is not a page size")
    assert refused(call("list_cards", limit=0), "give 1 or more")
    assert refused(call("list_cards", offset=-1), "'offset' -1 is not an offset")
    assert refused(call("list_cards", page=-2), "is not a page number")
    assert not call("list_cards", limit=5, offset=0).is_error
    assert not call("list_cards", page=0).is_error  # services differ on page 0 of a 1-based list: left alone
    assert not call("list_cards_odata", top=0, skip=0).is_error  # OData's $top=0 answers no rows, it is no error
    assert refused(call("list_cards_odata", skip=-1), "not an offset")


def test_a_bound_the_schema_states_is_the_schema_s_to_enforce() -> None:
    call = desk()
    rule, _ = call.engine.rule_for(next(t for t in TOOLS if t.name == "list_cards_bounded"))
    assert rule is not None and not any("limit" in (c.fail or "") for c in rule.check)
    assert call("list_cards_bounded", limit=2).error_class == "invalid_args"


def test_a_url_needs_its_scheme_item_by_item() -> None:
    call = desk()
    assert refused(call("attach_link", cardId="card_0001", url="example.com/spec"), "is not a URL")
    assert refused(call("attach_link", cardId="card_0001", url="https://example.com/a",
                        mirror_urls=["https://m.example.com/a", "m2.example.com"]), "'mirror_urls'")
    assert not call("attach_link", cardId="card_0001", url="https://example.com/a",
                    mirror_urls=["sc-domain:example.com"]).is_error
    assert call("attach_link", cardId="card_9999", url="https://example.com/a").error_class == "not_found"
    # an empty mirror list item or an optional URL left at its default "" is no URL given
    assert not call("attach_link", cardId="card_0001", url="https://example.com/a", mirror_urls=[""]).is_error


def test_a_required_path_given_empty_is_refused() -> None:
    call = desk()
    assert refused(call("read_card_attachment", cardId="card_0002", file_path="  "), "'file_path' must not be empty")
    assert not call("read_card_attachment", cardId="card_0002", file_path="notes/spec.md").is_error


def test_a_tool_no_rule_covers_still_refuses_a_place_off_the_globe() -> None:
    call = desk()
    assert call.engine.rule_for(next(t for t in TOOLS if t.name == "get_forecast"))[1] == "simulated"
    assert refused(call("get_forecast", latitude=123.0, longitude=2.35), "'latitude' 123.0 is off the globe")
    assert refused(call("get_forecast", latitude=48.85, longitude=-200), "from -180 to 180")
    # the guard passes it on: the schema engine answers (this engine has none, so it says no rule covers it)
    assert call("get_forecast", latitude=48.85, longitude=2.35).error_class == "unavailable"


def test_credentials_are_refused_alike_whatever_is_wrong() -> None:
    call = desk()
    malformed, wrong = call("sign_in", email="rosa", password="s3cret-desk"), call("sign_in", email="x@y.example",
                                                                                  password="nope")
    assert malformed.error_class == wrong.error_class == "auth"
    assert not call("sign_in", email="rosa@desk.example", password="s3cret-desk").is_error


def test_a_record_named_by_the_field_its_argument_names() -> None:
    call = desk()
    for name, args in (("get_card_by_title", {"card_title": "ticket 7"}), ("get_card_by_uid", {"uid": "card_0007"}),
                       ("show_card", {"card": "Ticket 7"})):
        found = call(name, **args)
        assert not found.is_error and "Ticket 7" in str(found.content), name
    for name, args in (("get_card_by_title", {"card_title": "Ticket 99"}), ("get_card_by_uid", {"uid": "nope"}),
                       ("show_card", {"card": "No such ticket"})):
        assert call(name, **args).error_class == "not_found", name


def test_a_create_keeps_the_kind_s_field_an_argument_names() -> None:
    call = desk()
    assert not call("create_card", card_title="Renew the domain").is_error
    found = call("get_card_by_title", card_title="renew the domain")
    assert not found.is_error and "Renew the domain" in str(found.content)
    changed = str(call.engine.end_state(call.log))
    assert "'title': 'Renew the domain'" in changed and "card_title" not in changed


def test_world_rules_shows_what_a_simulated_tool_s_calls_are_checked_for() -> None:
    """`cworld world rules` lists the guard of a tool no rule covers (as comments: a guard is no rule), so a
    reviewer sees that a weather lookup refuses a latitude off the globe before the schema engine answers."""
    from click.testing import CliRunner

    from cworld.cli.main import cli

    shown = CliRunner().invoke(cli, ["world", "rules", "h1deya-mcp-server-weather"])
    assert shown.exit_code == 0, shown.output
    guards = shown.output.split("# simulated tools whose calls are checked first", 1)
    assert len(guards) == 2 and "#  get-forecast:" in guards[1] and "-90 <= args['latitude'] <= 90" in guards[1]
    assert all(line.startswith("#") for line in guards[1].strip().splitlines()[1:])
