"""`cworld world build|show|load`: the world of a seed, built before any task (docs/world-engine.md)."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cworld.cli.common import echo_json, environment, json_option, workspace

if TYPE_CHECKING:
    from cworld.data_model import ServerSpec, ToolSpec
    from cworld.engine.cards.card import CategoryCard
    from cworld.engine.world.base import ServerWorld, World

#: Records shown per kind by `world show` when no --limit is given.
SHOWN = 3


@click.group("world")
def command() -> None:
    """The world of a seed: every server's records, the same for every task of that seed."""


def _tools_and_cards(ctx: click.Context, server: str | None = None) -> tuple[list[ToolSpec], dict[str, CategoryCard]]:
    """The environment's tools and cards; with `server` not among them, the harvested pool as well: a run uses
    a harvested server without a registry build (`ToolList.tasks_tools`), so its world can be shown, loaded
    and its rules read without one too."""
    from cworld.engine.cards.card import load_cards
    from cworld.registry.tools import environment_tools

    env = environment(ctx)
    listed = environment_tools(env, workspace(ctx))
    tools = list(listed.tools)
    if server is not None and all(t.server != server for t in tools):
        have = {t.id for t in tools}
        tools += [t for t in listed.harvested if t.id not in have]
    return tools, load_cards(env.category_cards)


def _known(server: str, tools: list[ToolSpec], cards: dict[str, CategoryCard], saved: Iterable[str] = ()) -> str:
    """`server` if the world has it; else a one-line error naming the closest servers."""
    from cworld.engine.world.build import world_servers
    from cworld.errors import UsageError

    names = sorted({*world_servers(tools, cards), *saved})
    if server in names:
        return server
    close = difflib.get_close_matches(server, names, n=5, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}?" if close else f"servers: {', '.join(names[:12])}{', ...' if len(names) > 12 else ''}"
    raise UsageError(f"no server '{server}' in the world (stateless servers hold none); {hint}")


def _counts(sw: ServerWorld) -> dict[str, int]:
    """Records per card kind (a sandbox app's other values, such as its user, are not kinds)."""
    out = {}
    for kind in sw.kinds:
        records = sw.collection(kind)
        if records is not None:
            out[kind] = len(records)
    return out


def _count_line(sw: ServerWorld) -> str:
    counts = ", ".join(f"{kind} {n}" for kind, n in _counts(sw).items()) or "no records"
    card = f"card {sw.card}" if sw.card else sw.source
    return f"{sw.server} ({card}): {counts}"


@command.command("build")
@click.option("--seed", "seeds", multiple=True, type=int, default=(0,), show_default=True,
              help="A seed to build the world of; repeat for several.")
@click.option("--size", type=click.IntRange(min=1), default=None,
              help="Records per kind of every generated server (default: 20-200 drawn per kind).")
@click.option("--server", "servers", multiple=True, help="Build only this server; repeat for several.")
@click.pass_context
def build_command(ctx: click.Context, seeds: tuple[int, ...], size: int | None, servers: tuple[str, ...]) -> None:
    """Build and save the worlds of the seeds: one line per server, its records per kind."""
    from cworld.engine.world.build import build_world, world_folder

    tools, cards = _tools_and_cards(ctx)
    chosen = [_known(s, tools, cards) for s in servers] or None
    folder = world_folder(workspace(ctx))
    for seed in seeds:
        world = build_world(seed, tools, cards, size=size, servers=chosen)
        out = world.save(folder)
        for name in sorted(world.servers):
            click.echo(_count_line(world.servers[name]))
        click.echo(f"seed {seed} (now {world.now}): {len(world.servers)} servers saved to {out}")


