"""Getting a validated pydantic object out of a model that was asked for JSON.

Models wrap JSON in ```json fences or prose, or get a field wrong. We extract the first JSON value we
can find, validate it, and on failure show the model its own reply and the exact problem, a bounded
number of times, before giving up with a `ModelError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from cworld.errors import ModelError, ReplyCut
from cworld.llm.completion import Completion

M = TypeVar("M", bound=BaseModel)
CompleteFn = Callable[..., Awaitable[Completion]]

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_MAX_SCAN = 200  # candidate start positions tried in prose; bounds the work on a long reply


class NoJSON(ValueError):
    """The reply holds no parseable JSON value."""


def extract_json(text: str) -> Any:
    """The JSON value in `text`: the whole text, else a fenced block, else the first {...} or [...]."""
    stripped = text.strip()
    if not stripped:
        raise NoJSON("the reply is empty")
    for candidate in (stripped, *(m.group(1).strip() for m in _FENCE.finditer(stripped))):
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    return _scan(stripped)


def _scan(text: str) -> Any:
    decoder = json.JSONDecoder()
    starts = [i for i, ch in enumerate(text) if ch in "{["][:_MAX_SCAN]
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text, start)
            return value
        except json.JSONDecodeError:
            continue
    raise NoJSON("the reply holds no JSON object")


def problem_of(exc: Exception) -> str:
    """A short description of what is wrong, for the model to fix and for the final error line."""
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()[:5]]
        more = f" (+{exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        return "; ".join(parts) + more
    return str(exc)


def schema_hint(schema: type[BaseModel]) -> str:
    return (
        "Reply with one JSON object, and nothing else, that validates against this JSON schema:\n"
        + json.dumps(schema.model_json_schema(), separators=(",", ":"))
    )


def with_hint(messages: list[Any], hint: str) -> list[Any]:
    """Put the schema in the system message (first), so providers that want one system turn get one."""
    if messages and isinstance(messages[0], dict) and messages[0].get("role") == "system":
        first = messages[0]
        if isinstance(first.get("content"), str):
            return [{**first, "content": f"{first['content']}\n\n{hint}"}, *messages[1:]]
    return [{"role": "system", "content": hint}, *messages]


def parse_reply(completion: Completion, schema: type[M]) -> M:
    return schema.model_validate(extract_json(completion.text))


async def complete_json(
    complete: CompleteFn,
    role: str,
    messages: list[Any],
    schema: type[M],
    *,
    max_repairs: int = 2,
    hint: bool = True,
    **kwargs: Any,
) -> M:
    """Ask, validate, and on failure feed the error back up to `max_repairs` times."""
    convo = with_hint(list(messages), schema_hint(schema)) if hint else list(messages)
    problem, model, cut = "no attempt made", kwargs.get("model") or "?", False
    for _ in range(max_repairs + 1):
        completion = await complete(role, convo, **kwargs)
        model = completion.model
        try:
            return parse_reply(completion, schema)
        except (ValueError, ValidationError) as exc:
            problem = problem_of(exc)
            cut = completion.finish_reason == "length"
            if cut:  # a cut reply is not malformed: it needs to be shorter
                problem = f"the reply was cut at its output budget before the JSON ended ({problem}); be much shorter"
        convo = [*convo, completion.as_message(), {"role": "user", "content": _repair_prompt(problem)}]
    raise (ReplyCut if cut else ModelError)(
        f"model '{model}' for role '{role}': no valid {schema.__name__} JSON after "
        f"{max_repairs + 1} attempt(s) (last problem: {problem[:200]}); try a stronger model or raise max_repairs"
    )


def _repair_prompt(problem: str) -> str:
    return f"Your reply could not be used: {problem}. Reply again with only the corrected JSON object."
