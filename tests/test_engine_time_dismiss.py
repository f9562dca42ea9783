"""The time card's dismiss family (issue 33): a reminder is dismissed once it has come due (before that it can
only be cancelled), and only once. The reminder service here is written for the test."""

from __future__ import annotations

from typing import Any

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.rules import RulesEngine
from cworld.engine.world.base import ServerWorld, World
from cworld.environment import Environment

SERVER = "desk-reminders"
REMINDERS = {"rem_1": {"text": "Past", "at": "2026-08-01T08:00:00Z", "status": "due"},
             "rem_2": {"text": "Later", "at": "2026-09-01T08:00:00Z", "status": "scheduled"}}


def test_a_reminder_is_dismissed_once_due_and_only_once() -> None:
    dismiss = ToolSpec(server=SERVER, name="dismiss_reminder", description="dismiss a reminder", input_schema={
        "type": "object", "properties": {"reminder_id": {"type": "string"}}, "required": ["reminder_id"]})
    world = World(seed=0, now="2026-08-01T09:00:00Z", servers={SERVER: ServerWorld(
        SERVER, {"reminders": REMINDERS}, kinds={"reminder": "reminders"}, card="time")})
    engine, log = RulesEngine(load_cards(Environment.resolve().category_cards), [dismiss], world=world), SessionLog(seed=0)

    def call(**args: Any) -> ToolResult:
        result = engine.respond_sync(dismiss, args, log)
        log.record(dismiss.id, args, result)
        return result

    assert call(reminder_id="rem_2").error_class == "business"  # not due yet
    done = call(reminder_id="rem_1")
    assert not done.is_error and done.structured_content["status"] == "dismissed"  # type: ignore[index]
    assert call(reminder_id="rem_1").error_class == "business"  # already dismissed
