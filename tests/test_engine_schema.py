"""The schema engine: valid responses for every live tool, a consistent world, determinism, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.cards.operations import entity_for, operation_kind
from cworld.engine.protocol import SessionLog
from cworld.engine.schema.engine import SchemaEngine
from cworld.engine.schema.patterns import response_pattern
from cworld.registry.probe_args import ValueBank, generate_args
from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework.server import tool_specs
from cworld.schemas.validation import validation_error
from cworld.schemas.walk import inline_refs

ROOT = Path(__file__).resolve().parents[1]
CARDS = load_cards(ROOT / "category_cards")
SANDBOX = [t for app in all_apps() for t in tool_specs(app)]
REAL = [ToolSpec.model_validate(t) for t in json.loads((ROOT / "registry/recorded/real_tools.json").read_text())]
BY_ID = {t.id: t for t in SANDBOX + REAL}


def tool(tool_id: str) -> ToolSpec:
    return BY_ID[tool_id]


def call(engine: SchemaEngine, session: SessionLog, tool_id: str, args: dict[str, Any]) -> ToolResult:
    """What a backend does: ask the engine, then log the answer."""
    result = engine.respond_sync(tool(tool_id), args, session)
    session.record(tool_id, args, result)
    return result


def conforms(spec: ToolSpec, result: ToolResult) -> str | None:
    """None when a success follows the output schema, or the card's pattern when there is none."""
    card = CARDS_ENGINE.card_for(spec)
    pattern = response_pattern(spec, card, operation_kind(spec), entity_for(spec, card))
    if pattern.kind == "text":
        return None if result.text.strip() and result.structured_content is None else "empty or structured text answer"
    return validation_error(pattern.schema, result.structured_content)


CARDS_ENGINE = SchemaEngine(CARDS, SANDBOX + REAL)


@pytest.fixture
def engine() -> SchemaEngine:
    return SchemaEngine(CARDS, SANDBOX + REAL)


@pytest.mark.parametrize("group", ["sandbox", "real"])
def test_every_live_tool_answers_within_its_schema(group: str) -> None:
    """Two calls per tool: schema-generated arguments, then arguments harvested from the world's answers
    (so ids exist and reads succeed). Every success validates; failures are classified tool errors."""
    tools = SANDBOX if group == "sandbox" else REAL
    engine = SchemaEngine(CARDS, tools)
    successes, problems = 0, []
    for spec in tools:
        session, bank = SessionLog(seed=7), ValueBank()
        for args in (generate_args(spec), None):
            args = generate_args(spec, bank) if args is None else args
            result = call(engine, session, spec.id, args)
            bank.learn(result)
            if result.is_error:
                assert result.error_class in ("not_found", "invalid_args"), (spec.id, result.text)
                continue
            successes += 1
            problem = conforms(spec, result)
            if problem:
                problems.append(f"{spec.id}: {problem}")
    assert not problems, problems
    assert successes >= len(tools), f"only {successes} successes for {len(tools)} tools"


def test_output_schema_answers_are_structured_and_marked(engine: SchemaEngine) -> None:
    result = call(engine, SessionLog(seed=1), "mail/list_messages", {})
    assert result.structured_content is not None and result.meta["source"] == "engine"
    assert validation_error(inline_refs(tool("mail/list_messages").output_schema or {}), result.structured_content) is None


def test_world_is_seeded_with_plausible_records(engine: SchemaEngine) -> None:
    page = call(engine, SessionLog(seed=3), "mail/list_messages", {"page_size": 50}).structured_content or {}
    messages = page["messages"]
    email = CARDS["email"].entity("message")
    assert email is not None and page["total"] == email.seed_count == len(messages)
    assert all(m["message_id"].startswith("mail_") and len(m["message_id"]) == 9 for m in messages)
    subjects = {m["subject"] for m in messages}
    assert "Invoice #4821 overdue" in subjects  # the card's examples seed the world first


def test_create_then_read_back(engine: SchemaEngine) -> None:
    session = SessionLog(seed=5)
    made = call(engine, session, "mail/add_contact", {"name": "Rita Quinn", "email": "rita@quinn.example"})
    contact_id = (made.structured_content or {})["contact_id"]
    assert contact_id == "contact_0007"  # continues after the six seeded contacts, same format
    got = call(engine, session, "mail/get_contact", {"contact_id": contact_id}).structured_content or {}
    assert (got["name"], got["email"]) == ("Rita Quinn", "rita@quinn.example")
    found = call(engine, session, "mail/search_contacts", {"query": "Rita Quinn"}).structured_content or {}
    assert [c["contact_id"] for c in found["contacts"]] == [contact_id]


