"""The text server: counting, casing, slugs, edit distance, sentences, word frequencies, regular expressions,
extraction, diffs, templates, HTML, JSON and CSV.

Every tool is a pure function of its arguments with size caps in the schema; regular expressions run with a
time limit (see `patterns`).

It holds no state (no `state.py`): every answer is a function of the call's arguments alone.
"""

from __future__ import annotations

from cworld.sandbox.stateless.shared import StatelessApp
from cworld.sandbox.stateless.text.tools import WordTools
from cworld.sandbox.stateless.text.tools_data import DataTools
from cworld.sandbox.stateless.text.tools_docs import DocumentTools
from cworld.sandbox.stateless.text.tools_regex import RegexTools


class TextServer(WordTools, RegexTools, DataTools, DocumentTools, StatelessApp):
    name = "text"
    title = "Text tools"
    description = (
        "Text utilities: counts, case conversion, slugs, edit distance, sentences, "
        "word frequencies, regex find/replace, email/URL extraction, diffs, templates, "
        "HTML to text, JSON and CSV."
    )
    category = "text"
