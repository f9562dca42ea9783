"""Candidate bundles for `--pool harvested`: one goal over three harvested services, data flowing between them.

A person's request has one goal: find something, act on it, tell someone. A bundle takes a theme (a
trip, research, engineering... `task_synth/templates/harvested.yaml`, which puts every category card in
at least one theme), then a server of a *source* card with a read the world answers, a server of an
*act* card with a write that can take what was found, and a server of a *sink* card (chat, email, task
board, documents...) with a write that records the outcome. Each write comes with the reads of its own
server that find the records its id arguments name (the list it goes on, the channel it is posted in),
so every id in a plan is one an earlier step found. Which tools can play which part is decided on the
world engine (`offline/goal_roles.py`): only tools it runs on the world, with arguments a request can
fill honestly. The order of the candidates is the goal's order; every choice uses the attempt's RNG.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from cworld.data_model import ToolSpec
from cworld.errors import ContentError, UsageError
from cworld.synth.offline.goal_roles import Roles, ToolRole
from cworld.synth.offline.templates import Phrasebook
from cworld.synth.sampling import Candidates
from cworld.synth.toolset import ToolUniverse

ROLES = ("sources", "acts", "sinks")
_DESTRUCTIVE = re.compile(r"(^|[_\-])(delete|remove|drop|destroy|purge|kill|terminate|wipe|revoke|reset)", re.I)
_SIMPLE = frozenset({"string", "integer", "number", "boolean"})
_BUNDLES = 6
"""Bundles drawn before the largest is taken when none reaches `min_tools` and `min_servers`."""
_TRIES = 20
"""Servers tried per part before the bundle gives that part up (each try may build a server's world)."""


@dataclass(frozen=True)
class Theme:
    """The cards a theme draws each part of its goal from."""

    name: str
    sources: tuple[str, ...]
    acts: tuple[str, ...]
    sinks: tuple[str, ...]
    #: what an act write may make (`act_entities`: records a person makes about a finding)
    act_entities: frozenset[str] = frozenset()
    #: what a sink write may make (`sink_entities`: records that carry a note to people)
    sink_entities: frozenset[str] = frozenset()

    @property
    def cards(self) -> set[str]:
        return {*self.sources, *self.acts, *self.sinks}


def load_themes(book: Phrasebook) -> dict[str, Theme]:
    """The themes of `harvested.yaml`; a theme missing a part is a one-line `ContentError`."""
    raw = book.raw("themes")
    if not isinstance(raw, dict) or not raw:
        raise ContentError(f"{book.path}: 'themes' must map theme names to their cards")
    acts, sinks = (_kinds(book, key) for key in ("act_entities", "sink_entities"))
    themes = {}
    for name, parts in raw.items():
        if not isinstance(parts, dict) or any(not isinstance(parts.get(r), list) or not parts[r] for r in ROLES):
            raise ContentError(f"{book.path}: theme '{name}' needs non-empty lists {', '.join(ROLES)}")
        cards = {r: tuple(str(c) for c in parts[r]) for r in ROLES}
        themes[name] = Theme(name, cards["sources"], cards["acts"], cards["sinks"], acts, sinks)
    return themes


def _kinds(book: Phrasebook, key: str) -> frozenset[str]:
    found = book.raw(key)
    if not isinstance(found, list) or not found:
        raise ContentError(f"{book.path}: '{key}' must list entity kinds")
    return frozenset(str(c) for c in found)


def card_of(tool: ToolSpec) -> str:
    return tool.category or ""


def usable(tool: ToolSpec) -> bool:
    """A tool a composed task may call: not destructive, and every required argument is a plain value
    (string, number, boolean, enum, or a list of those) a request can state or an earlier step can give."""
    if tool.annotations.destructive_hint or _DESTRUCTIVE.search(tool.name):
        return False
    schema = tool.input_schema or {}
    props = schema.get("properties", {}) or {}
    for key in schema.get("required", []) or []:
        prop = props.get(key)
        if not isinstance(prop, dict):
            return False
        kind = prop.get("type")
        if kind == "array":
            items = prop.get("items")
            kind = items.get("type") if isinstance(items, dict) else None
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), None)
        if kind not in _SIMPLE and "enum" not in prop:
            return False
    return True


