"""Learning a folder made with its missing parents (docs/world-engine.md "Learning rules"): a call that made
the folder its path names and the folders above it that were not there is one `each` effect over the path
and its ancestors, replayed on a deeper path than the traffic showed; a file written under a folder that
exists makes no such loop."""

from __future__ import annotations

import copy
from typing import Any

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.learn.learner import induce
from cworld.engine.learn.replay import run_on
from cworld.engine.learn.traffic import Observation

NOW = "2026-08-21T09:45:20Z"
ROOT = "/scratch/fs"
MKDIR = ToolSpec.model_validate({
    "server": "fs", "name": "create_directory", "description": "make a folder and its parents (test)",
    "input_schema": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}},
    "annotations": {"read_only_hint": False}})
WRITE = ToolSpec.model_validate({
    "server": "fs", "name": "write_file", "description": "write a file (test)",
    "input_schema": {"type": "object", "required": ["path", "content"],
                     "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
    "annotations": {"read_only_hint": False}})


def _mkdir(state: dict[str, Any], path: str) -> dict[str, Any]:
    """The service (the test's stand-in): every missing folder on the way is made."""
    after = copy.deepcopy(state)
    parts = path.split("/")
    for i in range(len(parts)):
        key = "/".join(parts[: i + 1])
        after["directories"].setdefault(key, {"parent": key.rpartition("/")[0]})
    return after


def test_a_folder_made_with_its_missing_parents_is_one_loop_over_the_path() -> None:
    state: dict[str, Any] = {"root": ROOT, "files": {}, "directories": {"docs": {"parent": ""}}}
    calls = []
    for path in ("docs/a", "docs/b/c", "notes", "x/y/z", "docs/a/d"):
        after = _mkdir(state, path)
        calls.append(Observation(MKDIR, {"path": f"{ROOT}/{path}"}, ToolResult.ok({}), NOW, state, after))
        state = after
    rule, _ = induce(MKDIR, calls)
    assert [e.each for e in rule.do if e.each], rule.do
    world = {"root": ROOT, "files": {}, "directories": {"m": {"parent": ""}}}
    verdict, after = run_on(rule, Observation(MKDIR, {"path": f"{ROOT}/m/n/o/p"}, ToolResult.ok({}), NOW, world))
    assert verdict == "ok" and after["directories"] == _mkdir(world, "m/n/o/p")["directories"]


def test_a_file_written_in_a_folder_that_exists_makes_no_loop() -> None:
    state: dict[str, Any] = {"root": ROOT, "files": {}, "directories": {"docs": {"parent": ""}}}
    calls = []
    for i, path in enumerate(("docs/a.md", "b.md", "docs/c.md")):
        after = copy.deepcopy(state)
        after["files"][path] = {"parent": path.rpartition("/")[0], "content": str(i)}
        calls.append(Observation(WRITE, {"path": f"{ROOT}/{path}", "content": str(i)}, ToolResult.ok({}), NOW,
                                 state, after))
        state = after
    rule, _ = induce(WRITE, calls)
    assert rule.do and not any(e.each for e in rule.do), rule.do


STATUS = ToolSpec.model_validate({
    "server": "vcs", "name": "status", "description": "a repository's status (test)",
    "input_schema": {"type": "object", "required": ["repo_path"], "properties": {"repo_path": {"type": "string"}}},
    "annotations": {"read_only_hint": True}})


def test_another_repository_is_refused_and_the_same_one_written_with_a_slash_is_not() -> None:
    state = {"repo": "/scratch/git/repo", "branches": {"main": {"commit": "c1"}}}
    calls = [Observation(STATUS, {"repo_path": path}, result, NOW, state)
             for path, result in [("/scratch/git/repo", ToolResult.ok({}))] * 4 +
             [(p, ToolResult.error("business", "outside the repository"))
              for p in ("/tmp/x", "/scratch/git/other", "/scratch/git/repo/..")]]
    rule, _ = induce(STATUS, calls)
    for path, verdict in (("/scratch/git/repo/", "ok"), ("/scratch/git/repo", "ok"), ("/scratch/git/elsewhere", "business")):
        assert run_on(rule, Observation(STATUS, {"repo_path": path}, ToolResult.ok({}), NOW, state))[0] == verdict, path


def test_a_file_written_below_a_file_is_refused_however_deep() -> None:
    state: dict[str, Any] = {"root": ROOT, "files": {"a.txt": {"parent": "", "content": "x"}},
                             "directories": {"docs": {"parent": ""}, "docs/sub": {"parent": "docs"}}}
    calls = []
    for i, path in enumerate(("docs/a.md", "b.md", "docs/sub/c.md", "a.txt/d.md", "a.txt/e/f.md", "docs/g.md")):
        refused = path.startswith("a.txt/")
        after = copy.deepcopy(state)
        if not refused:
            after["files"][path] = {"parent": path.rpartition("/")[0], "content": str(i)}
        result = ToolResult.error("business", "ENOTDIR: not a directory") if refused else ToolResult.ok({})
        calls.append(Observation(WRITE, {"path": f"{ROOT}/{path}", "content": str(i)}, result, NOW, state,
                                 state if refused else after))
    rule, _ = induce(WRITE, calls)
    world = {"root": ROOT, "files": {"n.txt": {"parent": "", "content": "y"}}, "directories": {}}
    deep = Observation(WRITE, {"path": f"{ROOT}/n.txt/p/q/r.md", "content": "z"}, ToolResult.ok({}), NOW, world)
    assert run_on(rule, deep)[0] == "business", rule.check
    fine = Observation(WRITE, {"path": f"{ROOT}/s.md", "content": "z"}, ToolResult.ok({}), NOW, world)
    assert run_on(rule, fine)[0] == "ok", rule.check
