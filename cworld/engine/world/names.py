"""Names that read like a real account's: a record's name or title from its kind's vocabulary (issue 34).

A generated world named its events 'Scale rich functionalities' and its rooms 'movement': Faker's
catch-phrases and lorem words, which a reader takes for generated at once, and its devices after
people. A card's entity (or `category_cards/_vocabulary.yaml`, by kind name) lists how such records are
named ("Dentist appointment", "Q{quarter} budget review", "Invoice #{n} overdue"); the world's records
take their names from it, drawn with the world's seeded RNG, so a seed always names them alike. Names
stay unique within a collection (a request quotes a name, and a plan picks a record by it).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from cworld.engine.cards.card import VOCABULARY_FIELD
from cworld.engine.world.state import Collection
from cworld.schemas.fake import company, first_name, place

#: The fields a record is named by, in the order a person reads them.
NAME_FIELDS = ("title", "name", "subject", "summary", "display_name", "headline", "label")
#: Field types a vocabulary may replace: made-up words and titles, never an enum, a company or a place.
NAMED_TYPES = frozenset({"title", "string", "word", "name", "text"})
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


def name_field(coll: Collection) -> str | None:
    """The field the kind is named by, when a vocabulary may fill it (not its key: keys stay as drawn)."""
    fields = coll.entity.fields
    for name in NAME_FIELDS:
        if name in fields and name != coll.key_field and fields[name] in NAMED_TYPES:
            return name
    return None


_DRAW: dict[str, Callable[[random.Random], object]] = {
    "n": lambda rng: rng.randint(1000, 9999), "quarter": lambda rng: rng.randint(1, 4),
    "month": lambda rng: rng.choice(MONTHS), "year": lambda rng: rng.choice((2025, 2026, 2027)),
    "weekday": lambda rng: rng.choice(WEEKDAYS), "first": first_name, "city": lambda rng: place(rng).city,
    "company": company,
}


def fill_template(template: str, rng: random.Random) -> str:
    """One name from a template: only the placeholders it holds are drawn (Faker is costly per call), so a
    seed and a template always give the same name."""
    return template.format(**{key: _DRAW[key](rng) for key in VOCABULARY_FIELD.findall(template)})


def name_records(coll: Collection, rng: random.Random) -> None:
    """Name every record of `coll` from its kind's vocabulary (no vocabulary, no change), but for the card's
    own examples: each keeps its name, which its other fields agree with (a checklist's title heads its text)."""
    templates = coll.entity.vocabulary
    field = name_field(coll)
    if not templates or field is None:
        return
    curated = {str(e[field]) for e in coll.entity.examples if e.get(field)}
    taken: set[str] = set()
    for record in coll.records.values():
        if isinstance(record, dict) and str(record.get(field)) in curated and record[field] not in taken:
            taken.add(record[field])
        elif isinstance(record, dict):
            record[field] = _unique(templates, rng, taken)


def _unique(templates: list[str], rng: random.Random, taken: set[str]) -> str:
    name = ""
    for _ in range(6):
        name = fill_template(rng.choice(templates), rng)
        if name not in taken:
            break
    base, k = name, 2
    while name in taken:
        name, k = f"{base} ({k})", k + 1
    taken.add(name)
    return name
