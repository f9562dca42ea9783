"""Every card's demonstrations agree with the envelope and their tool's response pattern, checked on load:
a future demonstration that contradicts its schema fails here and stops the card from loading."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cworld.engine.cards.card import CategoryCard, card_files, load_card
from cworld.engine.cards.demos import demonstration_problem
from cworld.engine.llm.prompts import TRANSIENT_ERROR_CLASSES
from cworld.errors import ContentError

CARD_DIR = Path(__file__).resolve().parents[1] / "category_cards"
FILES = card_files(CARD_DIR)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_demonstration_validates(path: Path) -> None:
    card = CategoryCard.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    assert card.demonstrations, "a card shows the engine at least one demonstration"
    assert demonstration_problem(card) is None
    for demo in card.demonstrations:
        assert (demo.error_class is not None) == demo.is_error
        assert demo.error_class not in TRANSIENT_ERROR_CLASSES


def _with_demo(tmp_path: Path, card: str, index: int, **change: object) -> Path:
    raw = yaml.safe_load((CARD_DIR / f"{card}.yaml").read_text(encoding="utf-8"))
    raw["demonstrations"][index].update(change)
    for key in [k for k, v in change.items() if v is None]:
        del raw["demonstrations"][index][key]
    path = tmp_path / f"{card}.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("card", "index", "change", "says"),
    [
        ("email", 1, {"error_class": None}, "error_class"),  # an error demonstration with no class
        ("email", 1, {"error_class": "timeout"}, "error_class"),  # a transient fault is the controller's
        ("email", 0, {"response": {"items": [{"subject": "Invoice"}], "total": 1}}, "'id' is a required"),
        ("ecommerce", 0, {"response": {"products": [{"id": "SKU-1"}], "total": 1, "page": 1, "has_more": False}},
         "'items' is a required"),
        ("file_system", 0, {"response": {"content": "first line"}}, "text pattern"),
        ("calendar", 0, {"error_class": "not_found"}, "only for an error demonstration"),
    ],
)
def test_a_demonstration_that_contradicts_its_schema_stops_the_card(
    tmp_path: Path, card: str, index: int, change: dict[str, object], says: str
) -> None:
    path = _with_demo(tmp_path, card, index, **change)
    with pytest.raises(ContentError) as bad:
        load_card(path)
    message = str(bad.value)
    assert "\n" not in message and f"demonstrations.{index}" in message and says in message
