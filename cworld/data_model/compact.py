"""Compact trajectory lines (schema version 2): what a line of `trajectories.jsonl` holds, and back.

A full `Trajectory` repeats, in every episode, what the run folder can keep once or what the line already
holds. The compact line leaves out, losslessly:

- the task: `task_ref: {id, sha256}` names one record of the run folder's task file (`task_sha256`);
- a full end state (live, hybrid, and synthesized with the world engine, the default, whose end state is
  the world's full state): `end_state_diff: {base, patch}`, an RFC 6902 JSON Patch from the task's initial
  state (kept once in the run folder under its sha256, `base`); a change set (synthesized with the schema
  engine, `_changes`) is already a diff from that state and stays in `end_state`;
- an observation equal to the step's raw result (nothing intervened): `"observation": "raw"`; one that
  differs (a fault changed it): `observation_delta` when shorter, its fields that differ from the raw
  result, a truncated text as the length of the raw text it starts with and the rest;
- a tool result's text block that is the JSON of its structured content (`ToolResult.ok`):
  `"content": "structured"`;
- a constraint of the task in `constraints_final`: its index in `task.constraints`;
- a step's `index` when it is the step's position, a call's `id` when it is the runner's own
  (`call_<turn>`, `search_<turn>`), an intervention's `turn` and `tool` when they are its step's;
- every field at its default value.

`decode_line` restores the very `Trajectory` (`encode_line` then `decode_line` is the identity). A line of
version 1 (the full task and end state inline) is decoded as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import jsonpatch

from cworld.data_model.tasks import Task
from cworld.data_model.tools import ToolResult
from cworld.data_model.trajectory import Step, Trajectory
from cworld.data_model.versioning import TRAJECTORY_LINE_VERSION

RAW = "raw"
STRUCTURED = "structured"
CHANGES_KEY = "_changes"
"""Marks a change set (a synthesized episode of the schema engine: `cworld.sandbox.statediff.overlay`)."""


def task_sha256(task: Task) -> str:
    """The content hash a compact line refers to its task by: sha256 of the task's JSON."""
    return sha256_text(task.model_dump_json())


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_compact(record: dict[str, Any]) -> bool:
    return record.get("schema_version") == TRAJECTORY_LINE_VERSION or "task_ref" in record


def needs_base(end_state: dict[str, Any] | None) -> bool:
    """A full end state is stored as a diff from the initial state; a change set or nothing is kept as is."""
    return isinstance(end_state, dict) and end_state.get(CHANGES_KEY) is not True


# --- lines -------------------------------------------------------------------------------------------
def encode_line(trajectory: Trajectory, task_sha: str | None,
                base: tuple[str, dict[str, Any]] | None = None) -> str:
    """The compact JSON line of `trajectory`. `task_sha` is its task's hash (None: no task); `base` is the
    (sha256, state) the end state is diffed from (None: the end state stays inline)."""
    task = trajectory.task
    record = trajectory.model_dump(mode="json", exclude_defaults=True, exclude={"task", "end_state"})
    record["schema_version"] = TRAJECTORY_LINE_VERSION
    if task is not None and task_sha is not None:
        record["task_ref"] = {"id": task.id, "sha256": task_sha}
    elif task is not None:
        record["task"] = task.model_dump(mode="json")
    _put_end_state(record, trajectory.end_state, base)
    for position, (step, model) in enumerate(zip(record.get("steps", []), trajectory.steps, strict=True)):
        _encode_step(step, position, model)
    if task is not None and "constraints_final" in record:
        record["constraints_final"] = _encode_constraints(record["constraints_final"], task)
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def decode_line(record: dict[str, Any], task: Task | None, base: dict[str, Any] | None) -> Trajectory:
    """A full `Trajectory` from a line's JSON; `task` and `base` are what its refs name (None when it has
    none; `base` is consumed: give a fresh copy). A line of version 1 needs neither."""
    if not is_compact(record):
        return Trajectory.model_validate(record)
    record = dict(record)
    record.pop("task_ref", None)
    record.pop("schema_version", None)  # the resolved record is a full one (version 1)
    diff = record.pop("end_state_diff", None)
    if diff is not None:
        if base is None:
            raise ValueError("the end state's base state is missing")
        record["end_state"] = apply_state_patch(base, diff["patch"])
    for position, step in enumerate(record.get("steps", [])):
        _decode_step(step, position)
    if task is not None:
        record["constraints_final"] = _decode_constraints(record.get("constraints_final", []), task)
    trajectory = Trajectory.model_validate(record)
    if task is not None:
        trajectory.task = task
    return trajectory


