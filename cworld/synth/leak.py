"""Fuzzy-rewrite check (C-World §2.2, "preventing retrieval shortcuts"): a query must not name its tools.

A query leaks when it holds
- a tool id (`mail/send_email`) or a snake_case / camelCase identifier (`send_email`, `sendEmail`,
  also internal record ids such as `evt_0011`, which no user would know);
- a one-word tool name written as code (`` `checkout` ``, `login(`, "call now", "the sleep tool");
- a server's name. Many sandbox servers are named with plain words (calendar, mail, travel), which a
  person may well say, so those leak only when written as an identifier ("the travel server",
  `calendar/`, `` `mail` ``); a distinctive name (taskboard, helio-crm, github) leaks wherever it appears.

`rewrite` is the deterministic fuzzy rewriter: it turns leaked names into plain words. The LLM path
asks the model first and uses this only as a fallback; the offline path writes intent-level text to
begin with and runs the check all the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cworld.data_model import Scenario
from cworld.synth.toolset import ToolUniverse

#: Server ids that are ordinary words: leaks only in an identifier context.
GENERIC_WORDS = frozenset(
    """calendar mail email chat clock docs documents finance shop store travel text math units graph
crypto time memory fetch files filesystem search weather news notes maps contacts tasks payments
""".split()  # noqa: SIM905
)
SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b")
CAMEL = re.compile(r"\b[a-z]+[A-Z][a-zA-Z0-9]*\b")
#: A maximal run of word characters and hyphens: what `_word_in` takes as a whole word.
RUN = re.compile(r"[\w\-]+")
TOKEN = re.compile(r"[\w\-]+(?:/[\w\-]+)?")
CODE_WORDS = r"(?:tool|tools|function|endpoint|api|command|server|mcp|plugin)"


@dataclass(frozen=True)
class Leak:
    kind: str
    text: str

    def __str__(self) -> str:
        return f"{self.kind} {self.text!r}"


class LeakChecker:
    def __init__(self, universe: ToolUniverse) -> None:
        self.tool_ids = sorted(universe.tools, key=len, reverse=True)
        names = sorted({t.name for t in universe.tools.values()}, key=len, reverse=True)
        self.compound_names = [n for n in names if re.search(r"[_\-]|[a-z][A-Z]", n)]
        self.word_names = [n for n in names if n not in self.compound_names and len(n) > 2]
        self.servers = universe.servers()
        self.categories = {t.server: (t.category or "") for t in universe.tools.values()}
        self._word_code = _code_pattern(self.word_names)
        self._generic = _code_pattern([s for s in self.servers if s.lower() in GENERIC_WORDS])
        distinct = [s for s in self.servers if s.lower() not in GENERIC_WORDS]
        self._distinct = _any_word(distinct)
        self._tool_words: dict[str, str] | None = None

    def leaks(self, text: str) -> list[Leak]:
        found: list[Leak] = []
        lowered = text.lower()
        found += [Leak("tool id", t) for t in self.tool_ids if t.lower() in lowered]
        tokens = {t.lower() for t in RUN.findall(text)}  # a set look-up per name: thousands of harvested names
        found += [
            Leak("tool name", n)
            for n in self.compound_names
            if (n.lower() in tokens if RUN.fullmatch(n) else _word_in(n, text))
        ]
        found += [Leak("identifier", m.group(0)) for m in SNAKE.finditer(text)]
        found += [Leak("identifier", m.group(0)) for m in CAMEL.finditer(text)]
        found += [Leak("tool name", m.group("name")) for m in _finditer(self._word_code, text)]
        found += [Leak("server name", m.group("name")) for m in _finditer(self._generic, text)]
        found += [Leak("server name", m.group(0)) for m in _finditer(self._distinct, text)]
        return list(dict.fromkeys(found))

    def tools_named(self, text: str) -> list[str]:
        """The tool ids and compound tool names `text` holds as words: a set look-up per token, since a
        scenario has thousands of strings to scan (one alternation of every name is far slower)."""
        if self._tool_words is None:
            self._tool_words = {t.lower(): t for t in self.tool_ids} | {
                n.lower(): n for n in self.compound_names
            }
        found = []
        for token in TOKEN.findall(text):
            for word in (token, *token.split("/")) if "/" in token else (token,):
                hit = self._tool_words.get(word.lower())
                if hit is not None and ("/" in hit) == ("/" in word):
                    found.append(hit)
        return list(dict.fromkeys(found))

    def rewrite(self, text: str) -> str:
        """Replace every leaked name with plain words: ids and identifiers lose their punctuation,
        server names become the kind of service they are."""
        out = text
        for tool_id in self.tool_ids:
            if tool_id.lower() not in out.lower():
                continue
            server, name = tool_id.split("/", 1)
            out = re.sub(
                re.escape(tool_id), f"{_words(name)} in {self.phrase(server)}", out, flags=re.IGNORECASE
            )
        out = re.sub(r"`([^`]+)`", r"\1", out)
        out = SNAKE.sub(lambda m: _words(m.group(0)), out)
        out = CAMEL.sub(lambda m: _words(m.group(0)), out)
        out = _sub(self._word_code, out, lambda m: m.group("name"))
        out = _sub(self._generic, out, lambda m: f"{m.group('name')} service")
        out = _sub(self._distinct, out, lambda m: self.phrase(_server_named(m.group(0), self.servers)))
        return re.sub(r"\s{2,}", " ", out).strip()

    def phrase(self, server: str) -> str:
        category = self.categories.get(server, "").replace("_", " ").strip()
        if server.lower() in GENERIC_WORDS:
            return f"the {server} service"
        return f"the {category} service" if category else "that service"


def _words(identifier: str) -> str:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", identifier)
    return re.sub(r"[_\-/]+", " ", spaced).lower().strip()


def _word_in(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w\-]){re.escape(name)}(?![\w\-])", text, flags=re.IGNORECASE) is not None


def _server_named(found: str, servers: list[str]) -> str:
    key = re.sub(r"[\s_\-]+", "", found.lower())
    return next((s for s in servers if re.sub(r"[\s_\-]+", "", s.lower()) == key), found)


def _code_pattern(names: list[str]) -> re.Pattern[str] | None:
    """`name` as code: in backticks, called with `(` (`search(`; the prose `the result (it reads: ...)` keeps
    its bracket), after use/call/run, before tool/api/server, or `name/`.
    """
    if not names:
        return None
    alt = "|".join(re.escape(n) for n in names)
    return re.compile(
        rf"`(?P<name>{alt})`|\b(?P<name2>{alt})\("
        rf"|\b(?:use|call|run|invoke)\s+(?:the\s+)?(?P<name3>{alt})\b"
        rf"|\b(?P<name4>{alt})\s+{CODE_WORDS}\b|\b(?P<name5>{alt})/\w",
        flags=re.IGNORECASE,
    )


def _any_word(servers: list[str]) -> re.Pattern[str] | None:
    if not servers:
        return None
    alt = "|".join(r"[\s_\-]?".join(re.escape(p) for p in re.split(r"[_\-]+", s)) for s in servers)
    return re.compile(rf"(?<![\w\-])(?:{alt})(?![\w\-])", flags=re.IGNORECASE)


class _Named:
    """A match whose `group('name')` is whichever alternative of a code pattern matched."""

    def __init__(self, match: re.Match[str]) -> None:
        self.match = match

    def group(self, key: str | int = 0) -> str:
        if key == "name":
            groups = self.match.groupdict()
            return next((v for k, v in groups.items() if k.startswith("name") and v), self.match.group(0))
        return self.match.group(key)


def _finditer(pattern: re.Pattern[str] | None, text: str) -> list[_Named]:
    return [] if pattern is None else [_Named(m) for m in pattern.finditer(text)]


def _sub(pattern: re.Pattern[str] | None, text: str, fn) -> str:  # type: ignore[no-untyped-def]
    if pattern is None:
        return text
    return pattern.sub(lambda m: fn(_Named(m)), text)


# --- scenarios ----------------------------------------------------------------------------------------------
REFERENCE = re.compile(r"\{\{|\}\}")
#: Words that belong to solving the task, not to the world: a note saying them is about the plan.
PLAN_WORDS = re.compile(
    r"\b(?:final answer|the answer|gold plan|the agent|the assistant|tool calls?|should (?:call|use|reply|answer)"
    r"|step \w+)\b",
    flags=re.IGNORECASE,
)
HINT_WORDS = 4


def scenario_leaks(
    checker: LeakChecker, scenario: Scenario, *, step_ids: list[str], hints: list[str]
) -> list[str]:
    """Why a scenario is not facts-only: it names a tool, holds a `{{...}}` reference or a plan step id,
    speaks of the answer, or repeats a final-answer hint sentence. The engine reads the scenario, so
    anything of the plan in it would let the world answer for the agent."""
    problems: list[str] = []
    fragments = _hint_fragments(hints)
    ids = [s for s in step_ids if re.search(r"[\d_\-]", s)]
    step_words = _any_of(ids)
    for where, text, free in _scenario_strings(scenario):
        if REFERENCE.search(text):
            problems.append(f"{where} holds a reference {text[:60]!r}")
        problems += [f"{where} names the tool {t!r}" for t in checker.tools_named(text)]
        if text in ids or (free and step_words is not None and step_words.search(text)):
            problems.append(f"{where} names a plan step ({text[:60]!r})")
        if free and PLAN_WORDS.search(text):
            problems.append(f"{where} speaks of solving the task ({text[:60]!r}): state facts only")
        if fragments:
            lowered = text.lower()
            problems += [f"{where} repeats the answer hint {f!r}" for f in fragments if f in lowered]
    return list(dict.fromkeys(problems))


def _any_of(words: list[str]) -> re.Pattern[str] | None:
    if not words:
        return None
    alt = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![\w\-])(?:{alt})(?![\w\-])", flags=re.IGNORECASE)


def _hint_fragments(hints: list[str]) -> list[str]:
    """The literal runs of the hints (references cut out) long enough to be a sentence of the answer."""
    runs = [part for hint in hints for part in re.split(r"\{\{.*?\}\}", hint)]
    return [r.strip().lower() for r in runs if len(r.split()) >= HINT_WORDS]


def _scenario_strings(scenario: Scenario) -> list[tuple[str, str, bool]]:
    """(where, text, free) for every string; `free` marks the drafter's own words (notes, relation and kind
    names), as against record values copied from the world."""
    found: list[tuple[str, str, bool]] = []
    for i, note in enumerate(scenario.notes):
        found.append((f"note {i + 1}", note, True))
    for e in scenario.entities:
        found += [(f"entity {e.handle}", s, False) for s in (e.app, e.kind, str(e.id))]
        for key, value in _flat(e.attributes):
            found += [(f"entity {e.handle}", key, False), (f"entity {e.handle}", value, False)]
    for r in scenario.relations:
        found.append((f"relation {r.subject} {r.relation}", r.relation, True))
    return [f for f in found if f[1]]


def _flat(value: object, key: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _flat(v, str(k))]
    if isinstance(value, list):
        return [pair for v in value for pair in _flat(v, key)]
    return [(key, value if isinstance(value, str) else "")]
