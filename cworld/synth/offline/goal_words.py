"""The words of a harvested-pool request: `task_synth/templates/harvested.yaml` filled with the world's names.

A request is a persona with a reason (per theme), then one goal sentence whose clauses say what to find,
what to do with it and whom to tell, by operation and card: "look up the vulnerability 'Login timeout'
in the security tracker", "open a card for it on our task board under the list 'To do'". The clauses are
never a tool description's words, and each value in them is a record's name in the world or a value
Faker drew.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from cworld.synth.offline.schema_values import printable, words_of
from cworld.synth.offline.templates import Phrasebook, Templates

if TYPE_CHECKING:
    from cworld.synth.offline.goal_chain import Goal, Named, Part

BOOK = "harvested"
RECIPIENTS = frozenset({"to", "cc", "recipient", "recipients", "email", "to email"})


class GoalWords:
    def __init__(self, book: Phrasebook) -> None:
        self.book = book

    @classmethod
    def of(cls, templates: Templates) -> GoalWords:
        return cls(templates.book(BOOK))

    def service(self, card: str) -> str:
        services = self.book.mapping("services")
        return services.get(card) or self.book.text("unknown_service")

    def text(self, key: str, rng: random.Random, **fields: Any) -> str:
        return rng.choice(self.book.variants(f"texts.{key}", **fields))

    def request(self, theme: str, clauses: dict[str, str], rng: random.Random, source: str = "") -> str:
        """`source`: the card of the service the request starts in; some findings have their own askers."""
        by_source = self.book.raw("source_personas")
        key = f"source_personas.{source}" if isinstance(by_source, dict) and source in by_source else f"personas.{theme}"
        persona = rng.choice(self.book.variants(key))
        return rng.choice(self.book.variants("goal", persona=persona, **clauses))

    def clause(self, part: Part, goal: Goal, rng: random.Random) -> str:
        role = part.role
        fields: dict[str, Any] = {"entity": role.word, "service": self.service(role.card),
                                  "value": goal.found.label, "scope": "", "where": "", "target": ""}
        others = [n for arg, n in part.named.items() if arg not in ("found", role.own_key)]
        if part.name == "find":
            if others:
                fields["scope"] = self._place("scope", others[0])
            return rng.choice(self.book.variants(f"find.{role.op}", **fields))
        if others:
            fields["where"] = self._place("where", others[0])
        if role.own_key and role.own_key in part.named:
            fields["target"] = part.named[role.own_key].label
        section = "act" if part.name == "act" or role.op == "update" else "tell"
        key = self._key(section, role.card, role.op)
        to = [str(v) for name, v in part.said if name in RECIPIENTS and printable(v)]
        if section == "tell" and to:  # a note to a person, not to a channel
            said = [(n, v) for n, v in part.said if n not in RECIPIENTS]
            return rng.choice(self.book.variants("tell.direct", to=" and ".join(to), **fields)) + _values(said)
        return rng.choice(self.book.variants(key, **fields)) + _values(part.said)

    def _place(self, key: str, named: Named) -> str:
        return self.book.text(key, entity=words_of(named.entity), value=named.label)

    def _key(self, section: str, card: str, op: str) -> str:
        """The card's own phrasing for a create; the operation's otherwise."""
        table = self.book.raw(section)
        if op == "create" and isinstance(table, dict) and card in table:
            return f"{section}.{card}"
        return f"{section}.{op if section == 'act' else 'create'}"


def _values(said: list[tuple[str, Any]]) -> str:
    """The plain values a write is given, as the user states them (", to ana@example.org", ", with
    priority 'high'")."""
    to = [str(v) for name, v in said if name in RECIPIENTS and printable(v)]
    shown = [f"{name} '{value}'" if isinstance(value, str) else f"{name} {value}"
             for name, value in said if printable(value) and name not in RECIPIENTS][:3]
    text = f", addressed to {' and '.join(to)}" if to else ""
    return text + ((", with " + " and ".join(shown)) if shown else "")
