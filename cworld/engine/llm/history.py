"""The session as the LLM engine shows it: cut to a token budget, keeping the calls that matter.

A long episode does not fit a prompt, and most of it is irrelevant to the call at hand. The calls that
touch the same entities (an id, a path, a name from the current arguments appears in their arguments or
answer) are kept first, then the most recent ones, while the budget lasts; they are shown in order.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from cworld.engine.protocol import LogEntry, SessionLog

CHARS_PER_TOKEN = 4
_IDENT = re.compile(r"^[\w.:/@+#-]{3,200}$")


@dataclass(frozen=True)
class Condensed:
    text: str
    shown: int
    omitted: int
    related: int

    @property
    def note(self) -> str:
        parts = [f"{self.shown} call(s) shown"]
        if self.omitted:
            parts.append(f"{self.omitted} older unrelated call(s) left out")
        if self.related:
            parts.append(f"{self.related} touch the same entities as this call")
        return ", ".join(parts)


def identifiers(arguments: Any) -> set[str]:
    """Values in the arguments that name things: ids, paths, names (no spaces), numbers under id keys."""
    found: set[str] = set()
    _collect(arguments, found, key="")
    return found


def _collect(value: Any, found: set[str], key: str, depth: int = 0) -> None:
    if depth > 5:
        return
    if isinstance(value, dict):
        for sub_key, sub in value.items():
            _collect(sub, found, str(sub_key), depth + 1)
    elif isinstance(value, list):
        for sub in value[:50]:
            _collect(sub, found, key, depth + 1)
    elif isinstance(value, str) and _IDENT.match(value) and not value.isdigit():
        found.add(value)
    elif isinstance(value, int | str) and not isinstance(value, bool) and re.search(r"(id|number|num)$", key.lower()):
        found.add(str(value))


def render_entry(turn: int, entry: LogEntry, result_chars: int) -> str:
    result = entry.result
    shown = result.text if len(result.text) <= result_chars else result.text[:result_chars] + " ...(cut)"
    status = f"error ({result.error_class})" if result.is_error else "ok"
    args = json.dumps(entry.arguments, ensure_ascii=False, sort_keys=True, default=str)
    return f"[{turn}] {entry.tool} {args} -> {status}: {shown}"


def condense(session: SessionLog, arguments: dict[str, Any], budget_tokens: int = 1500,
             result_chars: int = 600) -> Condensed:
    """The session's calls that fit `budget_tokens`, related ones first, printed in turn order."""
    wanted = identifiers(arguments)
    rendered = [render_entry(i, e, result_chars) for i, e in enumerate(session.entries)]
    related = [i for i, line in enumerate(rendered) if wanted and any(w in line for w in wanted)]
    order = sorted(related, reverse=True) + [i for i in reversed(range(len(rendered))) if i not in set(related)]
    kept, used = set(), 0
    for i in order:
        cost = len(rendered[i]) // CHARS_PER_TOKEN + 1
        if used + cost > budget_tokens:
            continue
        kept.add(i)
        used += cost
    lines = [rendered[i] for i in sorted(kept)]
    text = "\n".join(lines) if lines else "(no calls yet: this is the first call of the session)"
    return Condensed(text, len(kept), len(rendered) - len(kept), len(set(related) & kept))
