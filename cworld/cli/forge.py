"""`cworld forge "DESCRIPTION" --category NAME --out FILE`: an LLM designs a new app's tools as a catalog."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from cworld.cli.common import echo_json, environment, json_option, workspace


@click.command("forge")
@click.argument("description")
@click.option("--category", required=True, help="The category card the app belongs to (see `cworld engine cards`).")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the catalog, e.g. registry/catalogs/NAME.json.")
@click.option("--tools", "count", default=8, show_default=True, type=click.IntRange(1, 40), help="About how many tools.")
@json_option
@click.pass_context
def command(ctx: click.Context, description: str, category: str, out: Path, count: int, as_json: bool) -> None:
    """Design a new app's tools under a card; write a schema-only catalog synthesized mode can run at once."""
    from cworld.engine.cards.card import load_cards
    from cworld.engine.forge import (
        catalog_entries,
        check_category,
        design_tools,
        forge_role,
        smoke_run,
        write_catalog,
    )
    from cworld.llm import Gateway

    env = environment(ctx)
    cards = load_cards(env.category_cards)
    card = check_category(cards, category)
    gateway = Gateway.from_workspace(workspace(ctx))
    forge_role(gateway)  # no model: fail now, in one line, before any work
    tools = asyncio.run(design_tools(gateway, description, card, count))
    entries = catalog_entries(tools, card)
    write_catalog(out, entries)
    server = out.stem.replace("_", "-")
    smoke = smoke_run(entries, cards, server)
    report = {"catalog": str(out), "category": card.name, "tools": [e["name"] for e in entries], "schema_engine": smoke,
              "manifest_entry": {"id": server, "kind": "catalog", "transport": "catalog",
                                 "catalog": f"catalogs/{out.name}", "category_hints": [card.name]}}
    if as_json:
        echo_json(report)
        return
    click.echo(f"wrote {len(entries)} tools to {out} (category {card.name}):")
    for name, outcome in smoke.items():
        click.echo(f"  {name}  [schema engine: {outcome}]")
    entry = {"id": server, "catalog": f"catalogs/{out.name}"}
    click.echo("add it to registry/servers.yaml to index it:\n"
               f"  - {{id: {entry['id']}, kind: catalog, transport: catalog, catalog: {entry['catalog']}, "
               f"category_hints: [{card.name}]}}")
