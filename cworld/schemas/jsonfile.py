"""Reading a JSON file the user or an environment gave, with errors that name the file and the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cworld.errors import CworldError


def read_json(path: Path, error: type[CworldError], what: str, missing: str | None = None) -> Any:
    """The JSON in `path`. A missing file or invalid JSON raises `error` in one line naming `what`
    (`missing` replaces the default "<what> does not exist")."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(missing or f"{what} does not exist") from None
    except json.JSONDecodeError as exc:
        raise error(f"{what}: line {exc.lineno}: invalid JSON ({exc.msg})") from None
