"""The file-system card's writes on a file store written for the test (issue 33): an edit replaces exact text in
turn or changes nothing, a write needs its folder and is no folder itself, mkdir makes the folders above, a
folder is neither read as a file nor a file listed as a folder; and a database card describes a table as SQLite
does."""

from __future__ import annotations

import ast
import json
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR = {"type": "string"}
EDITS = {"type": "array", "items": {"type": "object", "properties": {"oldText": STR, "newText": STR}}}


def tool(name: str, props: dict[str, Any], server: str = "box-files") -> ToolSpec:
    return ToolSpec(server=server, name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": list(props)})


TOOLS = [tool("read_file", {"path": STR}), tool("write_file", {"path": STR, "content": STR}),
         tool("edit_file", {"path": STR, "edits": EDITS}), tool("create_directory", {"path": STR}),
         tool("list_directory", {"path": STR})]


def store() -> Any:
    state = {"root": "/srv/box",
             "files": {"todo.txt": {"parent": "", "content": "milk\neggs\n", "size": 10}},
             "directories": {"notes": {"parent": ""}}}
    return rules_caller("box-files", "file_system", state, {"file": "files", "directory": "directories"}, TOOLS)


def content(call: Any, path: str) -> str:
    text = call("read_file", path=path).text
    return str(json.loads(text)["content"]) if text.startswith("{") else text


def test_an_edit_replaces_in_turn_or_changes_nothing() -> None:
    call = store()
    missed = call("edit_file", path="/srv/box/todo.txt", edits=[{"oldText": "milk", "newText": "oat milk"},
                                                               {"oldText": "bread", "newText": "rye"}])
    assert missed.error_class == "business" and "bread" in missed.text
    assert content(call, "/srv/box/todo.txt") == "milk\neggs\n"
    assert not call("edit_file", path="/srv/box/todo.txt", edits=[{"oldText": "milk", "newText": "oat milk"},
                                                                  {"oldText": "oat milk\neggs", "newText": "tea"}]).is_error
    assert content(call, "/srv/box/todo.txt") == "tea\n"


def test_a_write_needs_its_folder_and_is_no_folder() -> None:
    call = store()
    assert call("write_file", path="/srv/box/nowhere/a.txt", content="x").error_class == "not_found"
    assert call("write_file", path="/srv/box/notes", content="x").error_class == "business"
    assert not call("write_file", path="/srv/box/notes/empty.txt", content="").is_error  # an empty file is a file
    assert content(call, "/srv/box/notes/empty.txt") in ("", "(empty)")  # how an empty text is shown


def test_mkdir_makes_the_folders_above_and_folders_are_not_files() -> None:
    call = store()
    assert not call("create_directory", path="/srv/box/a/b/c").is_error
    assert not call("write_file", path="/srv/box/a/b/c/d.txt", content="deep").is_error
    assert call("create_directory", path="/srv/box/todo.txt/sub").error_class == "business"  # ENOTDIR
    assert call("read_file", path="/srv/box/a/b").error_class == "business"  # EISDIR
    assert call("list_directory", path="/srv/box/todo.txt").error_class == "business"  # ENOTDIR
    assert call("list_directory", path="/srv/box/zzz").error_class == "not_found"


def test_a_table_is_described_as_sqlite_describes_it() -> None:
    tables = {"pets": {"sql": "CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT)", "columns": [],
                       "rows": {"1": {"id": 1, "name": "Rex"}}}}
    describe = tool("describe_table", {"table_name": STR}, server="pet-db")
    call = rules_caller("pet-db", "sql_database", {"tables": tables}, {}, [describe])
    columns = ast.literal_eval(call("describe_table", table_name="pets").text)  # shown as the SQLite server does
    assert [c["name"] for c in columns] == ["id", "name"]
    assert ast.literal_eval(call("describe_table", table_name="nope").text) == []
