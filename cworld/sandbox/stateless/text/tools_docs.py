"""Document tools of the text server (a mixin): diffs, templates, HTML to text, wrapping, truncation."""

from __future__ import annotations

import difflib
import re
import textwrap
from typing import Annotated

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.shared import TextResult, invalid
from cworld.sandbox.stateless.text.markup import TextExtractor, fill_placeholders
from cworld.sandbox.stateless.text.models import (
    MAX_DIFF_LINES,
    CutSuffix,
    FilledTemplate,
    LineDiff,
    LineWidth,
    LongText,
    MaxChars,
)


class DocumentTools:
    @tool(read_only=True)
    def diff_lines(
        self,
        old: Annotated[
            str, Field(description="The original text (at most 2,000 lines).", max_length=100_000)
        ],
        new: Annotated[str, Field(description="The changed text (at most 2,000 lines).", max_length=100_000)],
        context: Annotated[
            int, Field(description="Unchanged lines to show around each change.", ge=0, le=20)
        ] = 3,
    ) -> LineDiff:
        """Compare two texts line by line and return a unified diff with counts of added and removed lines."""
        a, b = old.splitlines(), new.splitlines()
        if max(len(a), len(b)) > MAX_DIFF_LINES:
            raise invalid(f"the texts have more than {MAX_DIFF_LINES} lines; diff smaller parts")
        lines = list(difflib.unified_diff(a, b, "old", "new", n=context, lineterm=""))
        added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
        removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
        return LineDiff(diff="\n".join(lines), added=added, removed=removed, identical=not lines)

    @tool(read_only=True)
    def fill_template(
        self,
        template: Annotated[
            str,
            Field(
                description="Text with {name} placeholders; {{ and }} are literal braces. "
                "At most 20,000 characters.",
                max_length=20_000,
            ),
        ],
        values: Annotated[
            dict[str, Annotated[str, Field(max_length=20_000)]],
            Field(
                description='Value for each placeholder name, e.g. {"name": "Ada"}. At most 200 '
                "entries of up to 20,000 characters.",
                max_length=200,
            ),
        ],
    ) -> FilledTemplate:
        """Fill {name} placeholders in a template (mail merge). Fails naming any placeholder without a
        value."""
        text, used = fill_placeholders(template, values)
        return FilledTemplate(text=text, unused=sorted(set(values) - used))

    @tool(read_only=True)
    def strip_html(
        self, html: Annotated[str, Field(description="HTML, at most 100,000 characters.", max_length=100_000)]
    ) -> TextResult:
        """The visible text of an HTML fragment: tags removed, entities decoded, scripts and styles dropped,
        block elements on their own lines."""
        parser = TextExtractor()
        try:
            parser.feed(html)
            parser.close()
        except (AssertionError, ValueError) as err:  # the stdlib parser still trips on some malformed markup
            raise invalid(f"cannot parse this HTML ({err}); check for broken '<!' declarations") from None
        lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
        return TextResult(text="\n".join(line for line in lines if line))

    @tool(read_only=True)
    def wrap_text(self, text: LongText, width: LineWidth = 80) -> TextResult:
        """Re-wrap text to lines of at most `width` characters, keeping blank-line paragraph breaks. Words
        longer than the width are split."""
        paragraphs = re.split(r"\n\s*\n", text)
        return TextResult(
            text="\n\n".join(textwrap.fill(" ".join(p.split()), width=width) for p in paragraphs)
        )

    @tool(read_only=True)
    def truncate_text(self, text: LongText, max_chars: MaxChars, suffix: CutSuffix = "…") -> TextResult:
        """Shorten text to at most max_chars characters, cutting at a word boundary when one is near and
        appending the suffix. Text that already fits is returned unchanged."""
        if len(text) <= max_chars:
            return TextResult(text=text)
        room = max_chars - len(suffix)
        if room <= 0:
            raise invalid(f"max_chars {max_chars} leaves no room for the suffix {suffix!r}; raise max_chars")
        cut = text[:room]
        space = cut.rfind(" ")
        if space >= room * 0.6:
            cut = cut[:space]
        return TextResult(text=cut.rstrip() + suffix)