def test_fields_shown_once_stay_the_same(engine: SchemaEngine) -> None:
    """Fields the card does not define are generated once and then remembered."""
    session = SessionLog(seed=5)
    first = call(engine, session, "mail/get_message", {"message_id": "mail_0003"}).structured_content or {}
    again = call(engine, session, "mail/star_message", {"message_id": "mail_0003"}).structured_content or {}
    assert first["sender"] == again["sender"] and first["thread_id"] == again["thread_id"]


def test_update_and_delete_are_seen_later(engine: SchemaEngine) -> None:
    session = SessionLog(seed=2)
    call(engine, session, "mail/move_message", {"message_id": "mail_0002", "folder": "archive"})
    moved = call(engine, session, "mail/get_message", {"message_id": "mail_0002"}).structured_content or {}
    assert moved["folder"] == "archive"
    assert not call(engine, session, "mail/delete_contact", {"contact_id": "contact_0001"}).is_error
    again = call(engine, session, "mail/get_contact", {"contact_id": "contact_0001"})
    assert again.is_error and again.error_class == "not_found"


def test_unknown_ids_are_not_found_with_the_card_message(engine: SchemaEngine) -> None:
    result = call(engine, SessionLog(), "mail/get_message", {"message_id": "mail_0999"})
    assert result.is_error and result.error_class == "not_found"
    assert result.text == "not_found: no message 'mail_0999'; list_messages or search_messages give ids"
    git = call(engine, SessionLog(), "filesystem/read_text_file", {"path": "/workspace/nope.txt"})
    assert git.error_class == "not_found" and "ENOENT" in git.text and "/workspace/nope.txt" in git.text


def test_invalid_arguments_are_invalid_args(engine: SchemaEngine) -> None:
    session = SessionLog()
    missing = call(engine, session, "mail/get_message", {})
    wrong = call(engine, session, "calendar/get_event", {"event_id": 12})
    for result in (missing, wrong):
        assert result.is_error and result.error_class == "invalid_args"
        assert result.text.startswith("invalid_args: ")


def _script(engine: SchemaEngine, seed: int) -> list[dict[str, Any]]:
    session = SessionLog(seed=seed)
    calls = [("calendar/list_events", {"start_date": "2026-03-01", "end_date": "2026-03-31"}), ("calendar/create_event", {"title": "Sync", "start": "2026-03-04T10:00:00Z",
             "end": "2026-03-04T10:30:00Z"}), ("calendar/get_event", {"event_id": "evt_0009"}),
             ("shop/search_products", {"query": ""}), ("git/git_log", {"repo_path": "/r"}), ("time/get_current_time",
             {"timezone": "Asia/Tokyo"}), ("memory/read_graph", {})]
    return [call(engine, session, t, a).model_dump() for t, a in calls]


def test_same_seed_same_calls_same_answers() -> None:
    first = _script(SchemaEngine(CARDS, SANDBOX + REAL), seed=11)
    second = _script(SchemaEngine(CARDS, SANDBOX + REAL), seed=11)
    assert first == second
    assert first != _script(SchemaEngine(CARDS, SANDBOX + REAL), seed=12)


def test_ids_follow_the_tools_own_examples(engine: SchemaEngine) -> None:
    """The shop's schema shows `SKU-1042`, the chat's `C_0003`: the simulated ids look the same."""
    session = SessionLog(seed=4)
    products = call(engine, session, "shop/search_products", {"query": ""}).structured_content or {}
    listed = json.dumps(products)
    assert "SKU-" in listed
    channels = call(engine, session, "chat/list_channels", {}).structured_content or {}
    assert all(c["channel_id"].startswith("C_") for c in channels["channels"])
    made = call(engine, session, "calendar/create_event", {"title": "Sync", "start": "2026-03-04T10:00:00Z",
                                                          "end": "2026-03-04T11:00:00Z"})
    assert (made.structured_content or {})["event_id"] == "evt_0009"


def test_references_point_at_existing_records(engine: SchemaEngine) -> None:
    session = SessionLog(seed=8)
    window = {"start_date": "2026-01-01", "end_date": "2026-12-31", "page_size": 50}
    events = (call(engine, session, "calendar/list_events", window).structured_content or {})["events"]
    calendars = (call(engine, session, "calendar/list_calendars", {}).structured_content or {})["calendars"]
    assert {e["calendar_id"] for e in events} <= {c["calendar_id"] for c in calendars}
    assert events and all(e["start"] < e["end"] for e in events)
    march = {"start_date": "2026-03-01", "end_date": "2026-03-31", "page_size": 50}
    in_march = (call(engine, session, "calendar/list_events", march).structured_content or {})["events"]
    assert all("2026-03-01" <= e["start"][:10] <= "2026-03-31" for e in in_march) and len(in_march) < len(events)


