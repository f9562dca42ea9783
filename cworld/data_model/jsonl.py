"""JSONL files of versioned records: append with fsync, read with clear errors."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from cworld.errors import UsageError

M = TypeVar("M", bound=BaseModel)


def append_jsonl(path: Path, records: Iterable[BaseModel]) -> None:
    """Append records and fsync, so a killed process loses at most the line being written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        for rec in records:
            fh.write(rec.model_dump_json() + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def iter_jsonl(path: Path, model: type[M], *, skip_partial_last: bool = True) -> Iterator[M]:
    """Yield records; a torn last line (a crash mid-write) is skipped, any other bad line is an error."""
    if not path.is_file():
        raise UsageError(f"{path}: no such file; give an existing {model.__name__} JSONL file")
    lines = path.read_text(encoding="utf-8").splitlines()
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield model.model_validate(json.loads(line))
        except (json.JSONDecodeError, ValidationError) as exc:
            if skip_partial_last and lineno == len(lines):
                return
            first = str(exc).splitlines()[0]
            raise UsageError(f"{path}:{lineno}: not a valid {model.__name__} record ({first})") from None


def read_jsonl(path: Path, model: type[M]) -> list[M]:
    return list(iter_jsonl(path, model))


def write_jsonl_atomic(path: Path, records: Iterable[BaseModel]) -> None:
    """Write a whole file via a temp file and rename: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(rec.model_dump_json() + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)
