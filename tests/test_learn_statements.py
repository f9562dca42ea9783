"""Learning an argument that is a statement applied to the state (docs/world-engine.md "Learning rules"): SQL
run on a database's tables, learned from state diffs a real SQLite database gave, replayed on a world the
learner never saw; an argument that is no statement gets no such effect."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.learn.learner import induce
from cworld.engine.learn.replay import run_on
from cworld.engine.learn.traffic import Observation
from cworld.engine.rules.expr import Evaluator
from cworld.engine.world.real import read_database

NOW = "2026-08-21T09:45:20Z"
WRITE = ToolSpec.model_validate({
    "server": "db", "name": "write_query", "description": "run a write statement (test)",
    "input_schema": {"type": "object", "required": ["query"], "properties": {"query": {"type": "string"}}},
    "annotations": {"read_only_hint": False}})
NOTE = ToolSpec.model_validate({
    "server": "db", "name": "add_note", "description": "add a note (test)",
    "input_schema": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
    "annotations": {"read_only_hint": False}})
STATEMENTS = [
    "INSERT INTO items (name, qty) VALUES ('bolt', 5)", "UPDATE items SET qty = qty + 1 WHERE name = 'nut'",
    "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)", "INSERT INTO notes (body) VALUES ('hi')",
    "DELETE FROM items WHERE qty > 50", "INSERT INTO items (name, qty) VALUES ('washer', NULL)",
    "UPDATE items SET name = 'O''Brien' WHERE id = 1", "INSERT INTO missing VALUES (1)",
    "ALTER TABLE notes ADD COLUMN tag TEXT", "UPDATE notes SET tag = 'x'",
]


def _traffic(tmp: Path, rows: list[tuple[str, int]]) -> list[Observation]:
    """The statements run on a real SQLite file (the service), its tables read before and after each."""
    path = tmp / "db.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL)")
        db.executemany("INSERT INTO items (name, qty) VALUES (?, ?)", rows)
    db.close()
    out = []
    for query in STATEMENTS:
        before = read_database(path, "/db")
        with sqlite3.connect(path) as db:
            try:
                db.execute(query)
                result = ToolResult.ok({"text": "done"})
            except sqlite3.Error as exc:
                result = ToolResult.ok({"text": f"Database error: {exc}"})  # the server answers errors as text
        db.close()
        out.append(Observation(WRITE, {"query": query}, result, NOW, before, read_database(path, "/db")))
    return out


def test_sql_tables_runs_a_statement_on_a_worlds_tables(tmp_path: Path) -> None:
    calls = _traffic(tmp_path, [("nut", 80)])
    ev = Evaluator({"tables": calls[0].before["tables"] if calls[0].before else {}})
    after = ev("sql_tables(tables, \"INSERT INTO items (name, qty) VALUES ('x', 2)\")")
    assert after["items"]["rows"]["2"] == {"id": 2, "name": "x", "qty": 2}
    assert ev("sql_tables(tables, 'SELECT * FROM items')") == ev("tables")  # a read changes nothing
    assert ev("sql_tables(tables, 'DROP TABLE nope')") == ev("tables")  # nor an error


def test_a_statement_argument_is_learned_as_applied_to_the_state_and_replays_on_another_world(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    rule, _ = induce(WRITE, _traffic(tmp_path / "a", [("nut", 80), ("screw", 10)]))
    assert [e.value for e in rule.do] == ["sql_tables(tables, args['query'])"], rule.do
    for obs in _traffic(tmp_path / "b", [("gear", 3), ("nut", 60), ("pin", 99)]):  # another world's rows
        verdict, after = run_on(rule, obs)
        assert verdict == "ok" and after["tables"] == (obs.after or {})["tables"], obs.arguments


def test_an_argument_that_is_no_statement_gets_no_statement_effect() -> None:
    """It reads as SQL (`select 3`), but applying it does not give the state after: the replay decides."""
    calls = []
    for i in range(6):
        before: dict[str, Any] = {"notes": {f"select {j}": {"size": j} for j in range(i)}}
        after = {"notes": {**before["notes"], f"select {i}": {"size": i}}}
        calls.append(Observation(NOTE, {"text": f"select {i}"}, ToolResult.ok({}), NOW, before, after))
    rule, _ = induce(NOTE, calls)
    assert rule.do and not any("sql_tables" in str(e.value) for e in rule.do), rule.do
