"""The world of a seed (issue 22): built before any task, the same for the same seed, saved and loaded."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from cworld.cli.main import cli, main
from cworld.data_model import ToolSpec
from cworld.engine.cards.card import CategoryCard, load_cards
from cworld.engine.world import build as world_build
from cworld.engine.world.base import ServerWorld, World
from cworld.engine.world.build import (
    ServerByServerWorld,
    build_world,
    collection_name,
    generated_world,
    load_or_build,
    load_records_file,
    references,
    server_cards,
    world_folder,
    world_now,
)
from cworld.environment import Environment
from cworld.errors import UsageError
from cworld.registry.harvest.catalog import harvested_specs
from cworld.registry.manifest import load_catalog
from cworld.registry.tools import environment_tools
from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework.session import SandboxSession

HARVESTED = "aashari-mcp-server-atlassian-jira"


@pytest.fixture(scope="module")
def cards() -> dict[str, CategoryCard]:
    return load_cards(Environment.resolve(None).category_cards)


@pytest.fixture(scope="module")
def tools() -> list[ToolSpec]:
    """The unbuilt registry's tools (sandbox, catalogs, recorded real servers) and one harvested server."""
    env = Environment.resolve(None)
    spec = next(s for s in harvested_specs(env) if s.id == HARVESTED)
    return [*environment_tools(env, None).tools, *load_catalog(env, spec)]


@pytest.fixture(scope="module")
def world(tools, cards) -> World:
    return build_world(0, tools, cards)


def as_json(world: World) -> str:
    return json.dumps({"now": world.now, **{k: v.to_json() for k, v in world.servers.items()}}, sort_keys=True)


def test_same_seed_same_world_other_seed_another(world, tools, cards):
    assert as_json(build_world(0, tools, cards)) == as_json(world)
    other = build_world(1, tools, cards)
    assert other.now != world.now
    for server in ("helio-crm", HARVESTED, "shop"):
        assert other.servers[server].state != world.servers[server].state


def test_a_server_is_the_same_built_alone(world, tools, cards):
    alone = build_world(0, tools, cards, servers=["helio-crm", "mail"])
    assert sorted(alone.servers) == ["helio-crm", "mail"]
    for name, sw in alone.servers.items():
        assert sw.to_json() == world.servers[name].to_json()


def test_world_holds_servers_not_stateless_ones(world, tools):
    stateless = {a.name for a in all_apps() if not a.stateful}
    assert not stateless & set(world.servers)
    assert {a.name for a in all_apps() if a.stateful} <= set(world.servers)
    assert {t.server for t in tools} - stateless == set(world.servers)
    assert world.now == world_now(0) and world.now.endswith("Z")


@pytest.mark.parametrize("app", ["shop", "finance"])
def test_sandbox_world_is_the_seeded_state(app, world):
    session = SandboxSession(0, all_apps())
    sw = world.servers[app]
    assert sw.source == "sandbox" and sw.card is None
    assert sw.state == session.snapshot()[app]
    app_type = next(a for a in all_apps() if a.name == app)
    # the shop's cart lines are kept inside its cart, beside the coupon: the layout names them there
    nested = {"cart_item": "cart.items"} if app == "shop" else {}
    assert sw.kinds == {**{kind: coll for coll, kind in app_type.entity_kinds.items()}, **nested}
    counters = session.id_counters()
    assert sw.ids and all(counters[prefix] == n for prefix, n in sw.ids.items())


@pytest.mark.parametrize("server", ["helio-crm", HARVESTED])
def test_generated_world_has_every_kind_with_existing_references(server, world, tools, cards):
    card = server_cards(tools, cards)[server]
    sw = world.servers[server]
    assert sw.source == "generated" and sw.card == card.name
    assert set(sw.kinds) == {e.name for e in card.entities}
    for entity in card.entities:
        records = sw.collection(entity.name)
        assert records is not None and sw.kinds[entity.name] == collection_name(entity.name)
        low = 10 if entity.key_field != "id" else 20  # a drawn natural key may run out of values early
        assert low <= len(records) <= 200, (entity.name, len(records))
        for field, many, target in references(card, entity):
            held = set(sw.collection(target) or {})
            for record in records.values():
                values = record[field] if many else [record[field]]
                assert all(str(v) in held for v in values if v is not None), (entity.name, field, record[field])


