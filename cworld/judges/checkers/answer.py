"""Constraint checkers that read the final answer: length, required phrases, patterns, format."""

from __future__ import annotations

import json
import re
from typing import Any

from cworld.judges.checkers.context import CheckContext, Verdict, as_list
from cworld.judges.checkers.registry import checker

# '- ' or '* ' (task_synth/constraints.yaml); other markers ('+', a bullet sign) are not the asked-for bullets
_BULLET = re.compile(r"^\s*[-*] \s*\S")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+\S")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _words(text: str) -> int:
    return len(re.findall(r"\S+", text))


def _flags(v: dict[str, Any]) -> int:
    return 0 if v.get("case_sensitive", True) else re.IGNORECASE


@checker("final_answer_max_words")
def _max_words(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    return bool(ctx.answer.strip()) and _words(ctx.answer) <= int(v["value"])


@checker("final_answer_min_words")
def _min_words(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    return _words(ctx.answer) >= int(v["value"])


@checker("final_answer_contains")
def _contains(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """`value` (a string, or a list: all of them) appears verbatim; `case_sensitive: false` relaxes case."""
    phrases = as_list(v.get("value"))
    if not phrases:
        return None
    return all(_found(p, ctx.answer, v) for p in phrases)


@checker("final_answer_mentions")
def _mentions(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """Every string in `value` appears verbatim in the final answer, case-insensitive (facts it must
    report); spacing is not normalized, as the taxonomy says."""
    wanted = as_list(v.get("value"))
    if not wanted:
        return None
    answer = ctx.answer.lower()
    return all(w.lower() in answer for w in wanted)


@checker("final_answer_not_contains")
def _not_contains(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    phrases = as_list(v.get("value"))
    if not phrases:
        return None
    return not any(_found(p, ctx.answer, v) for p in phrases)


def _found(phrase: str, answer: str, v: dict[str, Any]) -> bool:
    return phrase in answer if v.get("case_sensitive", True) else phrase.lower() in answer.lower()


@checker("final_answer_regex")
def _regex(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    return re.search(str(v["value"]), ctx.answer, _flags(v) | re.MULTILINE) is not None


@checker("final_answer_format")
def _format(v: dict[str, Any], ctx: CheckContext) -> Verdict:
    """`value`: bullets | numbered | json | table | lines:N (exactly N non-empty lines)."""
    fmt = str(v["value"]).lower()
    lines = [line for line in ctx.answer.splitlines() if line.strip()]
    if not lines:
        return False
    if fmt in ("bullets", "bulleted", "bullet_list", "list"):
        return _share(lines, _BULLET) >= _min_share(v)
    if fmt in ("numbered", "numbered_list", "ordered_list"):
        return _share(lines, _NUMBERED) >= _min_share(v)
    if fmt in ("json", "json_object"):
        return _is_json(ctx.answer)
    if fmt in ("table", "markdown_table"):
        return _has_table(lines)
    if fmt.startswith("lines:"):
        return len(lines) == int(fmt.split(":", 1)[1])
    return None


def _min_share(v: dict[str, Any]) -> float:
    """Share of non-empty lines that must be list items: all of them (task_synth/constraints.yaml) unless
    the form sets `min_share` (e.g. 0.6 to allow a lead-in line)."""
    return float(v.get("min_share", 1.0))


def _share(lines: list[str], pattern: re.Pattern[str]) -> float:
    return sum(1 for line in lines if pattern.match(line)) / len(lines)


def _is_json(text: str) -> bool:
    body = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)```", body, re.DOTALL)
    try:
        json.loads(fenced.group(1) if fenced else body)
    except json.JSONDecodeError:
        return False
    return True


def _has_table(lines: list[str]) -> bool:
    return any(_TABLE_ROW.match(a) and _TABLE_RULE.match(b) for a, b in zip(lines, lines[1:], strict=False))