def _server_world(ctx: click.Context, server: str, seed: int) -> tuple[World, ServerWorld]:
    """The server's saved world for the seed, built (and saved) first if it was not."""
    from cworld.engine.world.base import World
    from cworld.engine.world.build import load_or_build, world_folder

    tools, cards = _tools_and_cards(ctx, server)
    saved = World.load(world_folder(workspace(ctx)), seed, [server])
    known = _known(server, tools, cards, list(saved.servers) if saved else [])
    world = load_or_build(workspace(ctx), seed, tools, cards, servers=[known])
    return world, world.servers[known]


@command.command("show")
@click.argument("server")
@click.option("--seed", default=0, show_default=True)
@click.option("--kind", default=None, help="Only this entity kind (or collection).")
@click.option("--limit", type=click.IntRange(min=0), default=None, help=f"Records per kind [default: {SHOWN}; JSON: all].")
@json_option
@click.pass_context
def show_command(ctx: click.Context, server: str, seed: int, kind: str | None, limit: int | None, as_json: bool) -> None:
    """A server's world: its records per kind, then the first records of each kind."""
    world, sw = _server_world(ctx, server, seed)
    kinds = _kinds_shown(sw, kind)
    if as_json:
        echo_json({**sw.to_json(), "seed": seed, "now": world.now, "state": _shown_state(sw, kinds, limit)})
        return
    click.echo(f"{_count_line(sw)}  [seed {seed}, now {world.now}, {sw.source}]")
    for name in kinds:
        _print_records(name, sw.collection(name) or {}, SHOWN if limit is None else limit)


def _kinds_shown(sw: ServerWorld, kind: str | None) -> list[str]:
    """The kinds to show: all, or the one --kind names (a kind or its collection)."""
    from cworld.errors import UsageError

    if kind is None:
        return [k for k in sw.kinds if sw.collection(k) is not None]
    by_collection = {collection: k for k, collection in sw.kinds.items()}
    found = kind if kind in sw.kinds else by_collection.get(kind)
    if found is None or sw.collection(found) is None:
        raise UsageError(f"{sw.server} has no kind '{kind}'; its kinds: {', '.join(sw.kinds) or 'none'}")
    return [found]


def _shown_state(sw: ServerWorld, kinds: list[str], limit: int | None) -> dict[str, Any]:
    out = {}
    for kind in kinds:
        records = sw.collection(kind) or {}
        out[sw.kinds[kind]] = dict(list(records.items())[:limit]) if limit is not None else records
    if len(kinds) == len(sw.kinds) and limit is None:
        return sw.state  # the whole state, app-level values (a sandbox app's user, cart) included
    return out


def _print_records(kind: str, records: dict[str, Any], limit: int) -> None:
    click.echo(f"{kind} ({len(records)}):")
    for key, record in list(records.items())[:limit]:
        text = json.dumps(record, ensure_ascii=False, default=str)
        click.echo(f"  {key}  {text if len(text) <= 200 else text[:197] + '...'}")


@command.command("load")
@click.argument("server")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--seed", default=0, show_default=True)
@click.pass_context
def load_command(ctx: click.Context, server: str, file: Path, seed: int) -> None:
    """Replace SERVER's world for the seed with FILE's records ({kind: [records...]}, JSON or YAML)."""
    from cworld.engine.world.base import World
    from cworld.engine.world.build import server_cards, user_world, world_folder, world_now

    tools, cards = _tools_and_cards(ctx, server)
    folder = world_folder(workspace(ctx))
    saved = World.load(folder, seed, [server])
    known = _known(server, tools, cards, list(saved.servers) if saved else [])
    before = saved.servers.get(known) if saved else None
    card = server_cards(tools, cards).get(known) or cards.get((before.card if before else None) or "generic")
    sw = user_world(known, file, seed, card or cards["generic"])  # a bad file fails here: nothing is written
    out = World(seed=seed, now=saved.now if saved else world_now(seed), servers={known: sw}).save(folder)
    click.echo(_count_line(sw))
    click.echo(f"loaded {file} as the world of {known} for seed {seed}: {out}")


