"""Outputs appear whole or not at all: write beside the target, then rename over it.

A killed export, a failed check or an error half-way leaves the previous file (or nothing) at `--out`,
never a truncated JSONL or a dataset folder missing its arrow files.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _sibling(path: Path, tag: str) -> Path:
    return path.with_name(f".{path.name}.{tag}-{os.getpid()}")


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temp path (file or folder) next to `path`; on success it replaces `path`, else it goes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _sibling(path, "tmp")
    _remove(tmp)
    try:
        yield tmp
        _replace(tmp, path)
    finally:
        _remove(tmp)


def _replace(tmp: Path, path: Path) -> None:
    if tmp.is_dir() and path.exists():
        old = _sibling(path, "old")
        _remove(old)
        path.rename(old)
        tmp.rename(path)
        _remove(old)
    elif path.is_dir():
        _remove(path)
        tmp.rename(path)
    else:
        os.replace(tmp, path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
