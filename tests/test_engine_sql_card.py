"""The SQL-database card on a database written for the test (issue 33): SQLite itself runs the statement on the
world's tables (rule function `sql_run`), so a write changes them and a later read sees it, a read tool refuses a
write, and SQLite's error is the answer's (a missing table `not_found`)."""

from __future__ import annotations

import ast
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

QUERY = {"query": {"type": "string"}}


def tool(name: str) -> ToolSpec:
    return ToolSpec(server="shop-db", name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": QUERY, "required": ["query"]})


def database() -> Any:
    tables = {"items": {"sql": "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER)",
                        "columns": [{"cid": 0, "name": "id", "type": "INTEGER", "notnull": 0, "dflt_value": None, "pk": 1},
                                    {"cid": 1, "name": "name", "type": "TEXT", "notnull": 1, "dflt_value": None, "pk": 0},
                                    {"cid": 2, "name": "qty", "type": "INTEGER", "notnull": 0, "dflt_value": None, "pk": 0}],
                        "rows": {"1": {"id": 1, "name": "widget", "qty": 5}}}}
    return rules_caller("shop-db", "sql_database", {"tables": tables}, {"table": "tables"},
                        [tool("read_query"), tool("write_query")])


def test_a_write_changes_the_tables_and_a_read_sees_it() -> None:
    call = database()
    assert not call("write_query", query="INSERT INTO items (name, qty) VALUES ('gadget', 2)").is_error
    rows = call("read_query", query="SELECT name, qty FROM items ORDER BY id")
    assert ast.literal_eval(rows.text) == [{"name": "widget", "qty": 5}, {"name": "gadget", "qty": 2}]


def test_a_read_tool_refuses_a_write_and_sqlites_errors_are_the_answers() -> None:
    call = database()
    assert call("read_query", query="DELETE FROM items").error_class == "business"
    missing = call("read_query", query="SELECT * FROM nope")
    assert missing.error_class == "not_found" and "no such table" in missing.text
    assert call("write_query", query="INSERT INTO items (qty) VALUES (1)").error_class == "business"  # NOT NULL


def test_tables_kept_as_records_are_no_database_and_crash_nothing() -> None:
    """A dashboard service's world lists tables as records (no CREATE statement): a query is SQLite's error on
    a database that lacks them, never an internal error, and a write keeps those records beside its own."""
    listed = {"tbl_0001": {"id": "tbl_0001", "name": "orders", "row_count": 12}}
    call = rules_caller("shop-db", "sql_database", {"tables": listed}, {"table": "tables"},
                        [tool("execute_query")])
    nonsense = call("execute_query", query="zzqxv nonexistent")
    assert nonsense.error_class == "invalid_args" and "syntax error" in nonsense.text
    assert call("execute_query", query="DELETE FROM orders").error_class == "not_found"
    assert not call("execute_query", query="CREATE TABLE notes (body TEXT)").is_error
    assert not call("execute_query", query="INSERT INTO notes (body) VALUES ('hi')").is_error
