"""The request of a harvested-pool task, in the user's voice: what to do in each service, in order.

A tool's description is written for a model ("Retrieves comprehensive snapshots of option contracts
including..."), not by a user. A step's clause is the description's first sentence turned imperative when
it is short, English and starts with a verb, else the tool's name as words ("get resource logs" -> "get
the resource logs"); a clause that names another tool is not used. The values a step is given follow it
("for 'urban heat islands'", "with tax year 2025"), and a linked argument says where its value comes
from ("with the city you found"). Steps are grouped by service, each service named by its kind.
"""

from __future__ import annotations

import random
import re
from typing import Any

from cworld.synth.offline.schema_values import is_text_param, printable, snake, words_of

VERBS = frozenset(["add", "analyze", "analyse", "append", "apply", "archive", "attach", "book", "browse", "build", "calculate", "cancel", "capture", "change", "check", "close", "collect", "compare", "compile", "compute", "configure", "convert", "copy", "count", "create", "deploy", "describe", "detect", "discover", "download", "draft", "edit", "enrich", "estimate", "evaluate", "execute", "explain", "export", "extract", "fetch", "fill", "find", "format", "generate", "geocode", "get", "grab", "import", "insert", "inspect", "list", "load", "locate", "log", "look", "lookup", "make", "map", "mark", "merge", "monitor", "move", "navigate", "open", "parse", "place", "plan", "post", "predict", "preview", "print", "produce", "publish", "pull", "push", "query", "rank", "read", "record", "refresh", "register", "reply", "report", "request", "reserve", "resolve", "retrieve", "return", "review", "run", "save", "scan", "schedule", "score", "screen", "search", "select", "send", "set", "share", "show", "sign", "snapshot", "start", "stop", "submit", "summarize", "summarise", "suggest", "sync", "tag", "take", "test", "track", "transcribe", "translate", "trigger", "update", "upload", "validate", "verify", "view", "watch", "write"])
CARD_WORDS: dict[str, str] = {
    "maps": "the maps app", "travel": "the travel service", "calendar": "the calendar",
    "messaging": "the team chat", "utilities": "the utilities", "web_search": "web search",
    "knowledge_graph": "the knowledge base", "documents": "the documents", "education": "the course library",
    "media": "the media library", "ecommerce": "the shop", "finance": "the finance tools", "crm": "the CRM",
    "code_hosting": "the code host", "devops": "the build pipeline", "cloud_infrastructure": "the cloud console",
    "task_board": "the task board", "security": "the security tools", "sql_database": "the database",
    "browser_automation": "the browser", "health_records": "the health records", "devices": "the devices",
}
_THEN = ("then", "after that", "and then")
_LINKED = ("with the {what} you got", "using that {what}", "for the {what} found above")


def step_clause(description: str, name: str, server: str, leaks: Any) -> str:
    """What the user asks one tool for, as an imperative clause."""
    sentence = _imperative(description)
    if sentence is None or leaks.leaks(sentence):
        sentence = _from_name(name, server)
    return sentence


def _imperative(description: str) -> str | None:
    text = re.split(r"(?<=[.!?])\s|\n", description.strip(), maxsplit=1)[0]
    text = re.sub(r"\([^)]*\)|`[^`]*`|\[[^\]]*\]|\*+", "", text)
    text = re.sub(r"^(this tool|tool to|use this (tool )?to|allows? (you )?to|used to|helps? (you )?)\s*", "", text,
                  flags=re.I)
    text = re.sub(r"\s+", " ", text).strip(" .:;-")
    words = text.split()
    if not 3 <= len(words) <= 18 or not text.isascii() or re.search(r"\b(server|mcp|tools?|api key|via)\b", text, re.I):
        return None
    verb = _stem(words[0].lower())
    if verb not in VERBS:
        return None
    return " ".join([verb, *words[1:]])


def _stem(word: str) -> str:
    """`retrieves` -> retrieve, `searches` -> search, `queries` -> query (a description's 3rd person)."""
    for end, repl in (("ies", "y"), ("ches", "ch"), ("shes", "sh"), ("sses", "ss"), ("xes", "x")):
        if word.endswith(end) and word[: -len(end)] + repl in VERBS:
            return word[: -len(end)] + repl
    if word.endswith("s") and word[:-1] in VERBS:
        return word[:-1]
    return word


def _from_name(name: str, server: str) -> str:
    """`get_resource_logs` -> "get the resource logs"; the server's own words are left out."""
    own = set(snake(server).split("_"))
    tokens = [t for t in snake(name).split("_") if t and t not in own] or snake(name).split("_")
    verbs = [i for i, t in enumerate(tokens) if _stem(t) in VERBS]
    if not verbs:
        return "look up the " + " ".join(tokens)
    i = verbs[0]
    rest = tokens[:i] + tokens[i + 1:]
    return _stem(tokens[i]) + (" the " + " ".join(rest) if rest else "")


def values_phrase(literals: dict[str, Any], links: dict[str, Any], rng: random.Random) -> str:
    """The values a step is given, as the user states them, and where a linked one comes from."""
    parts: list[str] = []
    for key, value in literals.items():
        if not printable(value) or is_text_param(key):
            continue
        shown = f"'{value}'" if isinstance(value, str) else str(value)
        parts.append(f"for {shown}" if re.search(r"query|search|keyword|term|topic|^q$", snake(key))
                     else f"with {words_of(key)} {shown}")
        if len(parts) == 2:
            break
    linked = [k for k, v in links.items() if not (isinstance(v, str) and v.startswith("Notes so far"))]
    if linked:
        what = _link_words(links[linked[0]], linked[0])
        parts.append(rng.choice(_LINKED).format(what=what))
    return (" " + " and ".join(parts)) if parts else ""


def _link_words(ref: Any, key: str) -> str:
    """`{{s2.card.id}}` -> "card id", `{{s1.items.0.title}}` -> "first result's title"."""
    text = ref[0] if isinstance(ref, list) and ref else str(ref)
    match = re.search(r"\{\{[^.}]+\.([^}]+)\}\}", text)
    parts = [p for p in (match.group(1).split(".") if match else [key]) if not p.isdigit()]
    leaf = words_of(parts[-1]) if parts else words_of(key)
    owner = words_of(parts[-2]) if len(parts) > 1 else ""
    if leaf not in ("id", "name", "title", "path", "url"):
        return leaf
    if owner in ("", "items", "results", "result", "data", "records"):
        return f"first result's {leaf}"
    return f"{owner.rstrip('s')} {leaf}"


def service_words(card: str) -> str:
    return CARD_WORDS.get(card, "the " + (card.replace("_", " ") or "other service"))


def request(opener: str, groups: list[tuple[str, list[str]]], rng: random.Random) -> str:
    """One sentence per service: "In the task board, get the teams, then create a comment ...". """
    sentences = [opener]
    for n, (where, clauses) in enumerate(groups):
        body = clauses[0]
        for text in clauses[1:]:
            body += f", {rng.choice(_THEN)} {text}"
        lead = ("Start in" if n == 0 else "Finally, in" if n == len(groups) - 1 else "Next, in")
        sentences.append(f"{lead} {where}, {body}.")
    sentences.append("Then tell me briefly what you found and did.")
    return " ".join(sentences)