def harvested_servers(universe: ToolUniverse) -> dict[str, list[ToolSpec]]:
    """Harvested server -> its usable tools (servers with none are left out)."""
    found: dict[str, list[ToolSpec]] = {}
    for tool in sorted(universe.tools.values(), key=lambda t: t.id):
        if tool.server in universe.harvested and usable(tool):
            found.setdefault(tool.server, []).append(tool)
    return found


def sample_harvested(
    universe: ToolUniverse,
    rng: random.Random,
    *,
    roles: Roles,
    themes: dict[str, Theme],
    min_tools: int,
    max_tools: int,
    min_servers: int,
    avoid: Iterable[str] = (),
) -> Candidates:
    """A goal's bundle: a source read, an act write and a sink write on three servers (their finders
    before each write), within one theme."""
    banned = set(avoid)
    servers = {s: [t for t in ts if t.id not in banned] for s, ts in harvested_servers(universe).items()}
    by_card: dict[str, list[str]] = {}
    for server, own in servers.items():
        if own:
            by_card.setdefault(card_of(own[0]), []).append(server)
    names = [n for n, t in themes.items() if all(set(getattr(t, r)) & set(by_card) for r in ROLES)]
    if not names:
        raise UsageError("the harvested catalog has no theme with a source, an act and a sink server; "
                         "run `cworld registry harvest` or widen the themes in task_synth/templates/harvested.yaml")
    best: list[str] = []
    best_theme = ""
    for _ in range(_BUNDLES):
        theme = themes[rng.choice(sorted(names))]
        tools = _bundle(theme, by_card, servers, roles, rng)
        if len({t.split("/", 1)[0] for t in tools}) >= min_servers and len(tools) >= min_tools:
            return Candidates(seeds=tools[:1], query=f"theme: {theme.name}", tools=tools[:max_tools])
        best = max(best, tools, key=len)
        best_theme = theme.name
    if not best:
        raise UsageError("no harvested server of the drawn themes has a tool the world engine runs")
    return Candidates(seeds=best[:1], query=f"theme: {best_theme}", tools=best[:max_tools])


def _bundle(theme: Theme, by_card: dict[str, list[str]], servers: dict[str, list[ToolSpec]], roles: Roles,
            rng: random.Random) -> list[str]:
    used: set[str] = set()
    tools: list[str] = []
    for part in ROLES:
        kinds = theme.act_entities if part == "acts" else theme.sink_entities
        wanted = (lambda r: r.reads) if part == "sources" else \
            (lambda r, kinds=kinds: not r.reads and r.takes_data and bool({r.entity, r.noun} & kinds))
        found = _part(getattr(theme, part), wanted, by_card, servers, roles, rng, used)
        if found is None:
            return tools
        tools += found
    return tools


def _part(cards: tuple[str, ...], wanted: Callable[[ToolRole], bool], by_card: dict[str, list[str]],
          servers: dict[str, list[ToolSpec]], roles: Roles, rng: random.Random, used: set[str]) -> list[str] | None:
    """The tools of one part on a server of a card no earlier part used (so "the documents" never means
    two services): a tool `wanted` takes, preceded (a write) by the finders of the records it names."""
    open_cards = [c for c in cards if c not in used and by_card.get(c)]
    rng.shuffle(open_cards)  # a card is as likely as another, however many servers it has
    pool = [(c, s) for c in open_cards for s in rng.sample(sorted(by_card[c]), min(4, len(by_card[c])))]
    for card, server in pool[:_TRIES]:
        own = servers[server]
        fitting = [r for t in own if (r := roles.of(t)) is not None and wanted(r)]
        if not fitting:
            continue
        role = _prefer_found(fitting, own, roles, rng)
        used.add(card)
        return [*_finders(role, own, roles), role.tool.id]
    return None


def _prefer_found(fitting: list[ToolRole], own: list[ToolSpec], roles: Roles, rng: random.Random) -> ToolRole:
    """Tools whose record arguments a read of the server finds come first (the plan then finds the ids it
    uses instead of knowing them, and the request names a place: "the item 'X' in the vault 'Y'")."""
    found = [r for r in fitting if _finders(r, own, roles)]
    return rng.choice(found or fitting)


def _finders(role: ToolRole, own: list[ToolSpec], roles: Roles) -> list[str]:
    """One read per record argument of `role` that lists records of its kind; [] when none has a finder
    (the plan then names the world's record itself)."""
    picks = []
    for kind in dict.fromkeys(role.kind_args.values()):
        found = roles.finders(own, kind)
        if found:
            picks.append(found[0].id)
    return picks