def _put_end_state(record: dict[str, Any], end_state: dict[str, Any] | None,
                   base: tuple[str, dict[str, Any]] | None) -> None:
    if end_state is None:
        return
    if base is not None and needs_base(end_state):
        patch = state_patch(base[1], end_state)
        if _shorter_than_state(len(json.dumps(patch)), patch, base, end_state):
            record["end_state_diff"] = {"base": base[0], "patch": patch}
            return
    record["end_state"] = end_state


_BASE_LENGTHS: dict[str, int] = {}
"""The JSON length of each base state seen (by its sha256): a base serves a whole run's episodes."""


def _shorter_than_state(patch_length: int, patch: list[dict[str, Any]], base: tuple[str, dict[str, Any]],
                        end_state: dict[str, Any]) -> bool:
    """Is the patch's JSON shorter than the end state's? Told without writing the whole end state (a
    120 KB state per episode, most of a line's cost) when the end state's length is bounded from below
    well above the patch's: the base's length less everything the patch removes or replaces in it. The
    margin (half) covers values the patch leaves alone that are equal but written differently (1 and
    1.0); below it the end state is written and measured."""
    base_length = _BASE_LENGTHS.get(base[0])
    if base_length is None:
        if len(_BASE_LENGTHS) >= 64:
            _BASE_LENGTHS.clear()
        base_length = _BASE_LENGTHS[base[0]] = len(json.dumps(base[1]))
    replaced = _replaced_length(base[1], patch)
    if replaced is not None and 2 * patch_length < base_length - replaced:
        return True
    return patch_length < len(json.dumps(end_state))


def _replaced_length(base: dict[str, Any], patch: list[dict[str, Any]]) -> int | None:
    """How much of the base's JSON the patch's removals and replacements take away, at most: each old
    value with its key and separators; None when a path does not read back (a key that is no string)."""
    total = 0
    for op in patch:
        if op["op"] == "add":
            continue
        *parents, key = [_unescape(seg) for seg in op["path"].split("/")[1:]]
        try:
            node: Any = base
            for seg in parents:
                node = node[seg]
            total += len(json.dumps(node[key])) + len(json.dumps(key)) + 4
        except (KeyError, TypeError):
            return None
    return total


# --- steps and constraints ---------------------------------------------------------------------------
def _encode_step(step: dict[str, Any], position: int, model: Step) -> None:
    if step.get("index") == position:
        del step["index"]
    call = step.get("tool_call")
    if call is not None and call.get("id") == _own_call_id(step):
        del call["id"]
    for record in step.get("interventions", []):
        if record.get("turn") == step.get("turn"):
            del record["turn"]
        if call is not None:  # the tool is the call's unless it says otherwise (null included)
            if record.get("tool") == call.get("tool"):
                del record["tool"]
            elif "tool" not in record:
                record["tool"] = None
    if model.raw_result is not None and model.observation is not None:
        if model.observation == model.raw_result:
            step["observation"] = RAW
        else:  # whichever is shorter: the observation itself or its delta from the raw result
            delta = _delta(model.raw_result, model.observation)
            if len(json.dumps(delta)) < len(json.dumps(step["observation"])):
                del step["observation"]
                step["observation_delta"] = delta
    for key in ("raw_result", "observation"):
        result = step.get(key)
        if isinstance(result, dict) and result.get("content") == _text_of(result):
            result["content"] = STRUCTURED


def _decode_step(step: dict[str, Any], position: int) -> None:
    step.setdefault("index", position)
    call = step.get("tool_call")
    if call is not None and "id" not in call:
        call["id"] = _own_call_id(step)
    for record in step.get("interventions", []):
        record.setdefault("turn", step.get("turn"))
        if call is not None:
            record.setdefault("tool", call.get("tool"))
    for key in ("raw_result", "observation"):
        result = step.get(key)
        if isinstance(result, dict) and result.get("content") == STRUCTURED:
            step[key] = {**result, "content": _text_of(result)}
    raw = step.get("raw_result")
    if step.get("observation") == RAW:
        step["observation"] = raw
    delta = step.pop("observation_delta", None)
    if delta is not None:
        step["observation"] = _undelta(raw or {}, delta)


