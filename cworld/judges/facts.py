"""The facts a final answer states (numbers, ids, names, quoted strings) and the observations holding them.

A judge can only check a claim against the observation it came from. Cut that observation to its first
few hundred characters and a true fact looks invented: the grounding judge reports a hallucination
that is not there. So the condenser keeps whole the observations that hold the answer's facts, and this
module finds them. A fact most observations hold (a year, the user's name) tells nothing apart, so it
does not count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_QUOTED = re.compile(r'"([^"\n]{2,200})"|“([^”\n]{2,200})”|«([^»\n]{2,200})»|`([^`\n]{2,200})`'
                     r"|(?<!\w)'([^'\n]{2,200})'(?!\w)")
_TOKEN = re.compile(r"\w+(?:[.,:/@+#-]\w+)*")
_WORD = r"[A-Z][^\W\d_]*(?:['’-][^\W\d_]+)*(?![\w'’-])"
_NAME = re.compile(rf"{_WORD}(?: (?:(?:of|de|da|van|von|der|la|le|du) )*{_WORD})*")
_BULLET = re.compile(r"(?:^|\n)\s*(?:[-*•>#]+|\d+[.)])$")
_LEADING_WORDS = frozenset({"The", "A", "An", "This", "That", "These", "Those", "I", "We", "You", "Your", "Our",
                            "It", "My", "He", "She", "They", "Its", "Their", "His", "Her"})
MIN_NAME = 3


@dataclass(frozen=True)
class Fact:
    text: str
    kind: str  # "quoted" | "token" (a number, an id, an address) | "name"

    def pattern(self) -> re.Pattern[str]:
        body = r"\s+".join(re.escape(part) for part in self.text.split())
        if self.kind == "quoted":
            return re.compile(body, re.IGNORECASE)
        flags = 0 if self.kind == "name" else re.IGNORECASE  # "Done" is no name in "done"
        return re.compile(rf"(?<!\w){body}(?!\w)", flags)


def answer_facts(answer: str) -> list[Fact]:
    """The checkable facts `answer` states, each once, in order of appearance."""
    found: dict[str, Fact] = {}
    for match in _QUOTED.finditer(answer):
        quoted = " ".join(next(g for g in match.groups() if g).split())
        found.setdefault(quoted.lower(), Fact(quoted, "quoted"))
    for token in _TOKEN.findall(answer):
        if (any(c.isdigit() for c in token) and len(token) >= 2) or "@" in token:
            found.setdefault(token.lower(), Fact(token, "token"))
            plain = token.replace(",", "")
            if plain != token:  # 4,512.07 in the answer, 4512.07 in the JSON it came from
                found.setdefault(plain.lower(), Fact(plain, "token"))
    for name in _names(answer):
        found.setdefault(name.lower(), Fact(name, "name"))
    return list(found.values())


def _names(answer: str) -> list[str]:
    """Capitalised word runs, less a capital that only starts a sentence."""
    names = []
    for match in _NAME.finditer(answer):
        words = match.group(0).split()
        while words and words[0] in _LEADING_WORDS:
            words = words[1:]
        if not words or (len(words) == 1 and words[0] == match.group(0) and _starts_sentence(answer, match.start())):
            continue
        name = " ".join(words)
        if len(name) >= MIN_NAME:
            names.append(name)
    return names


def _starts_sentence(text: str, at: int) -> bool:
    before = text[max(0, at - 16):at].rstrip(" \t")
    return at == 0 or not before or before[-1] in ".!?:;\n\"'(" or bool(_BULLET.search(before))


def holders(facts: Sequence[Fact], observations: Sequence[str]) -> dict[int, list[Fact]]:
    """Which observation (by position) holds which of the facts; facts held by most observations dropped."""
    held: dict[int, list[Fact]] = {}
    common = max(3, len(observations) // 2)
    for fact in facts:
        pattern = fact.pattern()
        where = [i for i, text in enumerate(observations) if pattern.search(text)]
        if len(where) > common:
            continue
        for i in where:
            held.setdefault(i, []).append(fact)
    return held


def by_evidence_value(held: dict[int, list[Fact]]) -> list[int]:
    """Observations in the order they should be kept whole: first a greedy cover (each pick holds the
    most facts not yet covered, rarer facts weighing more), then the rest by what they hold; the later
    observation first on a tie (the agent's answer rests on what it read last)."""
    counts: dict[str, int] = {}
    for facts in held.values():
        for fact in facts:
            counts[fact.text] = counts.get(fact.text, 0) + 1
    weight = {text: 1.0 / n for text, n in counts.items()}
    order: list[int] = []
    covered: set[str] = set()
    left = set(held)
    while left:
        gain = {i: sum(weight[f.text] for f in held[i] if f.text not in covered) for i in left}
        best = max(left, key=lambda i: (gain[i], sum(weight[f.text] for f in held[i]), i))
        order.append(best)
        covered.update(f.text for f in held[best])
        left.remove(best)
    return order
