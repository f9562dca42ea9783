"""The offline synthesizer's sentences: `task_synth/templates/<name>.yaml`, one file per block module.

Keeping the wording in the environment's content folder lets an author who copied the environment
(`cworld init`) reword rationales, rules, sub-goal labels and request clauses without touching code. A
template is a `str.format` string whose fields the block fills (`{payee}`, `{amount}`); a list is a set of
interchangeable phrasings the block picks from with the task's RNG (so its length is part of the seed's
outcome). Files are parsed once per path; a missing or malformed file, key or field is a one-line
`ContentError` naming the file and the key.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from cworld.environment import Environment
from cworld.errors import ContentError

FOLDER = "templates"


class Phrasebook:
    """One template file: dotted keys (`transfer.say`) into its nested mapping."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data

    def raw(self, key: str) -> Any:
        node: Any = self.data
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                raise ContentError(f"{self.path}: no template '{key}'")
            node = node[part]
        return node

    def text(self, key: str, **fields: Any) -> str:
        """The template at `key` filled with `fields`."""
        value = self.raw(key)
        if not isinstance(value, str):
            raise ContentError(f"{self.path}: template '{key}' must be a string")
        return self._fill(key, value, fields)

    def variants(self, key: str, **fields: Any) -> list[str]:
        """Every phrasing at `key` (a list, or one string), each filled with `fields`."""
        value = self.raw(key)
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not items or not all(isinstance(v, str) for v in items):
            raise ContentError(f"{self.path}: template '{key}' must be a string or a list of strings")
        return [self._fill(key, v, fields) for v in items]

    def mapping(self, key: str) -> dict[str, str]:
        value = self.raw(key)
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ContentError(f"{self.path}: template '{key}' must map names to strings")
        return value

    def _fill(self, key: str, template: str, fields: dict[str, Any]) -> str:
        try:
            return template.format(**fields)
        except (KeyError, IndexError, ValueError) as exc:
            problem = f"{type(exc).__name__}: {exc}"
            raise ContentError(f"{self.path}: template '{key}' cannot be filled ({problem})") from None


class Templates:
    """The template folder of one environment; `book(name)` is `<folder>/<name>.yaml`, parsed once."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def of(cls, env: Environment) -> Templates:
        return cls(env.task_synth / FOLDER)

    def book(self, name: str) -> Phrasebook:
        return _load(self.folder / f"{name}.yaml")


@lru_cache(maxsize=64)
def _load(path: Path) -> Phrasebook:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ContentError(f"{path}: cannot read the template file ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise ContentError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(data, dict):
        raise ContentError(f"{path}: a template file must be a mapping of keys to templates")
    return Phrasebook(path, data)


def default_templates() -> Templates:
    """The packaged environment's templates (what tests and callers without an environment use)."""
    return Templates.of(Environment.resolve())