def test_text_servers_answer_in_their_own_style(engine: SchemaEngine) -> None:
    session = SessionLog(seed=1)
    log = call(engine, session, "git/git_log", {"repo_path": "/repo", "max_count": 2})
    assert log.structured_content is None and log.text.count("Commit: ") == 2
    commit = call(engine, session, "git/git_commit", {"repo_path": "/repo", "message": "Add notes"})
    sha = commit.text.rsplit(" ", 1)[-1]
    assert len(sha) == 40
    latest = call(engine, session, "git/git_log", {"repo_path": "/repo", "max_count": 1}).text
    assert sha in latest and "Add notes" in latest
    rows = call(engine, session, "sqlite/read_query", {"query": "SELECT * FROM items"}).text
    assert rows.startswith("[{") and "'name': 'widget'" in rows


def test_batch_creates_and_reads_in_the_knowledge_graph(engine: SchemaEngine) -> None:
    session = SessionLog(seed=1)
    entities = [{"name": "Rita", "entityType": "person", "observations": ["likes tea"]}]
    call(engine, session, "memory/create_entities", {"entities": entities})
    opened = call(engine, session, "memory/open_nodes", {"names": ["Rita", "Nobody"]}).structured_content or {}
    assert [e["name"] for e in opened["entities"]] == ["Rita"]
    call(engine, session, "memory/delete_entities", {"entityNames": ["Rita"]})
    assert (call(engine, session, "memory/open_nodes", {"names": ["Rita"]}).structured_content or {})["entities"] == []


def test_files_written_can_be_read_and_listed(engine: SchemaEngine) -> None:
    session = SessionLog(seed=1)
    call(engine, session, "filesystem/write_file", {"path": "/workspace/todo.txt", "content": "buy milk"})
    read = call(engine, session, "filesystem/read_text_file", {"path": "/workspace/todo.txt"})
    assert read.structured_content == {"content": "buy milk"} and read.text == "buy milk"
    listing = call(engine, session, "filesystem/list_directory", {"path": "/workspace"}).text
    assert "todo.txt" in listing or "[FILE]" in listing
    moved = call(engine, session, "filesystem/move_file", {"source": "/workspace/todo.txt",
                                                          "destination": "/workspace/done.txt"})
    assert "done.txt" in moved.text
    gone = call(engine, session, "filesystem/read_text_file", {"path": "/workspace/todo.txt"})
    assert gone.error_class == "not_found"


def test_the_log_is_the_truth(engine: SchemaEngine) -> None:
    """A fault the controller logged instead of the engine's answer did not happen; a create another
    engine answered keeps the id the agent saw."""
    session = SessionLog(seed=9)
    args = {"name": "Faulted", "email": "f@x.example"}
    engine.respond_sync(tool("mail/add_contact"), args, session)
    session.record("mail/add_contact", args, ToolResult.error("timeout", "timed out"))
    found = call(engine, session, "mail/search_contacts", {"query": "Faulted"}).structured_content or {}
    assert found["contacts"] == []
    recorded = ToolResult.ok({"contact_id": "contact_0042", "name": "From LLM"})
    session.record("mail/add_contact", {"name": "From LLM", "email": "llm@x.example"}, recorded)
    got = call(engine, session, "mail/get_contact", {"contact_id": "contact_0042"})
    assert not got.is_error and (got.structured_content or {})["name"] == "From LLM"


def test_open_world_entities_exist_when_asked(engine: SchemaEngine) -> None:
    session = SessionLog(seed=1)
    page = call(engine, session, "fetch/fetch", {"url": "https://docs.example/guide"})
    assert page.text.startswith("Contents of https://docs.example/guide:")
    hits = call(engine, session, "brave-search/brave_web_search", {"query": "tide tables"}).text
    assert hits.count("Title: Tide tables") == 3


def test_session_file_round_trip(tmp_path: Path, engine: SchemaEngine) -> None:
    session = SessionLog(seed=4)
    call(engine, session, "mail/add_contact", {"name": "Ann", "email": "ann@x.example"})
    path = tmp_path / "session.json"
    path.write_text(session.model_dump_json())
    loaded = SessionLog.load(path)
    got = call(SchemaEngine(CARDS, SANDBOX + REAL), loaded, "mail/get_contact", {"contact_id": "contact_0007"})
    assert (got.structured_content or {})["name"] == "Ann"


def test_one_value_generator_with_a_probe_and_a_realistic_mode() -> None:
    """Validation probes and the schema engine walk a schema the same way and differ only in their choices."""
    import random

    from cworld.schemas.probe import ProbeValues
    from cworld.schemas.realistic import RealisticValues

    schema = {"type": "object", "required": ["color"], "properties": {"color": {"enum": ["red", "green", "blue"]}}}
    probe = ProbeValues(schema)
    assert probe.value(schema) == {"color": "red"}  # the schema's own first choice, no randomness
    first = RealisticValues(random.Random(3)).value(schema)
    assert first == RealisticValues(random.Random(3)).value(schema) and first["color"] in ("red", "green", "blue")
    optional = {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 5, "maximum": 5}]}
    assert probe.value(optional) == 5 and RealisticValues(random.Random(0)).value(optional) == 5
