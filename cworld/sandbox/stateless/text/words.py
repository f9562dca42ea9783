"""Words, sentences and lines: the tokenizer, sentence splitter, case-splitting, edit distance and sort keys
the text server's counting and casing tools compute with."""

from __future__ import annotations

import re

WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


_ABBREVIATIONS = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "prof",
    "sr",
    "jr",
    "st",
    "vs",
    "etc",
    "e.g",
    "i.e",
    "no",
    "fig",
    "inc",
    "ltd",
    "co",
    "approx",
    "dept",
    "mt",
}


STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "will",
        "with",
        "you",
        "your",
        "not",
        "do",
        "does",
        "did",
        "been",
        "being",
        "which",
        "who",
        "what",
    }
)


def split_sentences(text: str) -> list[str]:
    """Sentences end at . ! ? … followed by space, except after common abbreviations (Dr., e.g.)."""
    pieces = re.split(r"(?<=[.!?…])\s+|(?<=[.!?…][\"')\]])\s+", " ".join(text.split()))
    out: list[str] = []
    for piece in pieces:
        last = out[-1].rsplit(" ", 1)[-1].rstrip(".").lower() if out else ""
        if out and (last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha())):
            out[-1] = f"{out[-1]} {piece}"
        elif piece:
            out.append(piece)
    return out


def words_for_case(text: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [w for w in re.split(r"[\W_]+", spaced) if w]


def levenshtein(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def line_key(line: str, ignore_case: bool, numeric: bool) -> tuple[int, float, str]:
    text = line.casefold() if ignore_case else line
    if not numeric:
        return 0, 0.0, text
    m = re.match(r"\s*([-+]?\d+(?:\.\d+)?)", line)
    return (0, float(m.group(1)), text) if m else (1, 0.0, text)
