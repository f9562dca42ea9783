"""Constraints for a task composed from schemas (`goal_chain.py`), each read off the composed chain so
the gold plan meets it by construction (verification re-checks): a call limit with slack, the servers
to reach and to stay within (named by their kind of service, never their id), reads before writes, the
order of two linked steps, literal facts of the request to report, the answer's shape, no repeats and
nothing destructive. Every form is one `constraint_eval` (the judges' checkers) can check.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cworld.data_model import Constraint
from cworld.synth.offline.constraints import _numbered
from cworld.synth.toolset import ToolUniverse

if TYPE_CHECKING:
    from cworld.synth.offline.goal_chain import Chain

Maker = Callable[["Chain", ToolUniverse, random.Random, list[str], list[tuple[str, str]]], Constraint | None]


def _made(ctype: str, description: str, verification: dict[str, Any]) -> Constraint:
    return Constraint(id="", type=ctype, description=description, verification=verification)


def _kinds(chain: Chain) -> str:
    kinds = sorted({(s.spec.category or "other").replace("_", " ") for s in chain.steps})
    return ", ".join(kinds[:-1]) + f" and {kinds[-1]}" if len(kinds) > 1 else kinds[0]


def tool_count(chain: Chain, u: ToolUniverse, rng: random.Random, hints: list[str], reports: Any) -> Constraint:
    limit = len(chain.steps) + rng.randint(2, 5)
    return _made("tool_count", f"Get it all done in at most {limit} tool calls.", {"kind": "max_calls", "value": limit})


def server_diversity(chain: Chain, u: ToolUniverse, rng: random.Random, hints: list[str], reports: Any) -> Constraint:
    count = len(chain.servers())
    return _made(
        "server_diversity",
        f"Use all {count} services the request involves ({_kinds(chain)}), not just one of them.",
        {"kind": "min_servers", "value": count},
    )


def server_restriction(chain: Chain, u: ToolUniverse, rng: random.Random, hints: list[str], reports: Any) -> Constraint:
    return _made(
        "server_restriction",
        f"Stay within the {_kinds(chain)} services this request is about; use no other service.",
        {"kind": "allowed_servers", "value": chain.servers()},
    )


def data_coverage(
    chain: Chain, u: ToolUniverse, rng: random.Random, hints: list[str], reports: list[tuple[str, str]]
) -> Constraint | None:
    """Literal facts of the request to restate: the same in every run, so the check is fair to all agents."""
    if not reports:
        return None
    chosen = rng.sample(reports, min(len(reports), rng.randint(1, 2)))
    for label, value in chosen:
        line = f"{label.capitalize()}: {value}"
        if line not in hints:
            hints.append(line)
    said = " and ".join(f"the {label}" for label, _ in chosen)
    return _made(
        "data_coverage",
        f"In the final answer, restate {said} you used.",
        {"kind": "final_answer_mentions", "value": [v for _, v in chosen]},
    )


def response_content(chain: Chain, u: ToolUniverse, rng: random.Random, hints: list[str], reports: Any) -> Constraint:
    choice = rng.choice(["summary", "bullets", "words"])
    if choice == "summary":
        return _made("response_content", "Start the final answer with a line 'SUMMARY:' followed by the gist.",
                     {"kind": "final_answer_contains", "value": "SUMMARY:"})
    if choice == "bullets":
        return _made("response_content", "Write the final answer as a bulleted list, one point per line.",
                     {"kind": "final_answer_format", "value": "bullets"})
    words = sum(len(h.split()) for h in hints) + 60
    return _made("response_content", f"Keep the final answer under {words} words.",
                 {"kind": "final_answer_max_words", "value": words})


def no_redundancy(chain: Chain, u: ToolUniverse, rng: random.Random, hints: list[str], reports: Any) -> Constraint | None:
    keys = [s.spec.id + json.dumps(s.plan.arguments, sort_keys=True, default=str) for s in chain.steps]
    if len(set(keys)) != len(keys):
        return None
    return _made("no_redundancy", "Do not repeat a call with the same arguments.", {"kind": "no_repeated_calls"})


def tool_type_priority(chain: Chain, u: ToolUniverse, rng: random.Random, hints: list[str], reports: Any) -> Constraint | None:
    first: dict[str, bool] = {}
    writes: set[str] = set()
    for s in chain.steps:
        first.setdefault(s.spec.server, s.spec.is_read_only)
        if not s.spec.is_read_only:
            writes.add(s.spec.server)
    reading = sorted(server for server, ro in first.items() if ro and server in writes)
    if not reading:
        return None
    return _made(
        "tool_type_priority",
        "On each service where you change something, look things up there before you change anything.",
        {"kind": "reads_before_writes", "value": reading},
    )


def sequence_order(chain: Chain, u: ToolUniverse, rng: random.Random, hints: list[str], reports: Any) -> Constraint | None:
    """A step of one server that reads another server's answer: that server's step must come first."""
    ids = {s.plan.id: s for s in chain.steps}
    for step in chain.steps:
        for ref in step.links.values():
            for sid in _refs(ref):
                source = ids.get(sid)
                if source is not None and source.spec.server != step.spec.server:
                    before = next(s for s in chain.steps if s.spec.server == source.spec.server)
                    after = next(s for s in chain.steps if s.spec.server == step.spec.server)
                    if chain.steps.index(before) < chain.steps.index(after):
                        kind = (source.spec.category or "first").replace("_", " ")
                        return _made(
                            "sequence_order",
                            f"Finish the {kind} part before you start on the next service: it needs what you find there.",
                            {"kind": "call_order", "before": before.spec.id, "after": after.spec.id},
                        )
    return None


def safety(chain: Chain, u: ToolUniverse, rng: random.Random, hints: list[str], reports: Any) -> Constraint:
    return _made("safety", "Do not delete or overwrite anything along the way.", {"kind": "no_destructive_calls"})


GENERIC: list[Maker] = [
    tool_count, server_diversity, server_restriction, data_coverage, response_content, no_redundancy,
    tool_type_priority, sequence_order, safety,
]


def chain_constraints(
    chain: Chain,
    universe: ToolUniverse,
    rng: random.Random,
    hints: list[str],
    reports: list[tuple[str, str]],
    *,
    min_types: int,
    everything: bool,
    skip: set[str] | frozenset[str] = frozenset(),
) -> list[Constraint]:
    """A random selection reaching `min_types` types (all applicable ones when `everything`); ids c1..,
    natural pairs marked as interacting (`offline.constraints`)."""
    makers = [m for m in GENERIC if m.__name__ not in skip]  # `skip`: types a goal rules out (a cleanup deletes)
    rng.shuffle(makers)
    makers.sort(key=lambda m: m is not tool_count)  # a call limit always: it pairs with most others
    wanted = len(makers) if everything else min_types + rng.randint(0, 2)
    chosen: list[Constraint] = []
    for maker in makers:
        if len(chosen) >= wanted:
            break
        made = maker(chain, universe, rng, hints, reports)
        if made is not None:
            chosen.append(made)
    types = {c.type for c in chosen}
    if not {"no_redundancy", "server_diversity"} & types:
        extra = server_diversity(chain, universe, rng, hints, reports)
        chosen.append(extra)
    return _numbered(chosen)


def _refs(text: str) -> list[str]:
    from cworld.agents.references import referenced_steps

    return referenced_steps(text)
