"""The file-system card on a file store written for the test (issue 33): paths are read under the store's root
(`/srv/box/notes/a.md` names `notes/a.md`), and a move renames a path as POSIX rename does: the source must
exist, the destination must not, a folder moves with what is under it and never into itself."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR = {"type": "string"}


def tool(name: str, props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(server="box-files", name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": list(props)})


TOOLS = [tool("read_file", {"path": STR}), tool("move_file", {"source": STR, "destination": STR})]


def store() -> Any:
    state = {"root": "/srv/box",
             "files": {"todo.txt": {"parent": "", "content": "milk"},
                       "notes/a.md": {"parent": "notes", "content": "# A"}},
             "directories": {"notes": {"parent": ""}, "archive": {"parent": ""}}}
    return rules_caller("box-files", "file_system", state, {"file": "files", "directory": "directories"}, TOOLS)


def test_a_path_is_read_under_the_root() -> None:
    call = store()
    assert "milk" in call("read_file", path="/srv/box/todo.txt").text
    assert call("read_file", path="/srv/box/nope.txt").error_class == "not_found"


def test_a_move_renames_a_path_and_a_folder_moves_with_its_files() -> None:
    call = store()
    assert call("move_file", source="/srv/box/gone.txt", destination="/srv/box/x.txt").error_class == "not_found"
    assert call("move_file", source="/srv/box/todo.txt", destination="/srv/box/notes/a.md").error_class == "business"
    assert call("move_file", source="/srv/box/notes", destination="/srv/box/notes/deeper").error_class == "invalid_args"
    assert not call("move_file", source="/srv/box/notes", destination="/srv/box/archive/notes").is_error
    moved = call("read_file", path="/srv/box/archive/notes/a.md")
    assert not moved.is_error and "# A" in json.dumps(moved.text)
    assert call("read_file", path="/srv/box/notes/a.md").error_class == "not_found"
