"""A product the schema engine or a generated world names reads as a shop lists it (issue 34's "worlds that read
like real accounts"): a quality and a thing, never a Faker catch-phrase ("Future-Proofed Eco-Centric Portal")."""

from __future__ import annotations

import random

from cworld.schemas.records import RecordContext, title


def test_a_product_title_is_a_quality_and_a_thing() -> None:
    rng = random.Random(7)
    names = {title(rng, "name", RecordContext.for_fields(rng, "product", ["name", "price"])) for _ in range(40)}
    assert len(names) > 10
    for name in names:
        first, _, rest = name.partition(" ")
        assert first[0].isupper() and rest and rest == rest.lower(), name  # "Bamboo cutting board"
        assert "-" not in name, name  # no "Future-Proofed", "Eco-Centric"


def test_a_title_of_other_work_is_a_topic_and_what_it_is() -> None:
    """An event, a card or a document with no vocabulary of its own is titled as people title work ("Q3 budget
    review"), not with a business catch-phrase ("Streamline collaborative e-markets")."""
    rng = random.Random(3)
    kinds = ("review", "plan", "checklist", "notes", "update", "kickoff", "draft", "summary", "sync", "proposal")
    for entity in ("event", "card", "document"):
        made = title(rng, "title", RecordContext.for_fields(rng, entity, ["title"]))
        assert made.split()[-1] in kinds, made
