"""tiktoken's encodings without the network: litellm ships cl100k_base and o200k_base inside its package.

tiktoken downloads an encoding on its first use and reads it from `TIKTOKEN_CACHE_DIR` when the file is
there (named by the SHA-1 of its URL, as litellm stores them). Pointing tiktoken at litellm's folder lets
token counts work offline: cworld's export summary, and Inspect's `mockllm`, which counts with o200k_base.
A cache folder the user chose (`TIKTOKEN_CACHE_DIR`, `DATA_GYM_CACHE_DIR`) is left as it is.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

USER_CACHE_VARIABLES = ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")


def bundled_encodings() -> Path | None:
    """litellm's folder of tiktoken files (found without importing litellm, which is slow); None without it."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None


def use_bundled_encodings() -> None:
    """Let tiktoken read its encodings from litellm's package unless the user named a cache folder."""
    if any(name in os.environ for name in USER_CACHE_VARIABLES):
        return
    folder = bundled_encodings()
    if folder is not None:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
