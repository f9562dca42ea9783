"""Document tools of the text server (a mixin): diffs, templates, HTML to text, wrapping, truncation."""

from __future__ import annotations

import difflib
import re
import textwrap
from html.parser import HTMLParser
from typing import Annotated

from pydantic import BaseModel, Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless._common import TextResult, invalid

MAX_DIFF_LINES = 2_000
MAX_FILLED = 200_000
LongText = Annotated[str, Field(description="The text, at most 100,000 characters.", max_length=100_000)]

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}|\{[^{}]*\}|[{}]")
_BLOCK_TAGS = {
    "p",
    "div",
    "br",
    "li",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "section",
    "article",
    "header",
    "footer",
    "ul",
    "ol",
    "table",
    "blockquote",
    "pre",
    "hr",
}


class LineDiff(BaseModel):
    diff: str = Field(
        description="Unified diff ('-' removed, '+' added lines); empty when the texts are equal."
    )
    added: int = Field(description="Lines only in the new text.")
    removed: int = Field(description="Lines only in the old text.")
    identical: bool


class FilledTemplate(BaseModel):
    text: str = Field(description="The template with every placeholder replaced.")
    unused: list[str] = Field(description="Names in `values` that the template never used.")


class _TextExtractor(HTMLParser):
    """Collects visible text; block elements become line breaks; script and style are dropped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def _fill(template: str, values: dict[str, str]) -> tuple[str, set[str]]:
    used: set[str] = set()
    missing: list[str] = []
    size = [0]

    def replace(m: re.Match[str]) -> str:
        token, name = m.group(0), m.group(1)
        if token in ("{{", "}}"):
            return token[0]
        if name is None:
            raise invalid(
                f"{token!r} is not a placeholder; write {{name}} with a plain name, and {{{{ or }}}} "
                "for literal braces"
            )
        if name not in values:
            missing.append(name)
            return token
        used.add(name)
        size[0] += len(values[name])
        if size[0] > MAX_FILLED:  # stop before building a huge string, not after
            raise invalid(f"the filled text would exceed {MAX_FILLED} characters; use shorter values")
        return values[name]

    text = _PLACEHOLDER.sub(replace, template)
    if missing:
        raise invalid(f"no value for placeholder(s) {sorted(set(missing))}; add them to `values`")
    return text, used


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
        text, used = _fill(template, values)
        return FilledTemplate(text=text, unused=sorted(set(values) - used))

    @tool(read_only=True)
    def strip_html(
        self, html: Annotated[str, Field(description="HTML, at most 100,000 characters.", max_length=100_000)]
    ) -> TextResult:
        """The visible text of an HTML fragment: tags removed, entities decoded, scripts and styles dropped,
        block elements on their own lines."""
        parser = _TextExtractor()
        try:
            parser.feed(html)
            parser.close()
        except (AssertionError, ValueError) as err:  # the stdlib parser still trips on some malformed markup
            raise invalid(f"cannot parse this HTML ({err}); check for broken '<!' declarations") from None
        lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
        return TextResult(text="\n".join(line for line in lines if line))

    @tool(read_only=True)
    def wrap_text(
        self,
        text: LongText,
        width: Annotated[
            int, Field(description="Maximum line length in characters, 10..200.", ge=10, le=200)
        ] = 80,
    ) -> TextResult:
        """Re-wrap text to lines of at most `width` characters, keeping blank-line paragraph breaks. Words
        longer than the width are split."""
        paragraphs = re.split(r"\n\s*\n", text)
        return TextResult(
            text="\n\n".join(textwrap.fill(" ".join(p.split()), width=width) for p in paragraphs)
        )

    @tool(read_only=True)
    def truncate_text(
        self,
        text: LongText,
        max_chars: Annotated[
            int, Field(description="Maximum length of the result, suffix included.", ge=1, le=100_000)
        ],
        suffix: Annotated[str, Field(description="Appended when the text is cut.", max_length=20)] = "…",
    ) -> TextResult:
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