@command.command("rules")
@click.argument("server")
@click.option("--cards-only", is_flag=True, help="Leave the server's per-tool rules out: what its card alone gives.")
@click.option("--write", "out", type=click.Path(path_type=Path), default=None,
              help="Write the rules to this YAML file (a starting point for category_cards/_operations/SERVER.yaml).")
@click.pass_context
def rules_command(ctx: click.Context, server: str, cards_only: bool, out: Path | None) -> None:
    """Each tool's operation rule on SERVER and where it comes from (override, family, inferred, or none:
    the schema engine answers, marked simulated), as YAML a person reviews and corrects."""
    from cworld.engine.rules import RulesEngine
    from cworld.engine.rules.spec import load_operations, rule_yaml
    from cworld.engine.world.build import build_world
    from cworld.export.atomic import atomic_path

    tools, cards = _tools_and_cards(ctx, server)
    server = _known(server, tools, cards)
    own = [t for t in tools if t.server == server]
    world = build_world(0, own, cards, servers=[server], size=1)
    engine = RulesEngine(cards, own, world=world, operations=load_operations(environment(ctx).category_cards / "_operations"),
                         overrides=not cards_only)
    found = {t.name: engine.rule_for(t) for t in own}
    origins = {name: origin for name, (_, origin) in found.items()}
    text = rule_yaml({name: rule for name, (rule, _) in found.items() if rule is not None})
    summary = ", ".join(f"{o} {sum(v == o for v in origins.values())}" for o in ("override", "family", "inferred", "simulated"))
    header = f"# {server}: {len(own)} tools ({summary}); simulated: {', '.join(n for n, o in origins.items() if o == 'simulated') or 'none'}\n"
    text += _guards_comment({t.name: engine.guard_for(t) for t in own if origins[t.name] == "simulated"})
    if out is None:
        click.echo(header + f"server: {server}\n" + text)
        return
    with atomic_path(out) as tmp:
        tmp.write_text(header + f"server: {server}\n" + text, encoding="utf-8")
    click.echo(f"{header.strip()}\nwritten to {out}")


def _guards_comment(guards: dict[str, Any]) -> str:
    """The checks the simulated tools' calls pass before the schema engine answers them, as YAML comments (a
    guard is no rule: written as one, the tool would be answered by its rule, not the schema engine)."""
    from cworld.engine.rules.spec import rule_yaml

    checked = {name: guard for name, guard in guards.items() if guard.check}
    if not checked:
        return ""
    body = rule_yaml(checked).split("\n", 1)[1]  # without the `tools:` line
    return ("# simulated tools whose calls are checked first (the schema engine answers once these pass):\n"
            + "".join(f"#{line}\n" for line in body.splitlines()))


@command.command("learn")
@click.argument("server")
@click.option("--calls", type=click.IntRange(1, 100_000), default=600, show_default=True,
              help="Live explorer calls per seed.")
@click.option("--seed", "seeds", type=int, multiple=True, help="World seeds to explore (repeatable; default 0 and 1).")
@click.option("--explorer", default="0", show_default=True, help="The explorer's own seed (its rng is "
              "learn:explorer:SERVER:EXPLORER), so held-out traffic can come from another explorer.")
@click.option("--from", "run_dir", type=click.Path(path_type=Path), default=None,
              help="Learn from the live trajectories of this run folder instead of exploring.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Where the rules go (default: category_cards/_operations/SERVER.learned.yaml, or the "
              "workspace's learned/ when the content folder is read-only).")
@click.option("--model", "use_model", is_flag=True, help="Let the synth model draft each rule; the replay keeps it "
              "only where it agrees with the calls better than the offline learner's.")
