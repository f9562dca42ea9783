"""Regular-expression and extraction tools of the text server (a mixin).

Agent-written patterns can backtrack catastrophically (`(x+x+)+y`). Python's `re` cannot be interrupted, so
agent patterns run on the `regex` package (same syntax, plus a `timeout`; imported on first use) with caps on
pattern, text, replacement and output sizes; a pattern that runs out of time is an `invalid` error telling
the agent to simplify it. The extraction tools use fixed patterns of ours that stay linear, on stdlib `re`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless._common import invalid

MAX_PATTERN = 300
MAX_REGEX_TEXT = 20_000
MAX_REPLACEMENT = 200
MAX_OUTPUT = 200_000
TIMEOUT_SECONDS = 0.25

Pattern = Annotated[
    str,
    Field(
        description="A regular expression (Python syntax), at most 300 characters.",
        min_length=1,
        max_length=MAX_PATTERN,
    ),
]
RegexText = Annotated[
    str, Field(description="The text to search, at most 20,000 characters.", max_length=MAX_REGEX_TEXT)
]
IgnoreCase = Annotated[bool, Field(description="Match letters regardless of case.")]
ExtractText = Annotated[
    str, Field(description="The text to scan, at most 100,000 characters.", max_length=100_000)
]

_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?![\w-])")
_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"'()\[\]{}]+")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")


class RegexMatch(BaseModel):
    match: str = Field(description="The matched text.")
    start: int = Field(description="Offset of the first character (0-based).")
    end: int = Field(description="Offset just past the last character.")
    groups: list[str | None] = Field(
        description="Captured groups in order (null when a group did not take part)."
    )


class RegexMatches(BaseModel):
    count: int = Field(description="Number of matches listed.")
    matches: list[RegexMatch]
    truncated: bool = Field(description="True when more matches exist than max_matches.")


class Replacement(BaseModel):
    text: str = Field(description="The text after replacement.")
    replacements: int = Field(description="How many matches were replaced.")


class Extracted(BaseModel):
    items: list[str] = Field(description="Distinct items in order of first appearance.")
    count: int = Field(description="How many distinct items.")


class Numbers(BaseModel):
    numbers: list[float] = Field(
        description="Every number in the text, in order (thousands separators removed)."
    )
    count: int


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


def _timed_out() -> Exception:
    return invalid(
        f"the pattern took longer than {TIMEOUT_SECONDS} s (catastrophic backtracking); avoid nested "
        "quantifiers like (a+)+ and use a simpler pattern"
    )


def _distinct(items: list[str]) -> Extracted:
    unique = list(dict.fromkeys(items))
    return Extracted(items=unique, count=len(unique))


class RegexTools:
    @tool(read_only=True)
    def regex_find_all(
        self,
        pattern: Pattern,
        text: RegexText,
        ignore_case: IgnoreCase = False,
        max_matches: Annotated[
            int, Field(description="Stop after this many matches (1..1000).", ge=1, le=1000)
        ] = 100,
    ) -> RegexMatches:
        """Find every non-overlapping match of a regular expression, with positions and captured groups.
        Patterns are limited to 300 characters and a quarter second of matching."""
        compiled = compile_pattern(pattern, ignore_case)
        found: list[RegexMatch] = []
        truncated = False
        try:
            for m in compiled.finditer(text, timeout=TIMEOUT_SECONDS):
                if len(found) == max_matches:
                    truncated = True
                    break
                found.append(
                    RegexMatch(match=m.group(0), start=m.start(), end=m.end(), groups=list(m.groups()))
                )
        except TimeoutError:
            raise _timed_out() from None
        return RegexMatches(count=len(found), matches=found, truncated=truncated)

    @tool(read_only=True)
    def regex_replace(
        self,
        pattern: Pattern,
        replacement: Annotated[
            str,
            Field(
                description="Replacement text; \\1 or \\g<name> insert captured groups. "
                "At most 200 characters.",
                max_length=MAX_REPLACEMENT,
            ),
        ],
        text: RegexText,
        ignore_case: IgnoreCase = False,
        count: Annotated[
            int, Field(description="Replace at most this many matches; 0 means all.", ge=0, le=100_000)
        ] = 0,
    ) -> Replacement:
        """Replace matches of a regular expression. The result may be at most 200,000 characters."""
        compiled = compile_pattern(pattern, ignore_case)
        try:
            out, n = compiled.subn(replacement, text, count=count, timeout=TIMEOUT_SECONDS)
        except TimeoutError:
            raise _timed_out() from None
        except (regex_module().error, IndexError) as err:
            raise invalid(f"the replacement refers to a group the pattern does not have ({err})") from None
        if len(out) > MAX_OUTPUT:
            raise invalid(
                f"the result would be {len(out)} characters (limit {MAX_OUTPUT}); replace fewer matches"
            )
        return Replacement(text=out, replacements=n)

    @tool(read_only=True)
    def extract_emails(self, text: ExtractText) -> Extracted:
        """Find the email addresses in a text (distinct, in order of appearance)."""
        return _distinct(_EMAIL.findall(text))

    @tool(read_only=True)
    def extract_urls(self, text: ExtractText) -> Extracted:
        """Find the web links (http://, https:// or www.) in a text, trailing punctuation removed."""
        return _distinct([u.rstrip(".,;:!?") for u in _URL.findall(text)])

    @tool(read_only=True)
    def extract_numbers(self, text: ExtractText) -> Numbers:
        """Find the numbers in a text: integers, decimals, signed, with thousands separators ('1,250.5') or
        exponents ('3e8'). Digits inside words (like 'A4') are skipped."""
        values: list[float] = []
        for raw in _NUMBER.findall(text):
            try:
                value = float(raw.replace(",", ""))
            except (ValueError, OverflowError):
                continue
            if value == value and abs(value) != float("inf"):
                values.append(value)
        return Numbers(numbers=values, count=len(values))
