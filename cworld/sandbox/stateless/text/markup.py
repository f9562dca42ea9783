"""HTML to plain text and `{name}` template filling, for the text server's document tools."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from cworld.sandbox.stateless.shared import invalid
from cworld.sandbox.stateless.text.models import MAX_FILLED

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


class TextExtractor(HTMLParser):
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


def fill_placeholders(template: str, values: dict[str, str]) -> tuple[str, set[str]]:
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
