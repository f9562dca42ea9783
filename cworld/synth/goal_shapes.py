"""Goal shapes of `--pool harvested` (issue 34): things people ask assistants, each over 2-4 services.

A shape (`task_synth/templates/shapes.yaml`) names its *slots*, each by what its tool must do on the
world (`use`: look at, change, remove or make a record, as `offline/action_space.py` reads the world
engine's rules) and what it needs (a text to carry the finding, a date, a finder listing its kind). So
a shape draws from every server whose tools fit, not from a list of tools. The sampler:

- takes shapes in turn with the attempt's RNG, and for each slot a unit on a server no other slot of
  the task uses (a slot `same: <slot>` stays on that slot's server);
- covers the pool: of every fitting unit it takes the one whose draws failed least (two failures forgiven
  while no accepted task uses the tool or reaches its server; a rejection the probe blames on one tool is
  that tool's alone), then (a sync's source) one whose kind an untried make of another service makes, then
  one on a server no accepted task reaches yet, then one no accepted task uses, then one whose rule checks
  something (it plays a part), then the least tried (then the one on the least tried server, then by chance),
  so each tool is tried once before any is tried again, servers with few fitting tools are reached, and
  one whose drafts keep failing drifts back; a shape is drawn more often while many
  units of its slots are untried (weight x sqrt(1 + untried)); and a tool drawn in
  `cap` accepted attempts (3% of the run's tasks) is not drawn again, so no tool carries a share of the
  tasks;
- draws nothing a shape's composer would refuse for want of records: a slot that needs `fields` takes
  a unit whose kind's records (in the world) hold what the shape decides on (`shape_compose.decides`).

The draw is deterministic per seed: attempts sample in index order (the scheduler starts them in order
and sampling runs before an attempt's first await).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.cards.operations import singular_word, verb_kind
from cworld.errors import ContentError, UsageError
from cworld.synth.argument_checks import listed_kind, takes_kind
from cworld.synth.offline.action_space import USES, ActionSpace, Unit, noun_of, verb_of, when_args
from cworld.synth.offline.templates import Phrasebook
from cworld.synth.sampling import Candidates

NEEDS = frozenset({"text", "label", "carries", "dates", "finder", "plays", "content", "dated", "notes", "fields",
                   "copyable", "alike", "apart"})
CAP_SHARE = 0.03
FORGIVEN = 2
"""Failed draws forgiven a tool no accepted task uses yet (or on a server none reaches): its third try comes
before a used tool is drawn again."""


@dataclass(frozen=True)
class Slot:
    name: str
    uses: tuple[str, ...]
    needs: frozenset[str] = frozenset()
    cards: tuple[str, ...] = ()
    same: str | None = None


@dataclass(frozen=True)
class Shape:
    name: str
    ask: str
    slots: tuple[Slot, ...]
    weight: float = 1.0


@dataclass
class Drawn:
    """A shape with a unit per slot (and each unit's finder, when its record kind has one, and per other id
    argument the finder of the record it names: `scopes`, slot -> argument -> list read)."""

    shape: Shape
    units: dict[str, Unit]
    finders: dict[str, ToolSpec] = field(default_factory=dict)
    scopes: dict[str, dict[str, ToolSpec]] = field(default_factory=dict)
    looks: dict[str, Unit] = field(default_factory=dict)
    """Per slot whose unit finds (a list or a search) where the slot may look: a look of the same kind on its
    server that opens the record found (`get_course` after `list_courses`), as a person opens what they
    found before copying or scheduling it. The source's reader role, beside its finder."""

    def tools(self) -> list[str]:
        out: list[str] = []
        for slot in self.shape.slots:
            finder = self.finders.get(slot.name)
            out += [finder.id] if finder is not None else []
            out += [t.id for t in self.scopes.get(slot.name, {}).values()]
            out += [self.units[slot.name].id]
            look = self.looks.get(slot.name)
            out += [look.id] if look is not None else []
        return list(dict.fromkeys(out))


