"""A schema default the harvest put where the user's configuration goes (`project: cworld-placeholder-...`)
is the project the server was configured with, not a project of the world (issue 33): a get that names a
service of the world finds it, instead of refusing the placeholder project as one that does not exist."""

from __future__ import annotations

from cworld.engine.cards.card import load_cards
from cworld.engine.world.build import generated_world
from cworld.environment import Environment
from cworld.registry.harvest.entries import placeholder
from tests.engine_helpers import rules_caller, tool_spec

CARDS = load_cards(Environment.resolve().category_cards)


def test_a_placeholder_default_is_no_record_the_call_names() -> None:
    props = {"project": {"type": "string", "default": placeholder("GOOGLE_CLOUD_PROJECT"),
                         "description": "Google Cloud project ID containing the service"},
             "service": {"type": "string"}}
    tools = [tool_spec("run", "get_service", props, ["service"])]
    world = generated_world("run", CARDS["cloud_infrastructure"], 4, size=8, tools=tools)
    call = rules_caller("run", "cloud_infrastructure", world.state, world.kinds, tools)
    service = next(iter(world.state[world.kinds["service"]]))
    found = call("get_service", service=service)
    assert not found.is_error and service in found.text
    assert call("get_service", service=service, project="no-such-project").is_error  # a project said is checked
