"""Category cards: the shipped cards load and cover every live tool; bad cards fail with file and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cworld.data_model import ServerSpec, ToolSpec
from cworld.engine.cards.assign import assign_cards, assign_tool
from cworld.engine.cards.card import load_card, load_cards
from cworld.engine.cards.operations import entity_for, operation_kind
from cworld.errors import ContentError
from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework.server import tool_specs

ROOT = Path(__file__).resolve().parents[1]
CARD_DIR = ROOT / "category_cards"
REAL_SERVERS = ("filesystem", "memory", "git", "time", "sqlite", "fetch", "postgres", "github", "brave-search")


@pytest.fixture(scope="module")
def cards():
    return load_cards(CARD_DIR)


def test_the_shipped_cards(cards) -> None:
    assert len(cards) >= 18 and "generic" in cards
    without_live_tool = {name for name, card in cards.items() if not card.live}
    assert {"crm", "health_records"} <= without_live_tool
    for card in cards.values():
        assert card.entities and card.failures and card.consistency and card.demonstrations, card.name
        assert {"list", "get", "create"} <= set(card.operations), card.name
        for entity in card.entities:
            assert entity.seed_count or card.name == "utilities" or entity.name in ("observation", "insight"), entity


def test_every_sandbox_app_and_real_server_is_named_by_a_card(cards) -> None:
    named = {server for card in cards.values() for server in card.recognition.servers}
    assert {app.name for app in all_apps()} <= named
    assert set(REAL_SERVERS) <= named


def test_every_sandbox_and_real_tool_gets_a_specific_card(cards) -> None:
    tools = [t for app in all_apps() for t in tool_specs(app)]
    tools += [ToolSpec.model_validate(t) for t in json.loads((ROOT / "registry/recorded/real_tools.json").read_text())]
    assignments = assign_cards(tools, cards)
    generic = [a.tool_id for a in assignments if a.card == "generic"]
    assert generic == []
    by_tool = {a.tool_id: a.card for a in assignments}
    expected = {"mail/send_email": "email", "shop/checkout": "ecommerce", "taskboard/create_card": "task_board",
                "git/git_log": "version_control", "github/create_issue": "code_hosting", "math/factorial": "utilities",
                "datetime/easter_date": "time", "sqlite/read_query": "sql_database", "memory/read_graph": "knowledge_graph"}
    assert {k: by_tool[k] for k in expected} == expected


def test_assignment_order_manifest_then_rules_then_embedding(cards) -> None:
    tool = ToolSpec(server="acme", name="list_deals", description="Deals in the pipeline")
    assert assign_tool(tool, cards).reason == "keywords"  # type: ignore[union-attr]
    server = ServerSpec(id="acme", kind="catalog", transport="catalog", catalog="x.json", tool_categories={"list_deals": "finance"})
    assert assign_tool(tool, cards, server).card == "finance"  # type: ignore[union-attr]
    odd = ToolSpec(server="acme", name="frobnicate", description="Does a thing")
    assert assign_tool(odd, cards) is None
    fake_embed = lambda texts: [[1.0 if "Weather" in t or "frobnicate" in t else 0.0] for t in texts]  # noqa: E731
    assert assign_cards([odd], cards, embed=fake_embed)[0].card == "weather"
    assert assign_cards([odd], cards)[0].card == "generic"


def test_operation_and_entity_inference(cards) -> None:
    def spec(name: str, **hints) -> ToolSpec:
        return ToolSpec(server="s", name=name, annotations=hints)

    github = cards["code_hosting"]
    assert entity_for(spec("add_issue_comment"), github).name == "comment"
    assert entity_for(spec("get_pull_request_status"), github).name == "pull_request"
    # the object ends at a link word where a kind is named before it: what is listed, made or read is that kind
    board, books = cards["task_board"], cards["accounting"]
    assert entity_for(spec("add_card_to_list"), board).name == "card"
    assert entity_for(spec("get_cards_by_list_id"), board).name == "card"
    assert entity_for(spec("list_payments_for_contact"), books).name == "payment"
    assert entity_for(spec("get_list"), board).name == "list"  # no link word: the name's last kind
    assert entity_for(spec("check_in_invoice"), books).name == "invoice"  # `check in` is one verb, no link
    assert operation_kind(spec("git_status")) == "get"
    assert operation_kind(spec("brave_web_search")) == "search"
    assert operation_kind(spec("createIssue")) == "create"
    assert operation_kind(spec("send_email", read_only_hint=True)) == "get"
    # a destructive hint says a write may overwrite (`browser_navigate`, `rotate_secret`), not that it deletes
    assert operation_kind(spec("frobnicate", destructive_hint=True)) == "action"


def _copy_cards(tmp_path: Path) -> Path:
    folder = tmp_path / "category_cards"
    shutil.copytree(CARD_DIR, folder)
    return folder


def test_files_and_folders_starting_with_underscore_are_not_cards(tmp_path: Path) -> None:
    folder = _copy_cards(tmp_path)
    (folder / "_draft.yaml").write_text("not: a card")
    assert (folder / "_prompts").is_dir()
    assert "_draft" not in load_cards(folder)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: email\ntitle: E\n", "email.yaml: field 'description': Field required"),
        ("name: email\ntitle: E\ndescription: d\nentities: [{name: m, id_prefix: m, fields: {a: blob}}]\n",
         "field 'entities.0.fields': Value error, unknown field types {'a': 'blob'}"),
        ("name: mail\ntitle: E\ndescription: d\n", "field 'name' is 'mail' but the file is 'email.yaml'"),
        ("name: email\n  bad: [", "email.yaml: not valid YAML"),
        ("- a list\n", "a card must be a mapping"),
        ("name: email\ntitle: E\ndescription: d\nfailures: [{when: w, error_class: oops, message: m}]\n",
         "field 'failures.0.error_class'"),
    ],
)
def test_bad_cards_name_the_file_and_field(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "email.yaml"
    path.write_text(text)
    with pytest.raises(ContentError) as err:
        load_card(path)
    assert expected in str(err.value) and str(path) in str(err.value)


def test_a_folder_without_generic_is_refused(tmp_path: Path) -> None:
    folder = _copy_cards(tmp_path)
    (folder / "generic.yaml").unlink()
    with pytest.raises(ContentError, match="no generic.yaml"):
        load_cards(folder)


def test_a_catch_all_category_gives_way_to_what_the_tool_names(cards) -> None:
    """A harvested server filed as `utilities` that reads and writes files gets the file system's card (its
    paths name files, its families run); a calculator filed the same way stays a utility."""
    read = ToolSpec(server="fs", name="fast_read_file", description="Reads a file (with auto-chunking support)",
                    category="utilities")
    add = ToolSpec(server="calc", name="add_numbers", description="Adds two numbers", category="utilities")
    assert assign_tool(read, cards).card == "file_system"  # type: ignore[union-attr]
    assert assign_tool(add, cards).card == "utilities"  # type: ignore[union-attr]


def test_a_harvest_category_gives_way_to_a_card_the_tool_names_strongly(cards) -> None:
    """`git_log` of a server filed as code hosting reads a local repository: the version-control card, which its
    name and description name and the code-hosting card does not; a tool both name keeps its category's card."""
    log = ToolSpec(server="git-local", name="git_log", category="code_hosting",
                   description="Shows the commit logs: each commit on the branch, with its message")
    assert assign_tool(log, cards).card == "version_control"
    issue = ToolSpec(server="git-host", name="create_issue", category="code_hosting",
                     description="Open an issue in a GitHub repository")
    assert assign_tool(issue, cards).card == "code_hosting"
