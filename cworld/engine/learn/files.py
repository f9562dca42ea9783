"""The learned rule file a person reviews: `SERVER.learned.yaml`, the rules under `tools:` (loaded beside
the hand-written `SERVER.yaml`, which wins per tool) and, under `learned:`, each rule's provenance (the
calls that support each step, held-out agreement, the calls it still gets wrong).

A file a person corrected is never overwritten: the file keeps the fingerprint of the rules as learning wrote
them, and when the rules no longer match it, a new learning run writes `SERVER.learned.yaml.proposed` and
shows the difference instead."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cworld.data_model.jsonl import write_text_atomic
from cworld.engine.learn.learner import ServerLearning, ToolLearning
from cworld.engine.rules.spec import LEARNED_SUFFIX
from cworld.errors import ContentError

WRONG_SHOWN = 10


@dataclass
class Written:
    """Where the rules went: `path` written, or `proposed` beside a hand-corrected `path` (with `diff`)."""

    path: Path
    proposed: Path | None = None
    diff: str = ""


def default_path(operations: Path, workspace: Path, server: str) -> Path:
    """The content folder's `_operations/` when it can be written (a checkout), else the workspace's
    `learned/` (an installed environment is read-only); both are loaded by runs."""
    if operations.is_dir() and os.access(operations, os.W_OK):
        return operations / f"{server}{LEARNED_SUFFIX}"
    return workspace / "learned" / f"{server}{LEARNED_SUFFIX}"


def fingerprint(tools: Any) -> str:
    return hashlib.sha256(json.dumps(tools, sort_keys=True, default=str).encode()).hexdigest()[:16]


def document(learning: ServerLearning, how: str) -> dict[str, Any]:
    """The file's content: the rules proposed and every tool's provenance."""
    tools = {t.tool: t.rule.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True, exclude={"origin"})
             for t in learning.tools if t.rule is not None and t.source in ("traffic", "model")}
    return {"server": learning.server, "fingerprint": fingerprint(tools),
            "learned": {"from": how, "calls": learning.calls, "tools": {t.tool: provenance(t) for t in learning.tools}},
            "tools": tools}


def provenance(t: ToolLearning) -> dict[str, Any]:
    if t.source == "none":
        return {"calls": 0, "note": "never called: no rule learned"}
    out: dict[str, Any] = {"calls": t.calls, "from": t.source,
                           "agreement": f"{t.final.agree}/{t.final.calls} calls",
                           "held_out": f"{t.held.agree}/{t.held.calls} calls after {t.rounds} round(s)",
                           "engine_rule_before": f"{t.base.agree}/{t.base.calls} calls"}
    if t.final.live_leaves:
        out["changes"] = (f"{t.final.reproduced}/{t.final.live_leaves} state leaves reproduced, "
                          f"{t.final.unwanted} unwanted")
    if t.source == "base":
        out["note"] = "the engine's own rule for this tool did as well on these calls: nothing proposed"
    out["support"] = t.support
    if t.final.wrong:
        out["wrong"] = t.final.wrong[:WRONG_SHOWN] + ([f"... {len(t.final.wrong) - WRONG_SHOWN} more"]
                                                     if len(t.final.wrong) > WRONG_SHOWN else [])
    return out


def render(doc: dict[str, Any]) -> str:
    head = (f"# Rules learned from {doc['server']}'s traffic by `cworld world learn` (docs/world-engine.md, "
            "\"Learning rules\").\n# Review them; a corrected file is kept: learning again writes "
            f"{doc['server']}{LEARNED_SUFFIX}.proposed beside it.\n")
    return head + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110)


def edited(path: Path) -> bool:
    """The file's rules are not the ones learning wrote (a person corrected them)."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return True
    if not isinstance(raw, dict):
        return True
    return raw.get("fingerprint") != fingerprint(raw.get("tools") or {})


def write(doc: dict[str, Any], path: Path) -> Written:
    """Write the rules, or, beside a file a person corrected, propose them with the difference."""
    text = render(doc)
    if path.exists() and edited(path):
        proposed = path.with_name(path.name + ".proposed")
        _atomic(proposed, text)
        old = path.read_text(encoding="utf-8").splitlines(keepends=True)
        diff = "".join(difflib.unified_diff(old, text.splitlines(keepends=True), str(path), str(proposed)))
        return Written(path, proposed, diff)
    _atomic(path, text)
    return Written(path)


def _atomic(path: Path, text: str) -> None:
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise ContentError(f"cannot write {path}: {exc.strerror or exc}") from None