def test_references_are_filled(world):
    deals = world.servers["helio-crm"].collection("deal") or {}
    contacts = world.servers["helio-crm"].collection("contact") or {}
    assert all(d["contact_id"] in contacts for d in deals.values())


def test_collection_names():
    assert [collection_name(k) for k in ("contact", "person", "journal_entry", "address", "status", "key")] == [
        "contacts", "people", "journal_entries", "addresses", "status", "keys"]


def test_ten_thousand_records_per_kind_quickly(cards):
    started = time.process_time()
    sw = generated_world("helio-crm", cards["crm"], 0, size=10_000)
    spent = time.process_time() - started
    assert {e.name: len(sw.collection(e.name) or {}) for e in cards["crm"].entities} == dict.fromkeys(
        [e.name for e in cards["crm"].entities], 10_000)
    assert spent < 10, f"{spent:.1f} s of CPU for 40,000 records"
    names = {r["name"] for r in (sw.collection("contact") or {}).values()}
    assert len(names) > 5_000  # the bulk is not a few records repeated
    assert sw.ids["ct"] == 10_000


def test_load_or_build_builds_once_then_loads_and_completes(tmp_path, tools, cards, monkeypatch):
    wanted = ["helio-crm", "mail"]
    first = load_or_build(tmp_path, 0, tools, cards, servers=wanted)
    folder = world_folder(tmp_path) / "seed-0"
    assert {p.name for p in folder.iterdir()} == {"_world.json", "helio-crm.json", "mail.json"}
    real_build = world_build.build_world

    def sandbox_only(seed, tools, cards, size=None, servers=None):  # a sandbox app's world is always rebuilt
        assert set(servers or []) <= {"mail"}, f"a generated world was built again: {servers}"
        return real_build(seed, tools, cards, size=size, servers=servers)

    monkeypatch.setattr(world_build, "build_world", sandbox_only)
    again = load_or_build(tmp_path, 0, tools, cards, servers=wanted)
    assert as_json(again) == as_json(first)
    monkeypatch.undo()
    (folder / "mail.json").unlink()
    completed = load_or_build(tmp_path, 0, tools, cards, servers=wanted)
    assert (folder / "mail.json").is_file() and as_json(completed) == as_json(first)


def test_a_world_loaded_server_by_server_is_the_same_world(tmp_path, world, tools, cards):
    """`ServerByServerWorld` (the harvested-pool synthesizer's): a server is built and saved when first asked
    for, only it, and holds the records the whole world holds; a later whole load finds it saved."""
    lazy = ServerByServerWorld(tmp_path, 0, tools, cards)
    assert lazy.now == world.now and lazy.servers == {}
    for name in (HARVESTED, "mail"):
        assert lazy.server(name).to_json() == world.servers[name].to_json()  # type: ignore[union-attr]
    assert sorted(lazy.servers) == sorted([HARVESTED, "mail"]) and lazy.server("nope") is None
    saved = {p.name for p in (world_folder(tmp_path) / "seed-0").iterdir()}
    assert saved == {"_world.json", f"{HARVESTED}.json", "mail.json"}
    whole = load_or_build(tmp_path, 0, tools, cards, servers=[HARVESTED, "helio-crm"])
    assert whole.servers[HARVESTED].to_json() == world.servers[HARVESTED].to_json()


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_load_records_file(tmp_path, cards):
    data = {"contacts": [{"id": "ct_0041", "name": "Ada Lovelace"}, {"name": "No Id Yet"}],
            "deal": {"deal_0007": {"title": "Renewal", "contact_id": "ct_0041"}}}
    sw = load_records_file("helio-crm", write(tmp_path / "crm.json", data), cards["crm"])
    assert sw.source == "loaded:crm.json" and sw.card == "crm"
    assert list(sw.collection("contact") or {}) == ["ct_0041", "ct_0042"]
    assert (sw.collection("deal") or {})["deal_0007"] == {"id": "deal_0007", "title": "Renewal", "contact_id": "ct_0041"}
    assert sw.ids == {"ct": 42, "deal": 7}
    yaml_file = tmp_path / "crm.yaml"
    yaml_file.write_text("contact:\n  - {id: ct_0001, name: Grace Hopper}\n")
    assert list(load_records_file("helio-crm", yaml_file, cards["crm"]).state) == ["contacts"]


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    ('{"contacts": [', "not valid JSON"),
    ({"widgets": []}, "'widgets' is not an entity kind of card 'crm' (server helio-crm); it declares: contact, deal"),
    ({"contacts": [1]}, "a record must be an object"),
    ({"contacts": [{"id": "a"}, {"id": "a"}]}, "two records have the key 'a'"),
])
def test_load_records_file_errors_are_one_line(tmp_path, cards, content, message):
    path = tmp_path / "data.json"
    if content is not None:
        write(path, content)
    with pytest.raises(UsageError) as info:
        load_records_file("helio-crm", path, cards["crm"])
    assert message in str(info.value) and "\n" not in str(info.value)


