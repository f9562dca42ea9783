"""A tool's checks as an ordered decision list learned from its calls: the condition that explains the most
refusals of one error class, and no accepted call, becomes the next check; the calls it explains leave the
pool; repeat. That is how a service checks (the first failing check answers), so the order is learned too."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from cworld.data_model import ToolSpec
from cworld.engine.learn.atoms import Atom, Binding, Hints, atoms, bind_all, bindings
from cworld.engine.learn.scope import Scope
from cworld.engine.learn.traffic import Observation
from cworld.engine.rules.spec import Check

#: An error class a rule may give (the result classes the engine keeps).
_CLASSES = {"not_found", "auth", "business", "invalid_args", "rate_limit", "unavailable"}
_MAX_STEPS = 12


@dataclass
class Learned:
    """The checks learned for a tool, with what supports each (`support[i]`: calls step i refused
    correctly) and the records the rule binds."""

    steps: list[Check] = field(default_factory=list)
    support: list[int] = field(default_factory=list)
    found: list[Binding] = field(default_factory=list)
    candidates: list[Binding] = field(default_factory=list)
    """every record a rule could name (the effects may need one no check found)"""


def learn_checks(tool: ToolSpec, calls: list[Observation], scopes: dict[int, Scope],
                 hints: Hints | None = None) -> Learned:
    """The decision list over the calls whose arguments pass the schema and whose state was seen."""
    pool = [o for o in calls if o.valid and o.before is not None]
    oks = [o for o in pool if o.verdict == "ok"]
    found = bindings(tool, oks, scopes, hints, pool)
    bind_all(found, (scopes[id(o)] for o in pool))
    candidates = atoms(tool, pool, scopes, found, hints)
    out = Learned(found=[], candidates=found)
    placed: set[str] = set()
    while pool and len(out.steps) < _MAX_STEPS:
        best = _best(candidates, pool, scopes)
        if best is None:
            break
        atom, error, covered = best
        if atom.kind == "fail" and atom.binding is not None and atom.binding.name not in placed:
            for b in _lineage(atom.binding, found):
                if b.name not in placed:
                    pool = _place(out, b, pool, scopes)
                    placed.add(b.name)
        out.steps.append(_step(atom, error, covered))
        out.support.append(len(covered))
        if atom.kind == "find" and atom.binding is not None:
            placed.add(atom.binding.name)
            out.found.append(atom.binding)
        ids = {id(o) for o in covered}
        pool = [o for o in pool if id(o) not in ids]
        candidates = [c for c in candidates if c != atom]
    return out


def _place(out: Learned, b: Binding, pool: list[Observation], scopes: dict[int, Scope]) -> list[Observation]:
    """Add the find a condition needs; the calls it refuses (their record is missing) leave the pool."""
    missing = [o for o in pool if b.arg is not None and o.args.get(b.arg) is not None and
               scopes[id(o)].bound(b.name) is None]
    error = Counter(o.verdict for o in missing if o.verdict != "ok").most_common(1)
    out.steps.append(_binding_step(b, error[0][0] if error else "not_found", template(
        [o for o in missing if error and o.verdict == error[0][0]])))
    out.support.append(sum(1 for o in missing if error and o.verdict == error[0][0]))
    out.found.append(b)
    gone = {id(o) for o in missing}
    return [o for o in pool if id(o) not in gone]


def _lineage(b: Binding, found: list[Binding]) -> list[Binding]:
    """The binding after the ones it is read from (a card before the card's board)."""
    parent = next((p for p in found if p.name == b.parent), None)
    return [*(_lineage(parent, found) if parent is not None else []), b]


def needed_steps(learned: Learned, names: set[str]) -> list[Check]:
    """Finds for records the effects or answer name that no check found yet (they held in every accepted
    call, so they refuse none of them)."""
    placed = {b.name for b in learned.found}
    out = []
    for b in learned.candidates:
        if b.name in names:
            for one in _lineage(b, learned.candidates):
                if one.name not in placed:
                    out.append(_binding_step(one, "not_found", None))
                    placed.add(one.name)
    return out


def _best(candidates: list[Atom], pool: list[Observation],
          scopes: dict[int, Scope]) -> tuple[Atom, str, list[Observation]] | None:
    """The candidate that refuses the most calls of one class and (almost) no others."""
    best: tuple[float, tuple[int, int], Atom, str, list[Observation]] | None = None
    for atom in candidates:
        covered = [o for o in pool if scopes[id(o)].holds(atom.expr)]
        if not covered:
            continue
        counts = Counter(o.verdict for o in covered)
        error, right = next(((c, n) for c, n in counts.most_common() if c != "ok"), ("ok", 0))
        accepted = counts["ok"]
        other = len(covered) - right - accepted  # refused too, with another class: the verdict still holds
        if error == "ok" or right < (1 if atom.kind != "fail" else atom.least) or accepted > right / 10 or other > right / 3:
            continue
        score = right - 3 * accepted - other
        key = (score, (-atom.cost[0], -atom.cost[1]))
        if best is None or key > (best[0], best[1]):
            best = (score, (-atom.cost[0], -atom.cost[1]), atom, error,
                    [o for o in covered if o.verdict == error])
    return None if best is None else (best[2], best[3], best[4])


def _binding_step(b: Binding, error: str, message: str | None) -> Check:
    if b.arg is None:
        return Check(let={b.name: b.expr})
    return Check.model_validate({"find": b.name, "in": b.collection, "key": b.key or f"args[{b.arg!r}]",
                                 "optional": b.optional, "error": _error(error), "message": message})


def _step(atom: Atom, error: str, covered: list[Observation]) -> Check:
    message = template(covered)
    if atom.kind == "find" and atom.binding is not None:
        return _binding_step(atom.binding, error, message)
    if atom.kind == "auth":
        return Check.model_validate({"auth": atom.token_arg, "store": atom.store, "message": message})
    return Check.model_validate({"fail": atom.expr, "error": _error(error), "message": message})


def _error(verdict: str) -> str:
    return verdict if verdict in _CLASSES else "business"


def template(calls: list[Observation]) -> str | None:
    """The service's message for these refusals, its argument values replaced by `{args.NAME}` where that
    reproduces the message; the most common message otherwise."""
    texts = Counter(o.result.text for o in calls)
    if not texts:
        return None
    tried: Counter[str] = Counter()
    for o in calls:
        text = o.result.text
        for name, value in sorted(o.arguments.items(), key=lambda kv: -len(str(kv[1]))):
            if isinstance(value, str | int) and len(str(value)) >= 3 and str(value) in text and name.isidentifier():
                text = text.replace(str(value), "{args." + name + "}")
        tried[text] += 1
    best, count = tried.most_common(1)[0]
    if count > texts.most_common(1)[0][1]:
        return _braces_safe(best)
    return _braces_safe(texts.most_common(1)[0][0], literal=True)


def _braces_safe(text: str, literal: bool = False) -> str:
    """A message template: braces that are not placeholders would be read as expressions."""
    if literal:
        return text.replace("{", "(").replace("}", ")")
    return re.sub(r"\{(?!args\.)([^{}]*)\}", r"(\1)", text)
