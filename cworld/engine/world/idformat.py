"""What ids look like: from the card (`id_format`), or learned from a tool's own examples.

A simulated world is only believable when its ids look like the real tool's: `mail_0007` for the mail
sandbox, `SKU-1042` for the shop, `42` for a GitHub issue, a 40-hex sha for git. Cards give a default;
a tool's parameter descriptions often show one ("message id, e.g. mail_0007"), and that wins.
"""

from __future__ import annotations

import random
import re
import uuid
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import EntityType
from cworld.engine.cards.operations import names_kind

#: "e.g. mail_0007", "such as SKU-1042", "like C_0003": an example id in a description.
_EXAMPLE = re.compile(r"(?:e\.g\.|such as|like|for example|example:)\s*[:,]?\s*['\"`]?([A-Za-z][\w-]*?\d+|\d+)\b")
_TRAILING_DIGITS = re.compile(r"^(.*?)(\d+)$")
_HEX = "0123456789abcdef"


@dataclass(frozen=True)
class IdFormat:
    """`template` uses {prefix}, {n} / {n:04d}, {sha}, {hex8}, {uuid}; see docs/category-cards.md."""

    template: str
    prefix: str

    def make(self, n: int, rng: random.Random) -> str:
        return self.template.format(
            prefix=self.prefix,
            n=n,
            sha="".join(map(rng.choice, repeat(_HEX, 40))),  # drawn whether used or not: the rng stream stays put
            hex8="".join(map(rng.choice, repeat(_HEX, 8))),
            uuid=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        )

    @property
    def numeric(self) -> bool:
        """Ids that are plain integers (GitHub issue numbers, SQL row ids)."""
        return self.template == "{n}"

    def regex(self) -> re.Pattern[str]:
        """Matches ids of this format: used to spot an id among a call's arguments."""
        return _id_regex(self.template, self.prefix)

    def looks_like(self, value: str) -> bool:
        """An id of this format, or of the same shape (`OA314-20260426` for `KJ001-20260310`: letters, digits
        and separators in the same order), as ids written by the task's author may be."""
        if self.regex().match(value):
            return True
        if self.numeric or any(t in self.template for t in ("{sha}", "{uuid}", "{hex8}")):
            return False
        return _shape(self.make(1, random.Random(0))) == _shape(value)

    def number_of(self, value: str) -> int | None:
        """The sequence number inside an id of this format, so new ids continue after it."""
        match = self.regex().match(value) if "{n" in self.template else None
        return int(match.group("n")) if match else None


@lru_cache(maxsize=1024)
def _id_regex(template: str, prefix: str) -> re.Pattern[str]:
    """The regex of an id format, built once per format (it is asked for on most calls)."""
    out = []
    for part in re.split(r"(\{[^}]+\})", template):
        if part == "{prefix}":
            out.append(re.escape(prefix))
        elif part.startswith("{n"):
            out.append(r"(?P<n>\d+)")
        elif part == "{sha}":
            out.append(r"[0-9a-f]{7,40}")
        elif part == "{hex8}":
            out.append(r"[0-9a-f]{8}")
        elif part == "{uuid}":
            out.append(r"[0-9a-f-]{36}")
        else:
            out.append(re.escape(part))
    return re.compile("^" + "".join(out) + "$")


def _shape(value: str) -> str:
    return re.sub(r"[A-Za-z]+", "a", re.sub(r"\d+", "9", value))


def card_format(entity: EntityType) -> IdFormat:
    return IdFormat(entity.id_format, entity.id_prefix)


def learned_format(example: str) -> IdFormat | None:
    """`mail_0007` -> `{prefix}_{n:04d}` with prefix `mail`; `SKU-1042` -> `{prefix}-{n:04d}`; `42` -> `{n}`."""
    if example.isdigit():
        return IdFormat("{n}", "")
    match = _TRAILING_DIGITS.match(example)
    if not match or not match.group(1):
        return None
    head, digits = match.group(1), match.group(2)
    sep = head[-1] if head[-1] in "_-" else ""
    prefix = head[:-1] if sep else head
    if not prefix or not re.fullmatch(r"[A-Za-z]+", prefix):
        return None  # `AU412-20260514` is a flight number and a date, not a sequence: the card knows better
    width = f":0{len(digits)}d" if len(digits) > 1 and digits.startswith("0") or len(digits) >= 3 else ""
    return IdFormat(f"{{prefix}}{sep}{{n{width}}}", prefix)


def hinted_formats(tool: ToolSpec) -> dict[str, IdFormat]:
    """Parameter stem -> format, for `*_id` parameters whose description shows an example id."""
    out: dict[str, IdFormat] = {}
    for name, prop in (tool.input_schema.get("properties") or {}).items():
        if not isinstance(prop, dict) or not re.search(r"(^|_)ids?$", name):
            continue
        example = _EXAMPLE.search(str(prop.get("description", "")))
        learned = learned_format(example.group(1)) if example else None
        if learned is not None:
            out[re.sub(r"_?ids?$", "", name)] = learned
    return out


def format_for(entity: EntityType, hints: dict[str, IdFormat]) -> IdFormat:
    """A hint whose parameter stem ends with the entity name (`from_account` -> account) beats the card."""
    for stem, fmt in hints.items():
        if names_kind(stem, entity):
            return fmt
    return card_format(entity)
