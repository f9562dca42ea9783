"""Learning a value reached through a pointer (docs/world-engine.md "Learning rules"): a new branch starts at
the commit of the branch the head names, or of the base branch the call names, replayed on a world the
traffic never showed (another branch checked out, another branch to start from)."""

from __future__ import annotations

import copy
from typing import Any

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.learn.learner import induce
from cworld.engine.learn.replay import run_on
from cworld.engine.learn.traffic import Observation

NOW = "2026-08-21T09:45:20Z"
BRANCH = ToolSpec.model_validate({
    "server": "vcs", "name": "create_branch", "description": "create a branch (test)",
    "input_schema": {"type": "object", "required": ["name"],
                     "properties": {"name": {"type": "string"}, "base": {"type": "string"}}},
    "annotations": {"read_only_hint": False}})
FILE_A, FILE_B = {"content": "a", "blob": "b1"}, {"content": "b", "blob": "b2"}


def _repo(head: str, index: dict[str, Any]) -> dict[str, Any]:
    """Two branches on two commits, the head on one of them, an index."""
    return {"head": {"branch": head, "commit": None},
            "branches": {"main": {"commit": "c1" * 20}, "dev": {"commit": "c2" * 20}},
            "commits": {"c1" * 20: {"message": "one", "tree": {"a.md": FILE_A}},
                        "c2" * 20: {"message": "two", "tree": {"a.md": FILE_A, "b.md": FILE_B}}},
            "index": index}


def _branch_calls() -> list[Observation]:
    out = []
    for i, (head, base) in enumerate([("main", None), ("dev", None), ("main", "dev"), ("dev", "main"),
                                      ("main", None), ("dev", None), ("main", "main")]):
        before = _repo(head, {"a.md": FILE_A})
        after = copy.deepcopy(before)
        start = before["branches"][base or head]["commit"]
        after["branches"][f"topic-{i}"] = {"commit": start}
        args = {"name": f"topic-{i}", **({"base": base} if base else {})}
        out.append(Observation(BRANCH, args, ToolResult.ok({}), NOW, before, after))
    return out


def test_a_new_branch_starts_at_the_commit_the_base_or_the_head_names() -> None:
    rule, _ = induce(BRANCH, _branch_calls())
    world = _repo("dev", {})
    world["branches"]["feature"] = {"commit": "c1" * 20}
    for args, start in (({"name": "x"}, "c2" * 20), ({"name": "y", "base": "feature"}, "c1" * 20)):
        verdict, after = run_on(rule, Observation(BRANCH, args, ToolResult.ok({}), NOW, world))
        assert verdict == "ok" and after["branches"][args["name"]] == {"commit": start}, rule.do

