"""`cworld engine cards|try`: the World Engine's card coverage, and one simulated call to preview."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from cworld.cli.common import echo_json, environment, json_option, workspace


@click.group("engine")
def command() -> None:
    """The World Engine: category cards and simulated tool responses."""


@command.command("cards")
@click.option("--embed", is_flag=True, help="Use embedding similarity for tools no rule recognises (loads a model).")
@json_option
@click.pass_context
def cards_command(ctx: click.Context, embed: bool, as_json: bool) -> None:
    """Tools per category card, and how many are left uncategorized (generic by fallback)."""
    from cworld.engine.cards.card import load_cards
    from cworld.engine.cards.coverage import coverage
    from cworld.registry.tools import environment_tools

    env = environment(ctx)
    report = coverage(environment_tools(env, workspace(ctx)), load_cards(env.category_cards), _embedder() if embed else None)
    if as_json:
        echo_json(report)
        return
    _print_coverage(report)


def _embedder() -> Any:
    from cworld.registry.index.embedder import resolve_embedder

    model = resolve_embedder()
    return lambda texts: model.embed_documents(list(texts)).tolist()


def _print_coverage(report: dict[str, Any]) -> None:
    table = Table(title=f"{report['tools']} tools from {report['source']}", title_justify="left")
    for col, justify in (("card", "left"), ("tools", "right"), ("servers", "left"), ("assigned by", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for name, row in report["cards"].items():
        live = "" if row["live"] else " (no live tool)"
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(row["by_reason"].items()))
        table.add_row(f"{name}{live}", str(row["tools"]), ", ".join(row["servers"]) or "-", reasons or "-")
    console = Console()
    console.print(table)
    console.print(f"uncategorized (generic by fallback): {report['uncategorized']}")


@command.command("try")
@click.argument("tool_id", metavar="SERVER/TOOL")
@click.option("--args", "args_text", default="{}", show_default=True, help="The call's arguments as a JSON object.")
@click.option("--engine", "engine_name", type=click.Choice(["schema", "llm"]), default="schema", show_default=True)
@click.option("--session", "session_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A session log (JSON) the call continues; see docs/world-engine.md.")
@click.option("--record", is_flag=True, help="Append this call and its answer to the --session file.")
@click.option("--seed", default=0, show_default=True, help="The simulated world's seed (when no --session).")
@json_option
@click.pass_context
def try_command(ctx: click.Context, tool_id: str, args_text: str, engine_name: str, session_file: Path | None,
                record: bool, seed: int, as_json: bool) -> None:
    """Simulate one call of SERVER/TOOL and say whether the answer fits the tool's output schema."""
    from cworld.engine.cards.card import load_cards
    from cworld.engine.protocol import SessionLog
    from cworld.engine.schema.preview import parse_arguments, preview, save_session
    from cworld.errors import UsageError
    from cworld.registry.tools import environment_tools

    arguments = parse_arguments(args_text)
    env, ws = environment(ctx), workspace(ctx)
    toolset = environment_tools(env, ws)
    tool = toolset.find(tool_id)
    cards = load_cards(env.category_cards)
    if record and session_file is None:
        raise UsageError("--record needs --session FILE to append to")
    session = SessionLog.load(session_file) if session_file and session_file.exists() else SessionLog(seed=seed)
    engine = _engine(engine_name, cards, toolset.tools, env, ws)
    report = asyncio.run(preview(engine, tool, arguments, session, cards))
    if record and session_file is not None:
        from cworld.data_model import ToolResult

        session.record(tool.id, arguments, ToolResult.model_validate(report["result"]))
        save_session(session, session_file)
    if as_json:
        echo_json(report)
        return
    _print_preview(report)


def _engine(name: str, cards: dict[str, Any], tools: list[Any], env: Any, ws: Any) -> Any:
    if name == "schema":
        from cworld.engine.schema.engine import SchemaEngine

        return SchemaEngine(cards, tools)
    from cworld.engine.llm.engine import LLMEngine
    from cworld.engine.llm.settings import load_engine_settings
    from cworld.llm import Gateway

    return LLMEngine(cards, Gateway.from_workspace(ws), cards_dir=env.category_cards, tools=tools,
                     settings=load_engine_settings(ws.root))


def _print_preview(report: dict[str, Any]) -> None:
    result = report["result"]
    meta = result.get("meta", {})
    fallback = f" (fell back: {meta.get('fallback_reason')})" if meta.get("fallback") else ""
    click.echo(f"{report['tool']} via {report['engine']} engine{fallback}; card {report['card']}, "
               f"operation {report['operation']}")
    status = f"error ({result['error_class']})" if result["is_error"] else "ok"
    click.echo(f"status: {status}")
    click.echo("\n".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"))
    verdict = "validates" if report["validates"] else f"does NOT validate: {report['validation_error']}"
    click.echo(f"-> {verdict} ({report['validated_against']})")
