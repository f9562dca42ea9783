"""Regular expressions with a time limit (agent-written patterns can backtrack for ever), and the fixed
patterns the extraction tools use for emails, URLs and numbers."""

from __future__ import annotations

import re
from typing import Any

from cworld.sandbox.stateless.shared import invalid
from cworld.sandbox.stateless.text.models import Extracted

TIMEOUT_SECONDS = 0.25


EMAIL_PATTERN = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?![\w-])")


URL_PATTERN = re.compile(r"\b(?:https?://|www\.)[^\s<>\"'()\[\]{}]+")


NUMBER_PATTERN = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")


def regex_module() -> Any:
    """The `regex` package (installed with transformers), imported only when an agent pattern runs."""
    import regex

    return regex


def compile_pattern(pattern: str, ignore_case: bool) -> Any:
    rx = regex_module()
    try:
        return rx.compile(pattern, rx.IGNORECASE if ignore_case else 0)
    except (rx.error, ValueError, OverflowError) as err:
        raise invalid(
            f"the pattern is not a valid regular expression ({err}); check brackets and escapes"
        ) from None


def timed_out() -> Exception:
    return invalid(
        f"the pattern took longer than {TIMEOUT_SECONDS} s (catastrophic backtracking); avoid nested "
        "quantifiers like (a+)+ and use a simpler pattern"
    )


def distinct_found(items: list[str]) -> Extracted:
    unique = list(dict.fromkeys(items))
    return Extracted(items=unique, count=len(unique))
