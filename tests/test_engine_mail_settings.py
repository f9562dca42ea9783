"""A mailbox's settings as records (issue 33): Gmail's send-as aliases and forwarding addresses, kept as the
email card's kinds, so a get, change or delete names one the account has and an unknown address is
`not_found`, as the settings API answers 404."""

from __future__ import annotations

from engine_helpers import rules_caller, tool_spec

from cworld.engine.cards.card import load_cards
from cworld.engine.world.build import generated_world
from cworld.environment import Environment

STR = {"type": "string"}
TOOLS = [tool_spec("mail", "get_send_as", {"sendAsEmail": STR}),
         tool_spec("mail", "patch_send_as", {"sendAsEmail": STR, "displayName": STR}, ["sendAsEmail"]),
         tool_spec("mail", "delete_forwarding_address", {"forwardingEmail": STR}),
         tool_spec("mail", "list_forwarding_addresses", {}, [])]


def test_a_send_as_alias_and_a_forwarding_address_are_the_accounts_own() -> None:
    card = load_cards(Environment.resolve().category_cards)["email"]
    world = generated_world("mail", card, seed=2, size=3, tools=TOOLS)
    call = rules_caller("mail", "email", world.state, world.kinds, TOOLS, named_kinds=world.named_kinds)
    alias = next(iter(world.state[world.kinds["send_as"]]))
    assert alias in call("get_send_as", sendAsEmail=alias).text
    assert call("get_send_as", sendAsEmail="nobody@example.org").error_class == "not_found"
    assert not call("patch_send_as", sendAsEmail=alias, displayName="Support desk").is_error
    assert "Support desk" in call("get_send_as", sendAsEmail=alias).text
    address = next(iter(world.state[world.kinds["forwarding_address"]]))
    assert not call("delete_forwarding_address", forwardingEmail=address).is_error
    assert address not in call("list_forwarding_addresses").text
    assert call("delete_forwarding_address", forwardingEmail=address).error_class == "not_found"
