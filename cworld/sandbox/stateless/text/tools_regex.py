"""Regular-expression and extraction tools of the text server (a mixin).

Agent-written patterns can backtrack catastrophically (`(x+x+)+y`). Python's `re` cannot be interrupted, so
agent patterns run on the `regex` package (same syntax, plus a `timeout`; imported on first use) with caps on
pattern, text, replacement and output sizes; a pattern that runs out of time is an `invalid` error telling
the agent to simplify it. The extraction tools use fixed patterns of ours that stay linear, on stdlib `re`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.shared import invalid
from cworld.sandbox.stateless.text.models import (
    MAX_OUTPUT,
    MAX_REPLACEMENT,
    Extracted,
    ExtractText,
    IgnoreCase,
    MaxMatches,
    Numbers,
    Pattern,
    RegexMatch,
    RegexMatches,
    RegexText,
    ReplaceCount,
    Replacement,
)
from cworld.sandbox.stateless.text.patterns import (
    EMAIL_PATTERN,
    NUMBER_PATTERN,
    TIMEOUT_SECONDS,
    URL_PATTERN,
    compile_pattern,
    distinct_found,
    regex_module,
    timed_out,
)


class RegexTools:
    @tool(read_only=True)
    def regex_find_all(
        self,
        pattern: Pattern,
        text: RegexText,
        ignore_case: IgnoreCase = False,
        max_matches: MaxMatches = 100,
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
            raise timed_out() from None
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
        count: ReplaceCount = 0,
    ) -> Replacement:
        """Replace matches of a regular expression. The result may be at most 200,000 characters."""
        compiled = compile_pattern(pattern, ignore_case)
        try:
            out, n = compiled.subn(replacement, text, count=count, timeout=TIMEOUT_SECONDS)
        except TimeoutError:
            raise timed_out() from None
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
        return distinct_found(EMAIL_PATTERN.findall(text))

    @tool(read_only=True)
    def extract_urls(self, text: ExtractText) -> Extracted:
        """Find the web links (http://, https:// or www.) in a text, trailing punctuation removed."""
        return distinct_found([u.rstrip(".,;:!?") for u in URL_PATTERN.findall(text)])

    @tool(read_only=True)
    def extract_numbers(self, text: ExtractText) -> Numbers:
        """Find the numbers in a text: integers, decimals, signed, with thousands separators ('1,250.5') or
        exponents ('3e8'). Digits inside words (like 'A4') are skipped."""
        values: list[float] = []
        for raw in NUMBER_PATTERN.findall(text):
            try:
                value = float(raw.replace(",", ""))
            except (ValueError, OverflowError):
                continue
            if value == value and abs(value) != float("inf"):
                values.append(value)
        return Numbers(numbers=values, count=len(values))
