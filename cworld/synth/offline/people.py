"""People in the seeded world, as the offline blocks pick them: colleagues, namesakes, who is meant."""

from __future__ import annotations

from cworld.sandbox.framework import world
from cworld.synth.offline.composer import Composer, Decision
from cworld.synth.offline.phrases import SHARED, listed


def first_name(name: str) -> str:
    return name.split()[0]


def namesakes(name: str, names: list[str]) -> list[str]:
    """Other people in `names` who share this person's first name."""
    return [n for n in names if n != name and first_name(n) == first_name(name)]


def colleague(c: Composer, names: list[str], avoid: set[str] | frozenset[str] = frozenset()) -> str:
    """A colleague present in `names` (an app's directory); one with a namesake half the time.

    Nobody the task already left out, and nobody who shares a first name with someone it already
    involves, is picked: "leave Nicholas King out of it" must not meet "ping Nicholas King" later."""
    cast = {p["name"] for p in world.cast(c.seed)["colleagues"]}
    pool = sorted(n for n in names if n in cast and n not in avoid and usable(c, n))
    twins = [n for n in pool if namesakes(n, names)]
    return involve(c, c.pick(twins if twins and c.rng.random() < 0.5 else pool))


def usable(c: Composer, name: str) -> bool:
    """Not left out by the task, and not sharing a first name with someone else the task involves."""
    used = c.facts.get("people_used", [])
    clash = any(first_name(name) == first_name(u) and name != u for u in used)
    return not clash and name not in c.facts.get("people_excluded", [])


def involve(c: Composer, name: str) -> str:
    """Record that the task names this person (later picks keep clear of their namesakes)."""
    c.facts.setdefault("people_used", []).append(name)
    return name


def exclude_twin(c: Composer, key: str, name: str, names: dict[str, str], tool: str, argument: str) -> None:
    """When someone else shares the first name, say who is meant and forbid the other one's id."""
    others = sorted(namesakes(name, list(names)))
    c.facts.setdefault("people_excluded", []).extend(others)
    if others:
        book = c.templates.book(SHARED)
        wording = book.text("namesake", name=name, others=listed(book, others, "or"))
        forbidden = {"kind": "argument_excludes", "tool": tool, "argument": argument}
        c.decisions.append(
            Decision(key, "exclusion", wording, {**forbidden, "value": [names[o] for o in others]})
        )
