"""Tokens for the lexical index: identifiers split into words, stopwords dropped, a light stemmer.

The stemmer is a small Porter step-1: it folds the inflections that separate how people ask ("sending
emails", "created a file") from how tools are named ("send_email", "create_file") — plurals, -ing, -ed, a
final -e and -y — and nothing more aggressive, so "user" and "use" stay apart. It is consistent rather than
linguistic: "message" and "messages" both become "messag", which is all BM25 needs.
"""

from __future__ import annotations

import re
from functools import lru_cache

from cworld.registry.index.documents import split_identifier

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*|[0-9]+")
_VOWELS = frozenset("aeiouy")

_STOPWORD_TEXT = """a about above after again all also am an and any are as at be because been before being below
between both but by can could did do does doing done down during each either else etc every few for from
further get gets got had has have having he her here hers him his how i if in into is it its itself just
let lets like may me might mine more most much must my myself need needs no nor not now of off on once
only or other our ours out over own please same shall she should so some such than that the their them
then there these they this those through to too under until up upon us use used uses using very via want
wants was we were what when where whether which while who whom whose why will with within without would
you your yours yourself e g eg ie"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _has_vowel(stem: str) -> bool:
    return any(c in _VOWELS for c in stem)


def _undouble(stem: str) -> str:
    """`stopp` -> `stop`, `runn` -> `run`; `ll`, `ss`, `zz` stay (`fill`, `pass`)."""
    if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz" and stem[-1] not in _VOWELS:
        return stem[:-1]
    return stem


def _strip_plural(word: str) -> str:
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "i"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def _strip_verb(word: str) -> str:
    for suffix in ("ing", "ed"):
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            if len(stem) >= 3 and _has_vowel(stem):
                return _undouble(stem)
    return word


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The light stem of one lower-case word (see the module docstring)."""
    if len(word) <= 3 or word.isdigit():
        return word
    word = _strip_verb(_strip_plural(word))
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    if word.endswith("y") and len(word) > 3 and word[-2] not in _VOWELS:
        word = word[:-1] + "i"
    return word


def words(text: str) -> list[str]:
    """Lower-case words with identifiers split (`listDirectory`, `git_log` -> list directory, git log)."""
    out: list[str] = []
    for raw in _TOKEN.findall(text.replace("_", " ")):
        out.extend(split_identifier(raw))
    return out


def tokenize(text: str) -> list[str]:
    """Stemmed content words: what both documents and queries become in the lexical index."""
    return [stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1]
