"""Is the request one a person would make? Rule checks for tasks over harvested tools (issue 24, item 7).

A harvested tool's schema is full of placeholders (`filename 'example'`, `team id '1'`) and its
description is written for a model, so a draft stitched from them reads as a list of tool calls. These
rules hold a draft (offline or LLM) to a person's request; each failed rule is an `Issue` whose message
says what to change, so it is the revision's feedback:

- *placeholder*: no argument of the plan, and no quoted value of the query, is a schema placeholder
  (`example`, `string`, `test`, an id `1` or `0`, an `example.com` address); a free text the plan writes
  must take what earlier steps found or what the request says, not made-up words;
- *unlinked_service*: every service after the first takes something an earlier service found (a
  reference to an earlier step's answer), or gives what it found to a later step of another service (a
  brief gathers two reads into one note): services are combined only where data flows between them;
- *idle_step*: a read whose answer nothing uses (no later step, no answer line) serves no goal;
- *paraphrase*: the query copies no run of six or more words of a tool's description.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from cworld.agents.references import referenced_steps
from cworld.data_model.references import REFERENCE

if TYPE_CHECKING:
    from cworld.synth.checks import CheckReport
    from cworld.synth.draft import Draft
    from cworld.synth.toolset import ToolUniverse

PLACEHOLDER = re.compile(
    r"^(example(-?\d+)?|examples?|string|test(ing)?|foo|bar|baz|qux|sample|placeholder|dummy|todo|tbd|"
    r"xxx+|none|null|undefined|https?|your[ _-]?\w+|abc\d*|my[ _-]?(value|string|id)|lorem( ipsum)?.*)$",
    re.I,
)
QUOTED = re.compile(r"(?<!\w)'([^']{1,60})'(?!\w)")
"""A value the query quotes ('Login timeout'), not the apostrophe of "I'm"."""
_EXAMPLE_ADDRESS = re.compile(r"(^|[@./])example\.(com|org|net)\b", re.I)
_ID_ARG = re.compile(r"(^|_)(id|ids)$|[a-z]Ids?$")
_TEXT_ARG = re.compile(r"(^|_)(message|text|body|content|description|notes?|comment|summary)$", re.I)
_WORD = re.compile(r"[a-z0-9]+")
COPIED_RUN = 6


def check_request(draft: Draft, universe: ToolUniverse, report: CheckReport) -> None:
    """The four rules above, and the arguments' meaning (`argument_checks`), on a draft over harvested tools."""
    from cworld.synth.argument_checks import check_arguments

    _placeholders(draft, universe, report)
    _data_flow(draft, report)
    _idle_steps(draft, report)
    _paraphrase(draft, universe, report)
    check_arguments(draft, universe, report)


def placeholder_values(arguments: dict[str, Any], query: str, schema: dict[str, Any] | None = None) -> list[str]:
    """The literal values of `arguments` that are schema placeholders, as `name=value` (a member of the
    argument's enum is a choice, never a placeholder)."""
    from cworld.synth.checks import content_words

    asked = content_words(query)
    props = (schema or {}).get("properties") or {}
    found = []
    for name, value in _literals(arguments):
        text = str(value).strip()
        if value in ((props.get(name) or {}).get("enum") or []):
            continue
        if _placeholder(name, value, text):
            found.append(f"{name}={text!r}")
        elif isinstance(value, str) and _TEXT_ARG.search(name) and len(text.split()) >= 4 \
                and not content_words(text) & asked:
            found.append(f"{name}={text[:40]!r} (text the request never asked for)")
    return found


def _placeholder(name: str, value: Any, text: str) -> bool:
    if isinstance(value, str) and (PLACEHOLDER.match(text) or _EXAMPLE_ADDRESS.search(text)):
        return True
    return bool(_ID_ARG.search(name)) and text in ("0", "1", "0.0", "1.0")


def _literals(value: Any, name: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _literals(v, str(k))]
    if isinstance(value, list):
        return [pair for v in value for pair in _literals(v, name)]
    if isinstance(value, str) and REFERENCE.search(value):
        return []
    return [(name, value)] if value is not None and not isinstance(value, bool) else []


def _placeholders(draft: Draft, universe: ToolUniverse, report: CheckReport) -> None:
    bad = []
    for step in draft.gold_plan:
        spec = universe.tools.get(step.tool)
        schema = spec.input_schema if spec is not None else None
        bad += [f"{step.id}: {v}" for v in placeholder_values(step.arguments, draft.query, schema)]
    quoted = [q for q in QUOTED.findall(draft.query) if PLACEHOLDER.match(q.strip())]
    if bad or quoted:
        shown = "; ".join([*bad, *(f"query: {q!r}" for q in quoted)][:4])
        report.add("request", "placeholder", f"values must come from the world (its records' names, ids an "
                   f"earlier step found) or be what a person would say, not schema placeholders: {shown}")


def _data_flow(draft: Draft, report: CheckReport) -> None:
    """Every service after the first takes something another service found, or gives what it found to a
    later step of another service (two reads gathered into one note: data flows from each into it)."""
    server_of = {s.id: s.tool.split("/", 1)[0] for s in draft.gold_plan}
    links = {(server_of[s.id], server_of[ref]) for s in draft.gold_plan for ref in referenced_steps(s.arguments)
             if server_of.get(ref) not in (None, server_of[s.id])}
    seen: list[str] = []
    unlinked = []
    for step in draft.gold_plan:
        server = server_of[step.id]
        if seen and server not in seen and not any(server in link for link in links):
            unlinked.append(server)
        if server not in seen:
            seen.append(server)
    if unlinked:
        report.add("request", "unlinked_service", f"the steps on {', '.join(unlinked)} take nothing an earlier "
                   "service found: combine services only where data flows between them (an argument that "
                   "references an earlier step's answer), or leave that service out")


def _idle_steps(draft: Draft, report: CheckReport) -> None:
    used = {ref for s in draft.gold_plan for ref in referenced_steps(s.arguments)}
    used |= {ref for hint in draft.final_answer_hints for ref in referenced_steps(hint)}
    idle = [s.id for s in draft.gold_plan[:-1] if s.id not in used and _is_read(s.tool, draft)]
    if idle:
        report.add("request", "idle_step", f"steps {idle} read something nothing uses: every step must serve "
                   "the one goal (feed a later step or the answer), else drop it")


def _is_read(tool_id: str, draft: Draft) -> bool:
    from cworld.engine.cards.operations import verb_kind

    return verb_kind(tool_id.split("/", 1)[-1]) in ("list", "search", "get")


def _paraphrase(draft: Draft, universe: ToolUniverse, report: CheckReport) -> None:
    query = _WORD.findall(draft.query.lower())
    runs = {" ".join(query[i:i + COPIED_RUN]) for i in range(len(query) - COPIED_RUN + 1)}
    copied = []
    for tool_id in draft.tools:
        spec = universe.tools.get(tool_id)
        words = _WORD.findall((spec.description or "").lower()) if spec else []
        if any(" ".join(words[i:i + COPIED_RUN]) in runs for i in range(len(words) - COPIED_RUN + 1)):
            copied.append(tool_id)
    if copied:
        report.add("request", "paraphrase", f"the query copies the descriptions of {copied}: say what the "
                   "person wants in their own words, not what the tools do")
