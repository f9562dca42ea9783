"""Example requests for each tool, generated offline and indexed with it (doc2query without a model).

A request says "how many products does my store have?"; the tool says `get_products_count`. Writing, for
every tool, a few requests the way a person would ask — from its name's verb (the operation kind), the thing
it acts on, its card's words for the service (card_vocabulary.py), its required arguments, and everyday
words for its developer words (phrasebook.py) — puts the user's phrasing into the tool's document. They
are deterministic: the same tool always gets the same requests, so an index rebuild changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from cworld.data_model.tools import ToolSpec
from cworld.registry.index.card_vocabulary import CardVocabulary
from cworld.registry.index.documents import humanize, split_identifier
from cworld.registry.index.phrasebook import EVERYDAY, FILLER_WORDS, KIND_OF_VERB, REQUEST_TEMPLATES

#: Words in a name that make it a count, whatever its verb (`get_products_count`).
COUNT_WORDS = frozenset({"count", "counts", "total", "number"})
#: How many required arguments a request names ("... for the given city and date").
MAX_NAMED_ARGUMENTS = 2


@dataclass(frozen=True)
class ToolIntent:
    """What a tool's name says it does: the operation kind and the thing it acts on."""

    kind: str
    thing: str
    name_words: tuple[str, ...]


def tool_intent(tool: ToolSpec) -> ToolIntent:
    """The kind comes from the first verb of the name (count words win); the thing is what is left of the
    name once verbs, the server's own words and filler are taken out (`tiktok_search_videos` -> videos)."""
    words = tuple(split_identifier(tool.name))
    server_words = set(split_identifier(tool.server))
    kind = "count" if COUNT_WORDS & set(words) else next((KIND_OF_VERB[w] for w in words if w in KIND_OF_VERB), "do")
    keep_verbs = kind == "do"  # no known verb: the name itself is the action ("mute host")
    thing_words = [w for w in words if (keep_verbs or w not in KIND_OF_VERB) and w not in COUNT_WORDS
                   and w not in FILLER_WORDS and w not in server_words and not w.isdigit()]
    return ToolIntent(kind=kind, thing=" ".join(dict.fromkeys(thing_words)), name_words=words)  # once each


def everyday_terms(words: tuple[str, ...]) -> list[str]:
    """The everyday words for each developer word of the name (phrasebook.EVERYDAY), in name order."""
    out: list[str] = []
    for word in words:
        phrase = EVERYDAY.get(word) or EVERYDAY.get(word.rstrip("s"))
        if phrase and phrase not in out:
            out.append(phrase)
    return out


def named_arguments(tool: ToolSpec) -> str:
    """`the given city and date`: the required arguments a request has to supply, as words."""
    schema = tool.input_schema or {}
    required = [humanize(name) for name in schema.get("required") or [] if isinstance(name, str)]
    required = [name for name in required if name and name not in ("id", "query")][:MAX_NAMED_ARGUMENTS]
    return f"the given {' and '.join(required)}" if required else ""


def example_requests(tool: ToolSpec, vocabulary: CardVocabulary | None = None) -> list[str]:
    """A few requests a person would make of `tool`: the kind's templates filled with the thing it acts on
    and the service it lives in, one naming its required arguments, one of everyday words for its name."""
    intent = tool_intent(tool)
    thing = intent.thing or (vocabulary.things[0] if vocabulary and vocabulary.things else humanize(tool.server))
    where = vocabulary.where if vocabulary else humanize(tool.server)
    requests = [template.format(obj=thing, where=where) for template in REQUEST_TEMPLATES[intent.kind]]
    arguments = named_arguments(tool)
    if arguments:
        requests.append(f"{requests[0].rstrip('?')} for {arguments}")
    terms = everyday_terms(intent.name_words)
    if terms:
        requests.append("I want to " + ", ".join(terms))
    return requests


def vocabulary_for(tool: ToolSpec, vocabularies: dict[str, CardVocabulary]) -> CardVocabulary | None:
    """The tool's card vocabulary, by its category (a card name, or a category a card recognises)."""
    return vocabularies.get(tool.category or "") if vocabularies else None
