"""JSON and JSONL files: records appended with fsync, whole files written atomically, reads with clear
one-line errors."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from cworld.errors import CworldError, UsageError

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
    """Yield records; blank lines are skipped, and so is a torn last line (a crash mid-write leaves a
    line without its newline); any other bad line is a one-line `UsageError` naming FILE:LINE."""
    if not path.is_file():
        raise UsageError(f"{path}: no such file; give an existing {record_name(model)} JSONL file")
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield model.model_validate(json.loads(line))
        except (json.JSONDecodeError, ValidationError) as exc:
            if skip_partial_last and lineno == len(lines) and not text.endswith("\n"):
                return
            what = record_name(model)
            raise UsageError(
                f"{path}:{lineno}: not a {what} ({_reason(exc)}); fix or delete that line (one JSON {what} per line)"
            ) from None


def record_name(model: type[BaseModel]) -> str:
    """`ToolSpec` -> "tool spec": how a message names one record."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", model.__name__).lower()


def _reason(exc: json.JSONDecodeError | ValidationError) -> str:
    """Short: the JSON error and its column, or the first invalid field and what is wrong with it."""
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc.msg} at column {exc.colno}"
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f", and {exc.error_count() - 1} more" if exc.error_count() > 1 else ""
    return (f"{where}: {first['msg']}" if where else first["msg"]) + more


def read_jsonl(path: Path, model: type[M]) -> list[M]:
    return list(iter_jsonl(path, model))


def write_jsonl_atomic(path: Path, records: Iterable[BaseModel]) -> None:
    """Write a whole file via a temp file and rename: readers never see half a file."""
    write_text_atomic(path, "".join(rec.model_dump_json() + "\n" for rec in records))


def write_text_atomic(path: Path, text: str) -> None:
    """A whole text file via a temp file beside it and a rename: readers never see half a file, and
    writers in other processes or threads (serve's workers share a workspace) never share a temp file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(name)
    try:
        os.fchmod(fd, 0o644)  # as a plain open() would leave it, not mkstemp's owner-only 0600
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_json(path: Path, error: type[CworldError], what: str, missing: str | None = None) -> Any:
    """The JSON in `path`. A missing file or invalid JSON raises `error` in one line naming `what`
    (`missing` replaces the default "<what> does not exist")."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(missing or f"{what} does not exist") from None
    except json.JSONDecodeError as exc:
        raise error(f"{what}: line {exc.lineno}: invalid JSON ({exc.msg})") from None
