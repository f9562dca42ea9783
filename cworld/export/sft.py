"""`export_sft`: runs -> training examples in one format, checked, de-duplicated, redacted, written whole.

    summary = export_sft([run_dir], "openai", Path("sft.jsonl"), ExportFilters(only_success=True), catalog)

Order of work: load episodes (with scores when a filter needs them) -> filters -> first-round cut ->
conversation -> secrets masked -> format record -> exact duplicates dropped -> every record checked
against its format's rules -> a last scan for secrets over the text to be written -> temp file, rename.
A summary (`<out>.summary.json`) says what went in and what was left out, and why.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cworld.data_model import ToolSpec, write_text_atomic
from cworld.errors import UsageError
from cworld.export.atomic import atomic_path
from cworld.export.check_openai import check_openai_record
from cworld.export.conversation import Conversation, ConversationBuilder, arguments_json
from cworld.export.hf import hf_row, save_hf
from cworld.export.openai import openai_record
from cworld.export.selection import Episode, ExportFilters, FirstRound, load_runs
from cworld.export.sharegpt import DATASET_INFO, check_sharegpt_record, sharegpt_record
from cworld.export.tokens import count_tokens, tokenizer_name
from cworld.redact import MASK, Redactor

FORMATS = ("openai", "sharegpt", "hf")


@dataclass
class Example:
    record: dict[str, Any]
    """the format's record (for `hf`, the openai record the row is made from)"""
    conversation: Conversation
    episode: Episode


@dataclass
class Selection:
    examples: list[Example] = field(default_factory=list)
    episodes: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0


def export_sft(
    runs: Sequence[Path],
    fmt: str,
    out: Path,
    filters: ExportFilters,
    catalog: Mapping[str, ToolSpec],
    *,
    redactor: Redactor | None = None,
) -> dict[str, Any]:
    """Write the export and its summary; returns the summary. Nothing is written when it fails."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    redactor = redactor or Redactor.from_env()
    builder = ConversationBuilder(catalog)
    selection = select(load_runs(runs, need_scores=filters.needs_scores), fmt, filters, builder, redactor)
    if not selection.examples:
        raise UsageError(
            f"no example to export: {selection.episodes} episode(s) read, none kept "
            f"({_counts(selection.rejected + selection.skipped)}); loosen the filters"
        )
    _check(selection.examples, fmt)
    payload = _payload(selection.examples, fmt)
    _guard(payload, redactor)
    summary = _summary(selection, fmt, out, runs, filters, builder)
    _write(selection.examples, payload, fmt, out)
    write_text_atomic(summary_path(out), json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return summary


def summary_path(out: Path) -> Path:
    return out.with_name(out.name + ".summary.json")


def select(
    episodes: list[Episode],
    fmt: str,
    filters: ExportFilters,
    builder: ConversationBuilder,
    redactor: Redactor,
) -> Selection:
    selection = Selection(episodes=len(episodes))
    first_round = FirstRound()
    seen: set[str] = set()
    for episode in episodes:
        reason = filters.reason(episode)
        if reason is not None:
            selection.rejected[reason] += 1
            continue
        example = _example(episode, fmt, filters, builder, redactor, first_round, selection.skipped)
        if example is None:
            continue
        key = json.dumps(example.record, sort_keys=True, ensure_ascii=False)
        if key in seen:
            selection.duplicates += 1
            continue
        seen.add(key)
        selection.examples.append(example)
    selection.skipped.update(first_round.skipped)
    return selection


def _example(
    episode: Episode,
    fmt: str,
    filters: ExportFilters,
    builder: ConversationBuilder,
    redactor: Redactor,
    first_round: FirstRound,
    skipped: Counter[str],
) -> Example | None:
    trajectory = episode.trajectory
    if filters.first_round:
        cut = first_round.cut(trajectory, builder.catalog)
        if cut is None:
            return None
        trajectory = cut
    conversation = builder.build(trajectory)
    if conversation is None:
        skipped["no_task_recorded"] += 1
        return None
    if not any(t.role == "assistant" and t.learn for t in conversation.turns):
        skipped["no_assistant_turn"] += 1
        return None
    conversation = conversation.redacted(redactor)
    record = sharegpt_record(conversation) if fmt == "sharegpt" else openai_record(conversation)
    if fmt == "sharegpt" and not record["conversations"]:
        skipped["no_assistant_turn"] += 1
        return None
    return Example(record, conversation, episode)


def _check(examples: list[Example], fmt: str) -> None:
    """Every record must pass its format's checker; a failure is a bug in cworld, not in the data."""
    checker = check_sharegpt_record if fmt == "sharegpt" else check_openai_record
    for example in examples:
        problems = checker(example.record)
        if problems:
            raise RuntimeError(
                f"export of episode {example.episode.trajectory.episode_id} broke the {fmt} "
                f"format: {problems[0]}"
            )