@click.pass_context
def learn_command(ctx: click.Context, server: str, calls: int, seeds: tuple[int, ...], explorer: str,
                  run_dir: Path | None, out: Path | None, use_model: bool) -> None:
    """Learn SERVER's per-tool rules from its traffic: explore it live (a sandbox app, or a launchable server of
    the manifest: the real servers, a user's own) or read a run's
    trajectories, induce each tool's checks, effects, list and answer, check them on held-out calls and
    revise, and write them for a person to review. A file a person corrected is kept: a new proposal is
    written beside it."""
    import time

    from cworld.controller.learn import learn_server_live
    from cworld.engine.learn.files import default_path, document, write
    from cworld.engine.learn.session import learn_app, learn_from_run, sandbox_apps

    started = time.perf_counter()
    tools, cards = _tools_and_cards(ctx)
    drafter = _drafter(ctx, cards) if use_model else None
    if run_dir is not None:
        run = learn_from_run(server, _trajectories(run_dir), tools, cards, str(run_dir), drafter)
    elif server in sandbox_apps():
        run = learn_app(server, cards, calls=calls, seeds=seeds or (0, 1), explorer=explorer, drafter=drafter)
    else:
        spec = _launchable(ctx, server)
        tools, _ = _tools_and_cards(ctx, server)
        run = learn_server_live(spec, workspace(ctx), tools, cards, calls=calls, seeds=seeds or (0, 1),
                                explorer=explorer, drafter=drafter)
    path = out or default_path(environment(ctx).category_cards / "_operations", workspace(ctx).root, server)
    written = write(document(run.learning, run.how), path)
    for t in run.learning.tools:
        note = {"base": " (the engine's own rule did as well: not proposed)", "none": " (never called)",
                "model": " (the model's draft)"}.get(t.source, "")
        click.echo(f"{t.tool:<28} {t.final.agree:>4}/{t.final.calls:<4} calls agree; held out "
                   f"{t.held.agree}/{t.held.calls}; engine's rule before {t.base.agree}/{t.base.calls}{note}")
    learned = sum(t.source in ("traffic", "model") for t in run.learning.tools)
    click.echo(f"{learned} of {len(run.learning.tools)} tools learned from {run.how} in "
               f"{time.perf_counter() - started:.1f} s")
    if written.proposed is not None:
        click.echo(written.diff, nl=False)
        click.echo(f"{written.path} was corrected by hand and is kept; the new rules are in {written.proposed}")
    else:
        click.echo(f"written to {written.path}")


def _launchable(ctx: click.Context, server: str) -> ServerSpec:
    """The manifest entry of a server `learn` can launch, else a one-line error naming the close ones."""
    from cworld.controller.learn import launchable
    from cworld.engine.learn.session import sandbox_apps
    from cworld.errors import UsageError
    from cworld.registry.manifest import load_manifest

    specs = launchable(load_manifest(environment(ctx)))
    if server in specs:
        return specs[server]
    names = sorted({*sandbox_apps(), *specs})
    close = difflib.get_close_matches(server, names, n=3, cutoff=0.5)
    raise UsageError(f"cannot learn '{server}': not a sandbox app or a launchable server of the manifest; "
                     + (f"did you mean {', '.join(close)}?" if close else f"servers: {', '.join(names)}"))


def _trajectories(run_dir: Path) -> list[Any]:
    from cworld.errors import UsageError
    from cworld.rollout.store import read_trajectories

    if not run_dir.is_dir():
        raise UsageError(f"{run_dir} is not a run folder")
    return list(read_trajectories(run_dir))


def _drafter(ctx: click.Context, cards: dict[str, CategoryCard]) -> Any:
    from cworld.engine.cards.assign import CardIndex
    from cworld.engine.learn.draft import model_drafter
    from cworld.errors import ConfigError
    from cworld.llm.gateway import Gateway

    gateway = Gateway.from_workspace(workspace(ctx))
    if not gateway.models.configured("synth"):
        raise ConfigError("--model needs a synth model: set CWORLD_SYNTH_MODEL or models.synth in config.yaml")
    index = CardIndex(cards)
    return model_drafter(gateway, index.card_for)