# --- the CLI ------------------------------------------------------------------------------------------
def invoke(ws: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--workspace", str(ws), "world", *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def test_cli_build_and_show(tmp_path):
    code, out = invoke(tmp_path, "build", "--seed", "0", "--seed", "2", "--size", "25", "--server", "helio-crm",
                       "--server", "shop")
    assert code == 0, out
    assert "helio-crm (card crm): contact 25, deal 25, activity 25, task 25" in out
    assert "shop (sandbox): product 48" in out
    assert f"saved to {tmp_path / 'worlds' / 'seed-2'}" in out
    assert (tmp_path / "worlds" / "seed-2" / "helio-crm.json").is_file()
    code, out = invoke(tmp_path, "show", "helio-crm", "--kind", "deals", "--limit", "2")
    lines = out.splitlines()
    assert code == 0 and lines[1] == "deal (25):" and len(lines) == 4 and lines[2].startswith("  deal_0001  {")
    code, out = invoke(tmp_path, "show", "helio-crm", "--seed", "2", "--json", "--limit", "1")
    data = json.loads(out)
    assert data["seed"] == 2 and [len(v) for v in data["state"].values()] == [1, 1, 1, 1]


def test_cli_show_builds_a_missing_server(tmp_path):
    code, out = invoke(tmp_path, "show", "mail", "--limit", "1")
    assert code == 0 and out.startswith("mail (sandbox): contact 40")
    assert (tmp_path / "worlds" / "seed-0" / "mail.json").is_file()


def test_cli_unknown_server_is_one_line_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["--workspace", str(tmp_path), "world", "show", "helio-cr"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and "did you mean helio-crm" in err
    assert "Traceback" not in err


def test_cli_load_replaces_a_world_and_a_bad_file_keeps_it(tmp_path, capsys):
    invoke(tmp_path, "build", "--server", "helio-crm")
    good = write(tmp_path / "crm.json", {"contacts": [{"id": "ct_0001", "name": "Ada Lovelace"}]})
    code, out = invoke(tmp_path, "load", "helio-crm", str(good))
    assert code == 0 and "helio-crm (card crm): contact 1" in out
    saved = tmp_path / "worlds" / "seed-0" / "helio-crm.json"
    before = saved.read_bytes()
    assert json.loads(before)["source"] == "loaded:crm.json"
    for bad in (write(tmp_path / "bad.json", '{"contacts": ['), write(tmp_path / "odd.json", {"widgets": []})):
        with pytest.raises(SystemExit) as info:
            main(["--workspace", str(tmp_path), "world", "load", "helio-crm", str(bad)])
        err = capsys.readouterr().err
        assert info.value.code == 2 and err.count("\n") == 1 and str(bad) in err
        assert saved.read_bytes() == before


def test_cli_load_into_a_sandbox_app_keeps_its_other_state(tmp_path):
    data = write(tmp_path / "shop.json", {"catalog": {"SKU-9001": {"name": "Kettle", "price": 30.0}}})
    code, out = invoke(tmp_path, "load", "shop", str(data))
    assert code == 0 and "product 1" in out
    sw = ServerWorld.from_json(json.loads((tmp_path / "worlds" / "seed-0" / "shop.json").read_text()))
    assert sw.state["catalog"] == {"SKU-9001": {"name": "Kettle", "price": 30.0}}
    assert sw.state["account"] == SandboxSession(0, all_apps()).state["shop"]["account"]


def test_a_runs_engine_builds_the_servers_its_calls_reach_and_every_app(tmp_path, world, tools, cards):
    """`controller.factory.world_engine` (a run's): the sandbox apps are loaded at once (the grader reads
    their state though no call reached them), every other server only when a call reaches it, with the
    same records as the whole world's."""
    import asyncio

    from cworld.controller.factory import world_engine
    from cworld.engine.protocol import SessionLog
    from cworld.environment import Workspace

    engine = world_engine(Environment.resolve(None), Workspace(tmp_path), tools, cards)
    session = SessionLog(seed=0)
    tool = next(t for t in tools if t.server == HARVESTED and t.name == "jira_get")
    asyncio.run(engine.respond(tool, {"path": "/rest/api/3/project"}, session))
    loaded = engine.world(0).servers  # type: ignore[attr-defined]
    apps = {a.name for a in all_apps() if a.stateful}
    assert set(loaded) == apps | {HARVESTED}
    assert loaded[HARVESTED].to_json() == world.servers[HARVESTED].to_json()
    assert set(engine.end_state(session)) >= apps  # type: ignore[attr-defined]
    saved = {p.stem for p in (world_folder(tmp_path) / "seed-0").iterdir()}
    assert HARVESTED in saved and "helio-crm" not in saved


def test_world_commands_reach_a_harvested_server_without_a_registry_build(tmp_path: Path) -> None:
    """A run uses a harvested server with no build (`ToolList.tasks_tools`): `world rules`, `show` and `load`
    reach it too (before: "no server ... in the world")."""
    args = ["--workspace", str(tmp_path / "ws"), "world"]
    rules = CliRunner().invoke(cli, [*args, "rules", "30book-mcp"])
    assert rules.exit_code == 0, rules.output
    assert rules.output.startswith("# 30book-mcp: 14 tools") and "inferred" in rules.output
    shown = CliRunner().invoke(cli, [*args, "show", "30book-mcp", "--json"])
    assert shown.exit_code == 0 and json.loads(shown.output)
    missing = CliRunner().invoke(cli, [*args, "rules", "30book-mcpp"])
    assert missing.exit_code != 0 and "did you mean 30book-mcp" in str(missing.exception or missing.output)


def test_a_cards_example_keeps_its_name_which_its_text_agrees_with(cards):
    # the documents card's example is a checklist whose text is headed by its title: a vocabulary name
    # drawn over it ("Office move checklist") would contradict its own text
    for seed in (0, 1, 2):
        docs = generated_world("docs", cards["documents"], seed, size=12).state["documents"].values()
        example = [d for d in docs if d["content"].startswith("# Spring launch checklist")]
        assert example and all(d["title"] == "Spring launch checklist" for d in example)
        assert len({d["title"] for d in docs}) == len(docs)  # names stay unique


def test_a_record_kept_at_a_path_is_named_by_its_last_part(cards):
    files = generated_world("fs", cards["file_system"], 5, size=20).state["files"].values()
    assert files and all(f["name"] == f["path"].rstrip("/").rsplit("/", 1)[-1] for f in files)


def test_a_kind_named_from_a_short_vocabulary_ends_when_its_names_run_out() -> None:
    """A drawing's linetypes are the few its vocabulary names, never lorem words beside them, and a sheet keyed
    by `{n}` whose names repeat does not loop (it did, once a repeated name replaced the record it named)."""
    from cworld.engine.cards.card import load_cards
    from cworld.engine.world.build import generated_world
    from cworld.environment import Environment

    cards = load_cards(Environment.resolve().category_cards)
    cad = cards["cad_drawing"]
    linetypes = generated_world("autocad", cad, seed=3, size=60).state["linetypes"]
    vocabulary = set(next(e for e in cad.entities if e.name == "linetype").vocabulary)
    assert linetypes and set(linetypes) <= vocabulary, sorted(linetypes)
    sheets = generated_world("sheets", cards["spreadsheets"], seed=3, size=200).state["sheets"]
    assert 0 < len(sheets) < 200
