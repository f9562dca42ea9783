"""End states of synthesized episodes: the schema engine's change sets, and the world engine's full state.

The schema engine (`--engine schema`) reports what the session's writes created, updated and deleted, the
backend turns that into a change set in the sandbox's schema, and the grader overlays it on the task's
initial state. The world engine (the default) keeps the seed's world itself: its end state is the full state
of the sandbox apps, graded exactly as a live end state (docs/world-engine.md, "Operation rules")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from engine_helpers import call
from rollout_helpers import scratch_context

from cworld.controller.backends.endstate import change_set
from cworld.data_model import PlanStep, Scenario, ScenarioEntity, Task, ToolResult, read_jsonl
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.schema.engine import SchemaEngine
from cworld.judges.state import state_diff, state_metrics
from cworld.rollout import RunConfig, Runner
from cworld.rollout.summary import state_matches
from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework.server import tool_specs
from cworld.sandbox.statediff import sandbox_initial_state

ROOT = Path(__file__).resolve().parents[1]
CARDS = load_cards(ROOT / "category_cards")
TOOLS = {t.id: t for app in all_apps() for t in tool_specs(app)}



def by_kind(engine: SchemaEngine, session: SessionLog) -> dict[tuple[str, str], Any]:
    return {(c.server, c.kind): c for c in engine.world_changes(session)}


def test_writes_are_tracked_as_created_updated_and_deleted_and_reads_are_not() -> None:
    engine, session = SchemaEngine(CARDS, TOOLS.values()), SessionLog(seed=3)
    call(engine, session, "mail/list_messages", {})
    call(engine, session, "mail/get_message", {"message_id": "mail_0001"})
    assert engine.world_changes(session) == []  # reading the seeded world changes nothing
    assert not call(engine, session, "mail/move_message", {"message_id": "mail_0003", "folder": "archive"}).is_error
    assert not call(engine, session, "mail/delete_forever", {"message_id": "mail_0005"}).is_error
    sent = call(engine, session, "mail/send_email", {"to": ["contact_0001"], "subject": "Hi", "body": "Hello"})
    new_id = sent.structured_content["message_id"]  # type: ignore[index]
    call(engine, session, "mail/get_message", {"message_id": new_id})
    mail = by_kind(engine, session)[("mail", "message")]
    assert list(mail.created) == [new_id] and mail.created[new_id]["subject"] == "Hi"
    assert mail.changed_fields == {"mail_0003": ["folder"]} and mail.updated["mail_0003"]["folder"] == "archive"
    assert mail.deleted == ["mail_0005"]
    assert set(by_kind(engine, session)) == {("mail", "message")}


def test_a_record_created_then_deleted_is_no_change_and_replay_gives_the_same_changes() -> None:
    engine, session = SchemaEngine(CARDS, TOOLS.values()), SessionLog(seed=5)
    made = call(engine, session, "mail/add_contact", {"name": "Ana Lima", "email": "ana@example.com"})
    key = made.structured_content["contact_id"]  # type: ignore[index]
    call(engine, session, "mail/star_message", {"message_id": "mail_0002", "starred": False})
    before = engine.world_changes(session)
    replayed = SchemaEngine(CARDS, TOOLS.values()).world_changes(session)  # a fresh engine rebuilds from the log
    assert [written(c) for c in replayed] == [written(c) for c in before]
    assert [list(c.created) for c in before] == [[key], []]
    call(engine, session, "mail/delete_contact", {"contact_id": key})
    assert ("mail", "contact") not in by_kind(engine, session)


def test_replay_adopts_the_ids_another_engine_answered_with() -> None:
    """An LLM engine keeps no world: its changes come from replaying its log through the schema engine."""
    session = SessionLog(seed=3)
    args = {"name": "Ana Lima", "email": "ana@example.com"}
    session.record("mail/add_contact", args, ToolResult.ok({"contact_id": "contact_0777", "name": "Ana Lima",
                                                              "email": "ana@example.com"}))
    changes = by_kind(SchemaEngine(CARDS, TOOLS.values()), session)[("mail", "contact")]
    assert list(changes.created) == ["contact_0777"] and changes.created["contact_0777"]["name"] == "Ana Lima"


def test_the_change_set_names_sandbox_collections_and_keeps_other_servers_aside() -> None:
    engine, session = SchemaEngine(CARDS, TOOLS.values()), SessionLog(seed=3)
    call(engine, session, "mail/move_message", {"message_id": "mail_0003", "folder": "archive"})
    call(engine, session, "mail/delete_forever", {"message_id": "mail_0005"})
    changes = engine.world_changes(session)
    changes[0].server = "elsewhere"  # a server the sandbox does not mirror
    stated = change_set(engine.world_changes(session) + changes)
    assert stated["_changes"] is True and stated["mail"]["messages"]["mail_0005"] is None
    assert stated["mail"]["messages"]["mail_0003"]["folder"] == "archive"
    assert stated["_written"] == {"mail": {"messages": {"mail_0003": ["folder"]}}}
    assert set(stated["_unmirrored"]["elsewhere"]) == {"message"}


def written(c: Any) -> tuple[Any, ...]:
    """What a change says was written (the rest of an updated record is the world as last shown)."""
    values = {k: {f: c.updated[k].get(f) for f in fields} for k, fields in c.changed_fields.items()}
    return c.server, c.kind, sorted(c.created), values, c.deleted


STAR = PlanStep(id="s", tool="mail/star_message", arguments={"message_id": "mail_0003", "starred": True})


def star_task() -> Task:
    """A one-write task: star mail_0003 (unstarred in the seed-0 sandbox)."""
    truth = sandbox_initial_state(0)
    assert truth["mail"]["messages"]["mail_0003"]["starred"] is False
    message = ScenarioEntity(app="mail", kind="message", id="mail_0003",
                             attributes=dict(truth["mail"]["messages"]["mail_0003"]))
    truth["mail"]["messages"]["mail_0003"]["starred"] = True
    base = read_jsonl(ROOT / "tests" / "fixtures" / "tasks_sandbox.jsonl", Task)[0]
    return base.model_copy(update={
        "id": "t-star", "query": "Star the message mail_0003.", "constraints": [], "tools": ["mail/star_message"],
        "rationales": {}, "subgoals": [], "gold_plan": [STAR], "initial_state_seed": 0, "ground_truth": truth,
        "scenario": Scenario(entities=[message])})


@pytest.mark.parametrize("mode", ["live", "synthesized"])
async def test_the_oracle_reaches_the_ground_truth_in_both_modes(tmp_path: Path, mode: str) -> None:
    task = star_task()
    config = RunConfig(agent="scripted:oracle", mode=mode, policy="none", progress=False)
    trajectory = await Runner([task], config, scratch_context(tmp_path / "ws"), tmp_path / "run").run_one(task, 0)
    assert trajectory.end_state is not None and "_changes" not in trajectory.end_state  # a full state in both
    assert set(trajectory.end_state) == set(sandbox_initial_state(0))
    metrics = state_metrics(state_diff(trajectory))
    assert metrics == {"R_c": 1.0, "R_b": 0.0, "state_success": 1.0}
    assert state_matches(trajectory) is True


async def test_the_world_engines_end_state_is_the_live_one(tmp_path: Path) -> None:
    """The seed's world is the live seeded state, and a sandbox app's rules reproduce it: the same episode
    ends in the very same state in both modes."""
    task, ends = star_task(), {}
    for mode in ("live", "synthesized"):
        config = RunConfig(agent="scripted:oracle", mode=mode, policy="none", progress=False)
        ran = await Runner([task], config, scratch_context(tmp_path / mode), tmp_path / f"run-{mode}").run_one(task, 0)
        ends[mode] = ran.end_state
    assert ends["synthesized"] == ends["live"] and ends["live"]["mail"]["messages"]["mail_0003"]["starred"] is True


async def test_a_synthesized_episode_that_writes_nothing_misses_the_change(tmp_path: Path) -> None:
    task = star_task().model_copy(update={"gold_plan": [STAR.model_copy(update={"tool": "mail/get_message",
                                                                                "arguments": {"message_id": "mail_0003"}})]})
    config = RunConfig(agent="scripted:oracle", mode="synthesized", policy="none", progress=False)
    trajectory = await Runner([task], config, scratch_context(tmp_path / "ws"), tmp_path / "run").run_one(task, 0)
    metrics = state_metrics(state_diff(trajectory))
    assert metrics["R_c"] == 0.0 and metrics["state_success"] == 0.0 and state_matches(trajectory) is False
