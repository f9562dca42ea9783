"""The signed-in user of a generated world (issue 33): a server with a tool that reads who is signed in
(`get_me`, `whoami`) has a world that points at one of its people, and that tool answers that person on
every call; a tool about one's other things (`get_my_status`) is no read of the user."""

from __future__ import annotations

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.cards.operations import reads_signed_in_user
from cworld.engine.world.build import SIGNED_IN, generated_world
from cworld.environment import Environment
from tests.engine_helpers import rules_caller, tool_spec

CARDS = load_cards(Environment.resolve().category_cards)


def test_reads_of_the_signed_in_user_are_told_from_reads_of_ones_other_things() -> None:
    reads = ["get_me", "whoami", "getCurrentUser", "get_my_profile", "get_authorized_user", "get_profile",
             "get_current_user_info"]
    others = ["get_my_status", "read_my_design", "get_business_profile", "get_current_organization_info"]
    assert all(reads_signed_in_user(tool_spec("s", n, {})) for n in reads)
    assert not any(reads_signed_in_user(tool_spec("s", n, {})) for n in others)
    assert not reads_signed_in_user(tool_spec("s", "get_user", {"user_id": {"type": "string"}}))


def _world_tools(*names: str) -> list[ToolSpec]:
    return [tool_spec("chat", n, {}) for n in names] + [tool_spec("chat", "list_users", {}, [])]


def test_a_generated_world_points_at_a_person_only_where_a_tool_asks_who_is_signed_in() -> None:
    card = CARDS["messaging"]
    world = generated_world("chat", card, 3, size=5, tools=_world_tools("get_me"))
    users = world.state[world.kinds["user"]]
    assert world.state[SIGNED_IN] in users
    assert generated_world("chat", card, 3, size=5, tools=_world_tools("get_me")).state[SIGNED_IN] == \
        world.state[SIGNED_IN]  # the same seed signs in the same user
    assert SIGNED_IN not in generated_world("chat", card, 3, size=5, tools=_world_tools("get_my_status")).state


def test_get_me_answers_the_signed_in_user_every_time_and_refuses_without_one() -> None:
    card = CARDS["messaging"]
    tools = _world_tools("get_me")
    world = generated_world("chat", card, 3, size=5, tools=tools)
    call = rules_caller("chat", "messaging", world.state, world.kinds, tools)
    first, again = call("get_me"), call("get_me")
    me = world.state[world.kinds["user"]][world.state[SIGNED_IN]]
    assert not first.is_error and first.text == again.text and me["name"] in first.text
    signed_out = {k: v for k, v in world.state.items() if k != SIGNED_IN}
    assert call_without(signed_out, world.kinds, tools).is_error


def call_without(state: dict, kinds: dict[str, str], tools: list[ToolSpec]):  # type: ignore[no-untyped-def]
    """`get_me` on a world that points at no user: the session is signed in as no one."""
    return rules_caller("chat", "messaging", state, kinds, tools)("get_me")
