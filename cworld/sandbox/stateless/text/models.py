"""Argument types and result models of the text server (pydantic: they are the tools' schemas)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

MAX_DATA = 100_000

MAX_ROWS = 5_000

MAX_DIFF_LINES = 2_000

MAX_FILLED = 200_000

MAX_PATTERN = 300

MAX_REGEX_TEXT = 20_000

MAX_REPLACEMENT = 200

MAX_OUTPUT = 200_000


CaseStyle = Literal["upper", "lower", "title", "sentence", "snake", "kebab", "camel", "pascal", "constant"]

JsonText = Annotated[
    str, Field(description="JSON text, at most 100,000 characters.", min_length=1, max_length=MAX_DATA)
]

LongText = Annotated[str, Field(description="The text, at most 100,000 characters.", max_length=100_000)]

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


LineWidth = Annotated[int, Field(description="Maximum line length in characters, 10..200.", ge=10, le=200)]
CutSuffix = Annotated[str, Field(description="Appended when the text is cut.", max_length=20)]
MaxChars = Annotated[
    int, Field(description="Maximum length of the result, suffix included.", ge=1, le=100_000)
]
LeadSentences = Annotated[int, Field(description="How many leading sentences to keep, 1..20.", ge=1, le=20)]
JsonIndent = Annotated[int, Field(description="Spaces per level; 0 gives compact one-line JSON.", ge=0, le=8)]
MaxMatches = Annotated[int, Field(description="Stop after this many matches (1..1000).", ge=1, le=1000)]
ReplaceCount = Annotated[
    int, Field(description="Replace at most this many matches; 0 means all.", ge=0, le=100_000)
]


class TextStats(BaseModel):
    characters: int
    characters_no_spaces: int
    words: int
    sentences: int
    lines: int
    paragraphs: int = Field(description="Blocks separated by blank lines.")
    reading_minutes: float = Field(description="Estimated reading time at 200 words a minute, 1 decimal.")


class EditDistance(BaseModel):
    distance: int = Field(
        description="Levenshtein distance: fewest single-character inserts, deletes, substitutions."
    )
    similarity: float = Field(description="1 - distance / length of the longer string (1.0 = identical).")


class Sentences(BaseModel):
    sentences: list[str]
    count: int


class WordCount(BaseModel):
    word: str
    count: int


class WordFrequencies(BaseModel):
    words: list[WordCount] = Field(description="Most frequent first; ties in alphabetical order.")
    distinct_words: int
    total_words: int


class Occurrences(BaseModel):
    count: int = Field(description="Non-overlapping occurrences.")
    positions: list[int] = Field(description="0-based offsets of the first 1,000 occurrences.")


class JsonCheck(BaseModel):
    valid: bool = Field(description="Whether the text is valid JSON.")
    error: str | None = Field(description="What is wrong, when invalid.")
    line: int | None = Field(description="1-based line of the error, when invalid.")
    column: int | None = Field(description="1-based column of the error, when invalid.")
    type: str | None = Field(
        description="Top-level type when valid: object, array, string, number, boolean, null."
    )


class JsonValue(BaseModel):
    found: bool = Field(description="Whether the path exists.")
    value_json: str | None = Field(description="The value at the path, as JSON text (null when not found).")
    type: str | None = Field(description="Its JSON type.")


class Table(BaseModel):
    rows: list[dict[str, str]] = Field(description="One object per data row, keyed by column name.")
    columns: list[str] = Field(description="Column names in order.")
    row_count: int


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
