"""Token counts for the export summary: cl100k_base through tiktoken, offline.

tiktoken downloads its encodings on first use; litellm ships cl100k_base inside its package, so the
encoder is loaded from there (`cworld.llm.encodings`). When tiktoken or the file is missing the count falls
back to characters / 4 and the summary says `approximate`.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from cworld.llm.encodings import use_bundled_encodings

ENCODING = "cl100k_base"


@cache
def _encoder() -> Any | None:
    try:
        import tiktoken
    except ImportError:
        return None
    use_bundled_encodings()
    try:
        return tiktoken.get_encoding(ENCODING)
    except Exception:  # no network and no cached file: fall back to the estimate
        return None


def tokenizer_name() -> str:
    return ENCODING if _encoder() is not None else "approximate (characters / 4)"


def count_tokens(text: str) -> int:
    encoder = _encoder()
    if encoder is None:
        return (len(text) + 3) // 4
    return len(encoder.encode(text, disallowed_special=()))
