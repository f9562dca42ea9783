"""Words for harvested-pool tasks (`goal_roles.py`, `goal_chain.py`, `goal_words.py`): a parameter's name as
snake case and as words, which parameters take free text, and which values an answer can quote. The values
themselves come from the world's records or Faker (`goal_roles.plain_value`), never from a schema's
placeholder example."""

from __future__ import annotations

import re
from typing import Any

_TEXT = re.compile(r"(^|_)(message|text|body|content|description|notes?|summary|comment|prompt|markdown)$")


def snake(name: str) -> str:
    """`baseId` -> base_id; `Max-Results` -> max_results."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return re.sub(r"[^a-z0-9]+", "_", spaced.lower()).strip("_")


def words_of(name: str) -> str:
    return snake(name).replace("_", " ")


def is_text_param(name: str) -> bool:
    return bool(_TEXT.search(snake(name)))


def printable(value: Any) -> bool:
    """A short scalar an answer can quote."""
    if isinstance(value, bool) or value is None:
        return False
    return isinstance(value, str | int | float) and 0 < len(str(value)) <= 60