def _payload(examples: list[Example], fmt: str) -> list[Any]:
    if fmt != "hf":
        return [e.record for e in examples]
    return [hf_row(e.record, _meta(e)) for e in examples]


def _meta(example: Example) -> dict[str, Any]:
    t, s = example.episode.trajectory, example.episode.score
    return {
        "episode_id": t.episode_id,
        "task_id": t.task_id,
        "agent": t.agent,
        "mode": t.mode,
        "seed": t.seed,
        "status": t.status,
        "privileged": t.privileged,
        "overall": s.overall if s else None,
        "success": s.success if s else None,
        "faults": sorted({i.kind for i in t.interventions}),
    }


def _guard(payload: list[Any], redactor: Redactor) -> None:
    text = "\n".join(json.dumps(p, ensure_ascii=False) for p in payload)
    leaks = redactor.leaks(text)
    if leaks:
        raise RuntimeError(f"{len(leaks)} secret(s) survived redaction; nothing was written")


def _write(examples: list[Example], payload: list[Any], fmt: str, out: Path) -> None:
    with atomic_path(out) as tmp:
        if fmt == "hf":
            save_hf(payload, tmp)
            return
        with tmp.open("w", encoding="utf-8") as fh:
            for record in payload:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")


# --- the summary --------------------------------------------------------------------------------
def _summary(
    selection: Selection,
    fmt: str,
    out: Path,
    runs: Sequence[Path],
    filters: ExportFilters,
    builder: ConversationBuilder,
) -> dict[str, Any]:
    examples = selection.examples
    tokens = [_tokens(e.conversation) for e in examples]
    called = Counter(builder.names.tool_id(name) for e in examples for name in e.conversation.called)
    declared = {f["name"] for e in examples for f in e.conversation.tools}
    summary: dict[str, Any] = {
        "format": fmt,
        "out": str(out),
        "runs": [str(r) for r in runs],
        "episodes": selection.episodes,
        "examples": len(examples),
        "duplicates_removed": selection.duplicates,
        "filters": filters.describe(),
        "rejected_by_filter": dict(selection.rejected),
        "skipped": dict(selection.skipped),
        "tokens": {
            "total": sum(tokens),
            "mean": round(sum(tokens) / len(tokens), 1),
            "max": max(tokens),
            "tokenizer": tokenizer_name(),
        },
        "tools": {
            "declared": len(declared),
            "called": len(called),
            "calls": sum(called.values()),
            "top": dict(called.most_common(20)),
        },
        "agents": dict(Counter(e.episode.trajectory.agent for e in examples)),
        "privileged_agents": sorted({e.episode.trajectory.agent for e in examples if e.episode.trajectory.privileged}),
        "records": [_meta(e) for e in examples],
        "faults_seen": dict(Counter(i.kind for e in examples for i in e.episode.trajectory.interventions)),
        "not_trained_turns": sum(
            1 for e in examples for t in e.conversation.turns if t.role == "assistant" and not t.learn
        ),
        "redactions": sum(json.dumps(e.record, ensure_ascii=False).count(MASK) for e in examples),
        "function_names": {"rule": "server/name -> server__name", "hashed": builder.names.hashed},
    }
    if fmt == "sharegpt":
        summary["llamafactory_dataset_info"] = {out.stem: {"file_name": out.name, **DATASET_INFO}}
    return summary


def _tokens(conversation: Conversation) -> int:
    parts = [t.content for t in conversation.turns]
    parts += [f"{c.name} {arguments_json(c.arguments)}" for t in conversation.turns for c in t.calls]
    parts.append(json.dumps(conversation.tools, ensure_ascii=False))
    return count_tokens("\n".join(parts))


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in counter.most_common()) or "nothing read"