def _delta(raw: ToolResult, seen: ToolResult) -> dict[str, Any]:
    """The fields of the observation that differ from the raw result; a text block that starts like the raw
    result's text (a truncated observation) keeps only its rest: `{"type": "text", "raw_prefix": N, "text"}`."""
    full, base = seen.model_dump(mode="json"), raw.model_dump(mode="json")
    delta = {k: v for k, v in full.items() if base.get(k) != v}
    raw_text = _first_text(base)
    if "content" in delta and full["content"] == _text_of(full):
        delta["content"] = STRUCTURED
    elif "content" in delta and raw_text:
        delta["content"] = [_shorten(block, raw_text) for block in delta["content"]]
    return delta


def _undelta(raw: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """The observation: the raw result with the delta's fields."""
    seen = {**raw, **delta}
    if delta.get("content") == STRUCTURED:
        seen["content"] = _text_of(seen)
    elif "content" in delta:
        raw_text = _first_text(raw)
        seen["content"] = [_lengthen(block, raw_text) for block in delta["content"]]
    return seen


def _shorten(block: dict[str, Any], raw_text: str) -> dict[str, Any]:
    text = block.get("text")
    if block.get("type") != "text" or not isinstance(text, str) or set(block) != {"type", "text"}:
        return block
    n = len(os.path.commonprefix([raw_text, text]))
    return {"type": "text", "raw_prefix": n, "text": text[n:]} if n > 16 else block


def _lengthen(block: dict[str, Any], raw_text: str) -> dict[str, Any]:
    if "raw_prefix" not in block:
        return block
    return {"type": "text", "text": raw_text[: block["raw_prefix"]] + block["text"]}


def _first_text(result: dict[str, Any] | None) -> str:
    for block in (result or {}).get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            return str(block["text"])
    return ""


def _own_call_id(step: dict[str, Any]) -> str:
    """The id the runner gives a call the agent left unnamed (`Episode`): `call_<turn>` or `search_<turn>`."""
    return f"{'search' if step.get('kind') == 'search' else 'call'}_{step.get('turn')}"


def _text_of(result: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The content block `ToolResult.ok` makes from the structured content (None when there is none)."""
    structured = result.get("structured_content")
    if structured is None:
        return None
    return [{"type": "text", "text": json.dumps(structured, ensure_ascii=False)}]


def _encode_constraints(final: list[dict[str, Any]], task: Task) -> list[Any]:
    index = {json.dumps(c.model_dump(mode="json", exclude_defaults=True), sort_keys=True): i
             for i, c in enumerate(task.constraints)}
    return [index.get(json.dumps(c, sort_keys=True), c) for c in final]


def _decode_constraints(final: list[Any], task: Task) -> list[Any]:
    return [task.constraints[c].model_dump(mode="json") if isinstance(c, int) else c for c in final]


# --- state diffs -------------------------------------------------------------------------------------
def state_patch(base: dict[str, Any], target: dict[str, Any], path: str = "") -> list[dict[str, Any]]:
    """RFC 6902 operations turning `base` into `target`: objects are compared key by key, anything else
    that differs (a list, a value) is replaced whole. 100x faster than `jsonpatch.make_patch` on sandbox
    states (no list-move search) at about the same size."""
    ops: list[dict[str, Any]] = [{"op": "remove", "path": f"{path}/{_escape(k)}"} for k in base if k not in target]
    for key, value in target.items():
        where = f"{path}/{_escape(key)}"
        if key not in base:
            ops.append({"op": "add", "path": where, "value": value})
        elif base[key] != value:
            old = base[key]
            if isinstance(old, dict) and isinstance(value, dict):
                ops.extend(state_patch(old, value, where))
            else:
                ops.append({"op": "replace", "path": where, "value": value})
    return ops


def apply_state_patch(base: dict[str, Any], patch: list[dict[str, Any]]) -> dict[str, Any]:
    """`base` with `patch` applied by `jsonpatch` (a well-kept RFC 6902 implementation). `base` is changed
    in place (no deep copy of a 120 KB state per episode): give a fresh copy."""
    return jsonpatch.apply_patch(base, patch, in_place=True)  # type: ignore[no-any-return]


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _unescape(segment: str) -> str:
    return segment.replace("~1", "/").replace("~0", "~")
