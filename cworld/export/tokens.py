"""Token counts for the export summary: cl100k_base through tiktoken, offline.

tiktoken downloads its encodings on first use; litellm ships cl100k_base inside its package, so the
encoder is loaded from there (without importing litellm, which is slow). When tiktoken or the file is
missing the count falls back to characters / 4 and the summary says `approximate`.
"""

from __future__ import annotations

import importlib.util
import os
from functools import cache
from pathlib import Path
from typing import Any

ENCODING = "cl100k_base"


def _bundled_cache() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None


@cache
def _encoder() -> Any | None:
    try:
        import tiktoken
    except ImportError:
        return None
    bundled = _bundled_cache()
    if bundled is not None and "TIKTOKEN_CACHE_DIR" not in os.environ:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)
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
