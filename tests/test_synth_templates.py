"""The offline synthesizer's sentences come from `task_synth/templates/`: an environment author rewords a
task there, and a broken template is a one-line error naming the file and the key."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from cworld.environment import Environment
from cworld.errors import ContentError
from cworld.synth.offline.blocks import MODULES, all_blocks
from cworld.synth.offline.composer import Composer
from cworld.synth.offline.templates import Templates

ENV = Environment.resolve()


def test_every_block_module_has_its_template_file() -> None:
    templates = Templates.of(ENV)
    for module in MODULES:
        book = templates.book(module.APP)
        assert book.path.name == f"{module.APP}.yaml"
        assert all(b.app == module.APP for b in module.BLOCKS)
    assert len({b.name for b in all_blocks()}) == len(all_blocks())


def test_loading_is_cached() -> None:
    templates = Templates.of(ENV)
    assert templates.book("finance") is Templates.of(ENV).book("finance")


def _copy(tmp_path: Path) -> Templates:
    folder = tmp_path / "templates"
    shutil.copytree(ENV.task_synth / "templates", folder)
    return Templates(folder)


def test_a_reworded_template_changes_the_task(tmp_path: Path) -> None:
    templates = _copy(tmp_path)
    path = templates.folder / "finance.yaml"
    path.write_text(path.read_text().replace("look up {company}'s ticker symbol", "find {company} on the market"))
    c = Composer(0, random.Random(0), templates=templates)
    c.enter("finance")
    c.subgoal("research", company="Acme")
    c.step("symbol", "finance/find_symbol", {"query": "Acme"}, company="Acme")
    assert c.rationales["finance/find_symbol"] == "find Acme on the market"
    assert c.goals[0].description == "Check how Acme has done"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("why: [unclosed\n", "finance.yaml: not valid YAML"),
        ("- a list\n", "finance.yaml: a template file must be a mapping"),
        ("why: {}\n", "finance.yaml: no template 'why.quote'"),
        ("why: {quote: 'get {ticker}'}\n", "finance.yaml: template 'why.quote' cannot be filled"),
    ],
)
def test_a_broken_template_names_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    templates = _copy(tmp_path)
    (templates.folder / "finance.yaml").write_text(text)
    with pytest.raises(ContentError, match=message) as caught:
        templates.book("finance").text("why.quote", company="Acme")
    assert "\n" not in str(caught.value)


def test_a_missing_template_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(ContentError, match=r"nowhere\.yaml: cannot read"):
        Templates(tmp_path).book("nowhere")
