"""Word tools of the text server (a mixin): statistics, slugs, case styles, edit distance, sentences, word
frequencies, sorting lines and counting substrings."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Annotated, Literal

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.shared import TextResult, invalid
from cworld.sandbox.stateless.text.models import (
    CaseStyle,
    EditDistance,
    LeadSentences,
    LongText,
    Occurrences,
    Sentences,
    TextStats,
    WordCount,
    WordFrequencies,
)
from cworld.sandbox.stateless.text.words import (
    STOPWORDS,
    WORD,
    levenshtein,
    line_key,
    split_sentences,
    words_for_case,
)


class WordTools:
    @tool(read_only=True)
    def text_statistics(self, text: LongText) -> TextStats:
        """Count characters, words, sentences, lines and paragraphs, and estimate reading time."""
        words = len(WORD.findall(text))
        paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
        return TextStats(
            characters=len(text),
            characters_no_spaces=sum(1 for c in text if not c.isspace()),
            words=words,
            sentences=len(split_sentences(text)),
            lines=len(text.splitlines()),
            paragraphs=len(paragraphs),
            reading_minutes=round(words / 200, 1),
        )

    @tool(read_only=True)
    def slugify(
        self,
        text: Annotated[
            str, Field(description="Title or phrase to turn into a slug.", min_length=1, max_length=1000)
        ],
        separator: Annotated[Literal["-", "_"], Field(description="Character between words.")] = "-",
        max_length: Annotated[
            int, Field(description="Longest slug, cut at a word boundary.", ge=1, le=200)
        ] = 80,
    ) -> TextResult:
        """A URL-safe slug: accents removed, lowercase ASCII letters and digits joined by the separator,
        e.g. 'Crème Brûlée: A Recipe!' -> 'creme-brulee-a-recipe'."""
        ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
        words = re.findall(r"[a-z0-9]+", ascii_text.lower())
        if not words:
            raise invalid("the text has no letters or digits (after removing accents) to make a slug from")
        slug = ""
        for word in words:
            candidate = f"{slug}{separator}{word}" if slug else word
            if len(candidate) > max_length:
                break
            slug = candidate
        return TextResult(text=slug or words[0][:max_length])

    @tool(read_only=True)
    def change_case(
        self,
        text: Annotated[str, Field(description="The text to convert.", max_length=10_000)],
        style: Annotated[
            CaseStyle,
            Field(
                description="upper, lower, title ('Hello World'), sentence ('Hello "
                "world'), snake (hello_world), kebab (hello-world), camel "
                "(helloWorld), pascal (HelloWorld), constant (HELLO_WORLD)."
            ),
        ],
    ) -> TextResult:
        """Convert text between letter cases and identifier styles. Identifier styles split words at
        spaces, punctuation and camelCase boundaries."""
        if style in ("upper", "lower"):
            return TextResult(text=text.upper() if style == "upper" else text.lower())
        if style == "title":
            return TextResult(text=WORD.sub(lambda m: m.group(0)[:1].upper() + m.group(0)[1:].lower(), text))
        if style == "sentence":
            lowered = text.lower()
            first = next((i for i, c in enumerate(lowered) if c.isalpha()), None)
            return TextResult(
                text=lowered
                if first is None
                else lowered[:first] + lowered[first].upper() + lowered[first + 1 :]
            )
        words = [w.lower() for w in words_for_case(text)]
        joined = {
            "snake": "_".join(words),
            "kebab": "-".join(words),
            "constant": "_".join(words).upper(),
            "camel": "".join(w if i == 0 else w.capitalize() for i, w in enumerate(words)),
            "pascal": "".join(w.capitalize() for w in words),
        }
        return TextResult(text=joined[style])

    @tool(read_only=True)
    def edit_distance(
        self,
        a: Annotated[str, Field(description="First string, at most 500 characters.", max_length=500)],
        b: Annotated[str, Field(description="Second string, at most 500 characters.", max_length=500)],
        ignore_case: Annotated[bool, Field(description="Compare case-insensitively.")] = False,
    ) -> EditDistance:
        """Levenshtein edit distance between two strings and a 0..1 similarity (for typos, fuzzy matching)."""
        if ignore_case:
            a, b = a.casefold(), b.casefold()
        distance = levenshtein(a, b)
        longest = max(len(a), len(b))
        return EditDistance(
            distance=distance, similarity=1.0 if longest == 0 else round(1 - distance / longest, 6)
        )

    @tool(read_only=True)
    def split_sentences(self, text: LongText) -> Sentences:
        """Split text into sentences: at . ! ? … followed by a space, but not after abbreviations like
        'Dr.' or initials."""
        sentences = split_sentences(text)
        return Sentences(sentences=sentences, count=len(sentences))

    @tool(read_only=True)
    def summarize_first_sentences(self, text: LongText, sentences: LeadSentences = 2) -> TextResult:
        """An extractive 'lead' summary: the first N sentences of the text, whitespace normalized."""
        found = split_sentences(text)
        if not found:
            raise invalid("the text has no sentences to summarize; pass non-empty text")
        return TextResult(text=" ".join(found[:sentences]))

    @tool(read_only=True)
    def word_frequencies(
        self,
        text: LongText,
        top: Annotated[int, Field(description="How many words to list, 1..500.", ge=1, le=500)] = 10,
        exclude_stopwords: Annotated[
            bool, Field(description="Skip common English words (the, and, of...).")
        ] = False,
    ) -> WordFrequencies:
        """The most frequent words (case-insensitive), with counts."""
        words = [w.casefold() for w in WORD.findall(text)]
        counted = Counter(w for w in words if not (exclude_stopwords and w in STOPWORDS))
        ranked = sorted(counted.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return WordFrequencies(
            words=[WordCount(word=w, count=c) for w, c in ranked],
            distinct_words=len(counted),
            total_words=len(words),
        )

    @tool(read_only=True)
    def sort_lines(
        self,
        text: LongText,
        descending: Annotated[bool, Field(description="Largest first.")] = False,
        unique: Annotated[bool, Field(description="Drop repeated lines (keeps the first).")] = False,
        ignore_case: Annotated[bool, Field(description="Compare lines case-insensitively.")] = False,
        numeric: Annotated[
            bool, Field(description="Sort by the number each line starts with; lines without one go last.")
        ] = False,
    ) -> TextResult:
        """Sort the lines of a text, optionally de-duplicated, case-insensitive or numeric. Stable."""
        lines = text.splitlines()
        if unique:
            kept: dict[str, str] = {}
            for line in lines:
                kept.setdefault(line.casefold() if ignore_case else line, line)
            lines = list(kept.values())
        keyed = [(line_key(x, ignore_case, numeric), x) for x in lines]
        with_number = sorted((k, x) for k, x in keyed if k[0] == 0)
        without = sorted((k, x) for k, x in keyed if k[0] == 1)
        if descending:
            with_number.reverse()
            without.reverse()
        return TextResult(text="\n".join(x for _, x in with_number + without))

    @tool(read_only=True)
    def count_occurrences(
        self,
        text: LongText,
        substring: Annotated[
            str,
            Field(description="What to count (plain text, not a pattern).", min_length=1, max_length=1000),
        ],
        ignore_case: Annotated[bool, Field(description="Count regardless of case.")] = False,
    ) -> Occurrences:
        """Count non-overlapping occurrences of a substring and where they start."""
        found = re.finditer(re.escape(substring), text, re.IGNORECASE if ignore_case else 0)
        positions: list[int] = []
        count = 0
        for m in found:
            count += 1
            if len(positions) < 1000:
                positions.append(m.start())
        return Occurrences(count=count, positions=positions)