def load_shapes(book: Phrasebook) -> dict[str, Shape]:
    """The shapes of `shapes.yaml`; a malformed one is a one-line `ContentError`."""
    raw = book.raw("shapes")
    if not isinstance(raw, dict) or not raw:
        raise ContentError(f"{book.path}: 'shapes' must map shape names to their slots")
    sinks = tuple(str(c) for c in book.raw("sink_cards"))
    shapes = {}
    for name, spec in raw.items():
        slots = []
        for item in spec.get("slots") or []:
            raw_use, needs = item.get("use"), frozenset(item.get("needs") or [])
            uses = tuple(raw_use) if isinstance(raw_use, list) else (raw_use,)
            if not uses or set(uses) - set(USES) or needs - NEEDS:
                raise ContentError(f"{book.path}: shape '{name}' slot {item} needs a use of {USES} and needs "
                                   f"from {sorted(NEEDS)}")
            cards = sinks if item.get("cards") == "sinks" else tuple(item.get("cards") or ())
            slots.append(Slot(str(item["name"]), uses, needs, cards, item.get("same")))
        if not 2 <= len(slots) <= 4 or not spec.get("ask"):
            raise ContentError(f"{book.path}: shape '{name}' needs 'ask' and 2-4 slots")
        shapes[name] = Shape(name, str(spec["ask"]), tuple(slots), float(spec.get("weight", 1.0)))
    return shapes


class ShapeSampler:
    """Draws a shape and its units per attempt, keeping count of what was drawn across the run."""

    def __init__(self, space: ActionSpace, shapes: dict[str, Shape], n_tasks: int,
                 nouns: dict[str, frozenset[str]] | None = None, affinity: dict[str, set[str]] | None = None,
                 decides: Callable[[str, list[Any]], bool] | None = None) -> None:
        """`nouns`: per need (`content`, `dated`, `notes`), the record words or verbs that meet it;
        `affinity`: card -> the cards a person uses with it (the themes of `harvested.yaml`), so a course is
        copied into a spreadsheet, not into a cloud console; none: any pair; `decides(shape, records)`:
        whether records of a kind hold what the shape decides on (`shape_compose.decides`), tried on the
        world's records for a slot that needs `fields`, so no draw is spent on a queue with nothing to rank."""
        self.space, self.shapes, self.nouns, self.affinity = space, shapes, nouns or {}, affinity
        self.decides = decides
        self._decided: dict[tuple[str, str, str], bool] = {}
        self._meant: dict[tuple[str, frozenset[str]], bool] = {}
        self._by_use = {use: sorted(space.by_use(use), key=lambda u: u.id) for use in USES}
        self._firsts: dict[str, list[Unit]] = {}
        self._looks: dict[tuple[str, str], list[Unit]] = {}
        """(server, kind) -> its look units: the openers of what a find unit finds (`_opener`)."""
        for unit in self._by_use["look"]:
            self._looks.setdefault((unit.server, unit.kind or ""), []).append(unit)
        self._makers: dict[str, list[Unit]] = {}
        """Kind word -> the make units (with a name) that make it: `copyable`, and a sync's untried copies."""
        for unit in self._by_use["make"]:
            if unit.labels and self._head(unit) in self.nouns.get("records", frozenset()):
                self._makers.setdefault(self._head(unit), []).append(unit)
        self.drawn: Counter[str] = Counter()
        self.kept: Counter[str] = Counter()
        self.tried: Counter[str] = Counter()
        """Draws of each tool, accepted or not: the sampler prefers the fewest failed (`tried - kept`), then
        the least tried, and caps by `drawn` (accepted draws)."""
        self.servers: Counter[str] = Counter()
        """Draws per server: among tools tried alike, one on a less tried server comes first."""
        self.reached: set[str] = set()
        """Servers some accepted task uses: among tools that failed alike, one on a server no task reaches yet
        comes first, so a server with few fitting tools is tried again before a reached one's next tool."""
        self.cap = max(2, int(CAP_SHARE * n_tasks))

    def settle(self, drawn: Drawn, accepted: bool, refused: Collection[str] = ()) -> None:
        """An attempt's outcome: a rejected draw gives its tools' share back, so the cap counts tasks, not
        tries. A failure is held only against the tools the probe refused (`refused`, the drafter's set, which
        keeps them out of later draws) when the draw holds one: the others' try is given back, so a source
        drawn with a search that misses is not taken for a source that fails."""
        tools = drawn.tools()
        if accepted:
            self.kept.update(tools)
            self.reached.update(t.split("/", 1)[0] for t in tools)
            return
        self.drawn.subtract(tools)
        blamed = [t for t in tools if t in refused]
        if blamed:
            self.tried.subtract(t for t in tools if t not in blamed)

    def sample(self, rng: random.Random, avoid: set[str] | None = None) -> tuple[Candidates, Drawn]:
        names = sorted(self.shapes)
        weights = [self.shapes[n].weight * math.sqrt(1 + self._untried(self.shapes[n])) for n in names]
        for _ in range(24):
            shape = self.shapes[rng.choices(names, weights)[0]]
            drawn = self._draw(shape, rng, avoid or set())
            if drawn is not None:
                self.drawn.update(drawn.tools())
                self.tried.update(drawn.tools())
                self.servers.update({u.server for u in drawn.units.values()})
                tools = drawn.tools()
                return Candidates(seeds=tools[:1], query=f"shape: {shape.name}", tools=tools), drawn
        raise UsageError("no goal shape found fitting tools in the harvested pool; see task_synth/templates/shapes.yaml")

    def _untried(self, shape: Shape) -> int:
        """Units that fit one of the shape's slots and were never tried: a shape with much of the pool still
        untried is drawn more often (its weight grows with the square root), so a run covers the pool
        rather than repeating the shapes whose slots few tools fit. A later slot counts too (a sync's copies,
        which only a sync draws), tested without what depends on the slots before it (`alike`)."""
        if shape.name not in self._firsts:
            fitting: dict[str, Unit] = {}
            for slot in shape.slots:
                if slot.same:
                    continue
                test = replace(slot, needs=slot.needs - {"alike"})
                fitting.update({u.id: u for use in slot.uses for u in self._by_use[use]
                                if self._fits(u, test, Drawn(shape, {})) and self._means(u, slot)})
            self._firsts[shape.name] = list(fitting.values())
        return sum(1 for u in self._firsts[shape.name] if not self.tried[u.id])

    def _draw(self, shape: Shape, rng: random.Random, avoid: set[str]) -> Drawn | None:
        drawn = Drawn(shape, {})
        servers: dict[str, str] = {}
        for slot in shape.slots:
            fixed = servers.get(slot.same) if slot.same else None
            pick = self._pick(slot, rng, avoid, set(servers.values()), fixed, drawn)
            if pick is None:
                return None
            unit, finder = pick
            drawn.units[slot.name] = unit
            if finder is not None:
                drawn.finders[slot.name] = finder
            scopes = self._scopes(unit, avoid)
            if scopes:
                drawn.scopes[slot.name] = scopes
            look = self._opener(unit, avoid) if unit.use == "find" and "look" in slot.uses else None
            if look is not None:
                drawn.looks[slot.name] = look
            servers[slot.name] = unit.server
        return drawn

    def _scopes(self, unit: Unit, avoid: set[str]) -> dict[str, ToolSpec]:
        """Per id argument naming a record of another kind (the project a note goes in), the least tried open
        list read of that kind whose ids the argument may take: the plan finds the record the request names
        by listing, as a person's assistant would, instead of knowing its id."""
        out: dict[str, ToolSpec] = {}
        for arg, kind in unit.refs.items():
            if kind == unit.kind:
                continue
            found = [t for t in self.space.finders.get((unit.server, kind)) or [] if t.id not in avoid
                     and self.drawn[t.id] < self.cap and not _searches(t) and takes_kind(arg, unit.tool, listed_kind(t))]
            if found:
                out[arg] = min(found, key=lambda t: (self.tried[t.id] - self.kept[t.id], self.tried[t.id], t.id))
        return out

    def _opener(self, found: Unit, avoid: set[str]) -> Unit | None:
        """The least failed, then least tried open look of the find unit's kind on its server whose id
        argument may take what the find lists (the id_kind rule) and that names no other record: it opens
        the record found. Looks are drawn this way as well as on their own, so a run covers more readers; one
        tried more often than the find is left alone, so no tool is tried twice before another once."""
        listed = listed_kind(found.tool)
        fits = [u for u in self._looks.get((found.server, found.kind or ""), ()) if u.id not in avoid
                and self.drawn[u.id] < self.cap and self.tried[u.id] <= self.tried[found.id]
                and not u.refs and u.target is not None
                and takes_kind(u.target, u.tool, listed)]
        return min(fits, key=lambda u: (self.tried[u.id] - self.kept[u.id], self.tried[u.id], u.id)) if fits else None

    def _pick(self, slot: Slot, rng: random.Random, avoid: set[str], used: set[str], server: str | None,
              drawn: Drawn) -> tuple[Unit, ToolSpec | None] | None:
        """The fitting unit whose draws failed least (`_failed`), then one on a server no accepted task reaches
        yet, then one no accepted task uses, then one whose rule checks something (it plays a part: the world
        holds the agent to it), then the least tried (then the one on the least tried server, then chance), whose finder fits when the slot
        needs one and neither has reached the cap; None when no fitting unit is open (the shape gives way to
        another). So every tool is tried before any is tried again, a server whose first tools failed gets its
        next ones before reached servers do, and one whose drafts keep failing (a change the world does not
        keep) drifts back."""
        pool = [u for use in slot.uses for u in self._by_use[use]]
        if server is not None:
            pool = [u for u in pool if u.server == server]
        fitting = [u for u in pool if u.id not in avoid and (server is not None or u.server not in used)
                   and self.drawn[u.id] < self.cap and self._fits(u, slot, drawn) and self._means(u, slot)
                   and self._goes_with(u, drawn)]
        order = {u.id: rng.random() for u in fitting}
        copies = "copyable" in slot.needs
        fitting.sort(key=lambda u: (self._failed(u), copies and not self._untried_copy(u), u.server in self.reached,
                                    self.kept[u.id] > 0, not u.plays, self.tried[u.id], self.servers[u.server],
                                    order[u.id]))
        for unit in fitting:
            if "finder" in slot.needs and unit.use == "find" and unit.queries:
                continue  # a search is no listing to count or rank
            finder = self._finder(unit, avoid) if unit.use != "find" else None
            if "finder" in slot.needs and finder is None and unit.use != "find":
                continue
            if self._open((unit, finder)):
                return unit, finder
        return None

    def _untried_copy(self, source: Unit) -> bool:
        """A service of another kind makes what the source holds and its make was never tried: a sync from
        this source reaches a tool no draw has."""
        return any(not self.tried[m.id] and m.card != source.card and self._pairs(source.card, m.card)
                   for m in self._makers.get(self._head(source), ()))

    def _failed(self, unit: Unit) -> int:
        """Its failed draws, the first `FORGIVEN` forgiven while no accepted task uses it or reaches its server: a failed
        attempt counts against every tool it drew, though one step failed (or the record or partner drawn
        with it), so a tool no task uses yet gets a second try before a used one is drawn again; without it a
        run ran out of untried sources at ~800 tasks and drew used ones, and a server with one or two fitting
        tools was never reached again."""
        failed = self.tried[unit.id] - self.kept[unit.id]
        return failed if unit.server in self.reached and self.kept[unit.id] else max(0, failed - FORGIVEN)

    def _open(self, pick: tuple[Unit, ToolSpec | None]) -> bool:
        return all(self.drawn[t.id] < self.cap for t in (pick[0].tool, pick[1]) if t is not None)

    def _finder(self, unit: Unit, avoid: set[str]) -> ToolSpec | None:
        """The least tried of the unit's finders the probe has not refused (one whose answer held no name a
        request can say fails every draw it is in)."""
        found = [t for t in self.finders_for(unit) if t.id not in avoid]
        return min(found, key=lambda t: (self.tried[t.id], t.id)) if found else None

    def finders_for(self, unit: Unit) -> list[ToolSpec]:
        """The list reads of the unit's kind whose ids the unit's arguments may take (the id_kind rule of
        `argument_checks`: a time card listing finds no task-board card)."""
        if not unit.kind:
            return []
        fed = ([unit.target] if unit.target else []) + [a for a, k in unit.refs.items() if k == unit.kind]
        return [t for t in self.space.finders.get((unit.server, unit.kind)) or [] if not _searches(t)
                and all(takes_kind(a, unit.tool, listed_kind(t)) for a in fed)]

    def _goes_with(self, unit: Unit, drawn: Drawn) -> bool:
        """The unit's service is one a person uses with the first slot's (same theme)."""
        first = next(iter(drawn.units.values()), None)
        return first is None or self._pairs(first.card, unit.card)

    def _pairs(self, card: str, other: str) -> bool:
        return self.affinity is None or card == other or other in self.affinity.get(card, set())

    def _means(self, unit: Unit, slot: Slot) -> bool:
        """The unit's record or verb is one the slot's goal means: a record that carries content (a note, a
        card, a message), one that is scheduled (an event, a booking), a change that notes something."""
        key = (unit.id, slot.needs)
        if key not in self._meant:
            self._meant[key] = self._meaning(unit, slot)
        return self._meant[key]

    @staticmethod
    def _head(unit: Unit) -> str:
        """The last word of what the unit's record is called (`create_voice_agent` -> agent)."""
        return singular_word((noun_of(unit.tool, unit.kind).split() or [""])[-1])

    def _meaning(self, unit: Unit, slot: Slot) -> bool:
        head = self._head(unit)
        for need in ("content", "dated"):
            if need in slot.needs and head not in self.nouns.get(need, frozenset()):
                return False
        if "copyable" in slot.needs and not any(
                m.card != unit.card and self._pairs(unit.card, m.card) for m in self._makers.get(head, ())):
            return False
        return "notes" not in slot.needs or verb_of(unit.tool) in self.nouns.get("notes", frozenset())

    def _holds(self, shape: str, unit: Unit) -> bool:
        """The unit's records hold more than a name and what `shape` decides on (cached per kind)."""
        if unit.thin:
            return False
        key = (shape, unit.server, unit.kind or "")
        if key not in self._decided:
            self._decided[key] = self.decides is None or self.decides(shape, self.space.records(*key[1:]))
        return self._decided[key]

    def _fits(self, unit: Unit, slot: Slot, drawn: Drawn) -> bool:
        if slot.cards and unit.card not in slot.cards:
            return False
        needs = slot.needs
        if "text" in needs and not unit.texts or "label" in needs and not unit.labels:
            return False
        if "carries" in needs and not unit.carries or "plays" in needs and not unit.plays:
            return False
        if "dates" in needs and not when_args(unit.tool):
            return False
        if "fields" in needs and not self._holds(drawn.shape.name, unit):
            return False
        if "alike" in needs and not self._alike(unit, drawn):
            return False
        if "apart" in needs and any(u.card == unit.card for u in drawn.units.values()):
            return False  # two task boards are both "our task board": the request could not say which
        same = drawn.units.get(slot.same or "")
        return same is None or unit.kind == same.kind

    def _alike(self, unit: Unit, drawn: Drawn) -> bool:
        """A make unit that makes the kind of the record the slot before it found (a customer for a customer),
        in a service of another kind (two task boards are both "our task board" to the person)."""
        before = next(reversed(drawn.units.values()), None)
        return before is not None and self._head(unit) == self._head(before) and unit.card != before.card \
            and self._head(unit) in self.nouns.get("records", frozenset())


def _searches(tool: ToolSpec) -> bool:
    """A search (`search_contacts`) is no listing to pick a record from: a plan picks by name only from a
    search that searched for that name (the search_finds rule), so it never serves as a finder."""
    return verb_kind(tool.name) == "search"


def load_nouns(book: Phrasebook) -> dict[str, frozenset[str]]:
    """`meanings` of `shapes.yaml`: need -> the record words (or verbs) that meet it."""
    raw = book.raw("meanings")
    if not isinstance(raw, dict) or not all(isinstance(v, list) for v in raw.values()):
        raise ContentError(f"{book.path}: 'meanings' must map needs to lists of words")
    return {str(k): frozenset(str(w) for w in v) for k, v in raw.items()}


def shape_of(candidates: Candidates) -> str:
    return candidates.query.removeprefix("shape: ").strip()


def describe(drawn: Drawn) -> dict[str, Any]:
    """What the task's metadata keeps of the draw: the shape and the tool of each slot."""
    out: dict[str, Any] = {"shape": drawn.shape.name, "slots": {k: u.id for k, u in drawn.units.items()}}
    if drawn.looks:
        out["opens"] = {k: u.id for k, u in drawn.looks.items()}
    return out
