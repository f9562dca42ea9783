"""Reading a request the way a rule-based planner does: intents (clauses) and the facts they state.

Text only: the query, the constraints as stated and the user's later messages, never a task's answer key.
An intent is a clause that asks for something ("add it to my 'Ideas' watchlist"); its facts are what a
tool argument can be filled from: quoted strings, names, e-mail addresses, labelled values
("PIN 8910", "password juniper58!"), amounts, counts with their unit ("5 trading days", "45-minute"),
dates ("Friday 20 March, 12:00 UTC") and currency codes. What the person dictates is kept apart: a
record `titled "..."`, a text `saying "..."`, and named values (`rate '92'`, `due date 2026-07-18`), so a write
can be filled with the very words asked for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z'\"])")
_CLAUSE = re.compile(r",\s+(?:and|then)\s+|;\s+|:\s+(?=[a-z])|\s+and\s+(?=(?:leave|add|append|comment|post|send)\s)")
"""Where a sentence splits into clauses: `, and`, `;`, a colon before a lower-case word, and ` and ` before a
second write (`move its due date to Friday and leave a comment saying ...`)."""
_QUOTED = re.compile(r"(?<![A-Za-z0-9])'([^']{2,80}?)'(?![A-Za-z])|\"([^\"]{2,80}?)\"")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_LABELLED = re.compile(r"\b(password|pin|customer id|customer|passcode|username|user name|handle|account)"
                       r"(?:\s+(?:is|number|id))?\s*[:=]?\s+([^\s,;()]+)", re.IGNORECASE)
_NAME = re.compile(r"\b([A-Z][a-z]+(?:-[a-z]+)?(?:[ '-](?:[A-Z][a-z'A-Z]+(?:-[a-z]+)?|\d+(?![.,]\d)))+)\b")
"""Capitalised words in a row (`Seo-yeon Murray`, `Robotek Automation`, `Q3`-free)."""
_AMOUNT = re.compile(r"(?<![\w.-])(\d{1,3}(?:,\d{3})*\.\d{1,2}|\d+\.\d{1,2})(?![\w.])")
_COUNT = re.compile(r"(?<![\w.])(\d{1,4})(?:-|\s+)(?:([a-z]+)\s+)?([a-z]+)", re.IGNORECASE)
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_DATE = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + "|".join(m.title() for m in _MONTHS) + r")\b"
                   r"(?:,?\s+(\d{4}))?(?:[^.;]{0,12}?\b(\d{1,2}):(\d{2}))?")
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_PROPER = re.compile(r"(?<=[a-z,] )([A-Z][a-z]{2,})\b")
_TAG = re.compile(r"(?<![\w#])#([\w-]{2,40})")
_DICTATED = re.compile(r"\b(titled|saying|with the note)\s+\"([^\"]*)\"")
#: `with X the name of the one the rule picks`, `with X, Y the names of what the rule picks`
_PICKED = re.compile(r"\bwith ([A-Z](?:, [A-Z])*) the names? of (?:the one|what) the rule picks")
#: `with V the status you find`
_FOUND = re.compile(r"\bwith ([A-Z]) the ([a-z][a-z ]{0,40}?) you find\b")
_TALLY = re.compile(r"\b(?:how many|count)\b[^?.;]*?\b(?:have|has|whose|with)\s+([a-z][a-z ]{0,30}?)\s+(?:is\s+)?"
                    r"'([^']{1,60})'", re.IGNORECASE)
_FIELD = re.compile(r"\b([a-z][a-z]*(?: [a-z]+){0,2}) (?:'([^']{1,80})'|(\d{4}-\d{2}-\d{2}(?:T[\d:.]+(?:Z|[+-]\d\d:\d\d)?)?))")
_CAP = re.compile(r"\b(?:more than|at most|under|below|less than|up to)\s+([\d,]+(?:\.\d+)?)\b([^.;]{0,40})", re.I)
"""A limit the person sets (`without paying more than 243.10 a night`): the amount and the words after it."""
_CURRENCIES = {"usd": "USD", "eur": "EUR", "gbp": "GBP", "jpy": "JPY", "chf": "CHF", "cad": "CAD", "aud": "AUD",
               "dollars": "USD", "euros": "EUR", "pounds": "GBP", "yen": "JPY", "francs": "CHF"}
_NOT_NAMES = {"Please", "Could", "Can", "Also", "Next", "After", "Then", "When", "Let", "Report", "Make", "Give",
              "I", "My", "The", "Once", "Finally", "First", "Look", "Send", "Set", "Put", "Track", "Find",
              "Email", "Ping", "Post", "Share", "Write", "Keep", "Remind", "Pay", "Order", "Book", "Add"}
_CHATTER = re.compile(r"^(please|could you|can you|i'm|i am|let me know|report back|tell me|give me|thanks|thank you|"
                      r"take care|do all of this|help me)\b", re.IGNORECASE)
_SUBJECT = re.compile(r"^(i|i'm|i've|i'd|we|we're|we've|our|my|there|there's|here's|it|this|that|the|two|time|money|"
                      r"what|something)\b", re.IGNORECASE)
"""How a sentence about the person's situation opens ("We're moving records between tools.")."""
_CONDITION = re.compile(r"^(?:when|if)\s+(?:its|the|their)\s+([a-z][a-z ]{0,40}?)\s+is\s+'([^']{1,60})',\s*", re.I)
_OTHERWISE = re.compile(r"^(?:if not|otherwise|else)\b,?\s*", re.IGNORECASE)
_PICK = re.compile(r"\bwith the (earliest|oldest|latest|newest|highest|lowest|largest|smallest) ([a-z]+(?: [a-z]+){0,2}?)"
                   r"(?=[:,.;]|\s+(?:among|in|of|from|on|and|then|-)\b|$)", re.IGNORECASE)
_AT_MOST = re.compile(r"\b(?:whose|with)\s+([a-z][a-z ]{1,30}?)\s+is\s+at most\s+([\d,]+(?:\.\d+)?)|"
                      r"at most\s+([\d,]+(?:\.\d+)?)\s+\(([a-z][a-z ]{1,30})\)", re.IGNORECASE)


@dataclass(frozen=True)
class DateFact:
    day: int
    month: int
    year: int | None = None
    hour: int | None = None
    minute: int = 0


@dataclass
class Facts:
    quoted: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    emails: list[str] = field(default_factory=list)
    labelled: dict[str, str] = field(default_factory=dict)
    amounts: list[float] = field(default_factory=list)
    counts: list[tuple[int, str]] = field(default_factory=list)
    """(number, the word after it): (5, "trading"), (45, "minute")."""
    dates: list[DateFact] = field(default_factory=list)
    currencies: list[str] = field(default_factory=list)
    times: list[tuple[int, int]] = field(default_factory=list)
    proper: list[str] = field(default_factory=list)
    """Single capitalised words inside a sentence: places, folders ("from Chicago", "under Team")."""
    tags: list[str] = field(default_factory=list)
    """Channel-like names written with '#'."""
    titled: list[str] = field(default_factory=list)
    """What a record is to be called, as dictated: `titled "Q3 budget review"`."""
    saying: list[str] = field(default_factory=list)
    """What a record or message is to say, as dictated: `saying "Moved to Friday."`."""
    tally: tuple[str, str] | None = None
    """What the person asks to count: `how many ... have state 'ACTIVE'` -> ("state", "ACTIVE")."""
    fields: dict[str, str] = field(default_factory=dict)
    """Values named by what they are: `rate '92'` -> {"rate": "92"}, `due date 2026-07-18` -> {"due date": ...}."""
    years: list[int] = field(default_factory=list)
    """Years of the ISO dates the request writes (`Moved the due date to 2026-05-06.`)."""
    caps: list[tuple[float, set[str]]] = field(default_factory=list)
    """Limits the person sets, each with the words of its sentence: (243.1, {"paying", "night", ...})."""
    letters: dict[str, str] = field(default_factory=dict)
    """What a dictated letter stands for, the agent's to work out: `with X the name of the one the rule
    picks` -> {"X": "picked"}, `with V the status you find` -> {"V": "status"} (a field it reads)."""

    @property
    def empty(self) -> bool:
        return not (self.quoted or self.names or self.emails or self.labelled or self.amounts or self.dates
                    or self.currencies or self.tags or self.proper)

    def entities(self) -> list[str]:
        """What a search argument would look for, most specific first."""
        return list(dict.fromkeys([*self.quoted, *self.tags, *self.names, *self.proper]))


_SYNONYMS = {"meeting": "event", "email": "mail send", "buy": "cart checkout order", "order": "checkout",
             "message": "send", "dm": "direct message", "pay": "transfer", "payment": "transfer", "send": "send",
             "book": "book reserve", "remind": "reminder", "note": "document", "watchlist": "watchlist add",
             "moved": "history change", "changed": "history change", "price": "quote", "due": "due date",
             "track": "card", "follow-up": "card create",
             "nights": "book reserve", "stay": "book reserve", "draft": "create draft", "owner": "assign member", "assign": "member"}
_PARENS = re.compile(r"\([^)]*\)")


@dataclass(frozen=True)
class Condition:
    """`when its status is 'open', ...`: the clause is done only if the record's field holds the value;
    `otherwise` marks the clause done only if it does not."""

    field: str
    value: str
    otherwise: bool = False


@dataclass(frozen=True)
class Rule:
    """How the clause picks one record among those listed: the extreme of a field (`the one with the
    earliest created at`), or the one within a limit (`whose price is at most 26.99`)."""

    field: str
    highest: bool
    limit: float | None = None


@dataclass
class Intent:
    text: str
    facts: Facts
    words: set[str]
    condition: Condition | None = None
    rule: Rule | None = None

    @property
    def ask(self) -> str:
        """What to rank tools with: the clause without its parentheses, plus common synonyms of its words."""
        core = _PARENS.sub(" ", _DICTATED.sub(" ", self.text))
        extra = [_SYNONYMS[w] for w in re.findall(r"[a-z-]+", core.lower()) if w in _SYNONYMS]
        if self.facts.tags:  # "#onboarding" names a channel to post in
            extra.append("channel post message")
        return " ".join([core, *extra])


def facts_of(text: str) -> Facts:
    facts = Facts()
    facts.years = [int(y) for y in re.findall(r"\b(20\d\d)-\d\d-\d\d", text)]
    for how, value in _DICTATED.findall(text):
        (facts.titled if how == "titled" else facts.saying).append(value)
    text = _DICTATED.sub(" ", text)
    for letters in _PICKED.findall(text):
        facts.letters.update(dict.fromkeys(re.findall(r"[A-Z]", letters), "picked"))
    for letter, field_words in _FOUND.findall(text):
        facts.letters[letter] = field_words.strip().lower()
    asked = _TALLY.search(text)
    facts.tally = (asked.group(1).strip().lower(), asked.group(2)) if asked else None
    for words, quoted, day in _FIELD.findall(text):
        facts.fields.setdefault(words, quoted or day)
    facts.quoted = [a or b for a, b in _QUOTED.findall(text)]
    facts.emails = _EMAIL.findall(text)
    for sentence in _SENTENCE.split(text):
        facts.caps += [(float(m.group(1).replace(",", "")), words_of(sentence)) for m in _CAP.finditer(sentence)]
    for label, value in _LABELLED.findall(text):
        value = value.rstrip(".,;)")
        if any(ch.isdigit() for ch in value) or label.lower() == "password" and not value.isalpha():
            facts.labelled.setdefault(_label(label), value)
    unquoted = _QUOTED.sub(" ", text)
    facts.names = [n for n in map(_name_of, _NAME.findall(unquoted)) if n and not _is_date(n)]
    facts.amounts = [float(a.replace(",", "")) for a in _AMOUNT.findall(text)]
    for n, word, unit in _COUNT.findall(_AMOUNT.sub(" ", text)):  # "45-minute meeting": minute and meeting
        facts.counts += [(int(n), unit.lower())] + ([(int(n), word.lower())] if word else [])
    facts.times = [(int(h), int(m)) for h, m in _TIME.findall(text)]
    facts.dates = [_date(m, facts.times) for m in _DATE.finditer(text)]
    facts.tags = _TAG.findall(text)
    in_names = {w for n in facts.names for w in n.split()}
    facts.proper = [w for w in _PROPER.findall(unquoted) if w not in in_names and w not in _NOT_NAMES
                    and w.lower() not in _MONTHS and w.lower() not in _CURRENCIES and not _is_weekday(w)]
    facts.currencies = list(dict.fromkeys(_CURRENCIES[w.lower()] for w in re.findall(r"[A-Za-z]+", text)
                                          if w.lower() in _CURRENCIES and (w.isupper() or w.islower())))
    return facts


def intents_of(text: str) -> list[Intent]:
    """The clauses of `text` that ask for something; chatter without a fact ("Let me know ...") is dropped.
    A clause that names nothing ("give it a new due date") refers to what the clause before named. A
    dictated text is never split: it may hold full stops and semicolons of its own."""
    out: list[Intent] = []
    dictated: list[str] = []

    def hold(match: re.Match[str]) -> str:
        dictated.append(match.group(0))
        ends = "." if match.group(2).rstrip()[-1:] in (".", "!", "?") else ""  # `saying "Moved it." Then ...`
        return f"\x00{len(dictated) - 1}\x00{ends}"

    masked = _DICTATED.sub(hold, text.strip())
    first = True
    for sentence in _SENTENCE.split(masked):
        for piece in _clauses(sentence):
            clause = re.sub("\x00(\\d+)\x00", lambda m: dictated[int(m.group(1))], piece).strip()
            if len(clause.split()) < 3:
                continue
            facts = facts_of(clause)
            background = first and _SUBJECT.match(clause) is not None
            if (_CHATTER.match(clause) or background) and facts.empty:
                if out:  # what a dropped clause dictates is for the write the clause before asks for
                    _hand_over(facts, out[-1].facts)
                continue
            if out and not facts.entities():
                facts.quoted, facts.names = list(out[-1].facts.quoted), list(out[-1].facts.names)
            out.append(Intent(clause, facts, words_of(clause), _condition(clause, out), _rule(clause)))
        first = False
    _share_branches(out)
    return out


def _clauses(sentence: str) -> list[str]:
    """The sentence's clauses; a heading that states no fact stays with what follows its colon ("Go
    through the queue and take the oldest: close it")."""
    pieces = _CLAUSE.split(sentence)
    colons = [m.group(0).startswith(":") for m in _CLAUSE.finditer(sentence)]
    out: list[str] = []
    for i, piece in enumerate(pieces):
        if out and colons[i - 1] and facts_of(out[-1]).empty:
            out[-1] = f"{out[-1]}: {piece}"
        else:
            out.append(piece)
    return out


def _hand_over(source: Facts, target: Facts) -> None:
    target.titled += source.titled
    target.saying += source.saying
    for key, value in source.fields.items():
        target.fields.setdefault(key, value)


def _condition(clause: str, before: list[Intent]) -> Condition | None:
    match = _CONDITION.match(clause)
    if match:
        return Condition(match.group(1).strip(), match.group(2))
    if _OTHERWISE.match(clause) and before and before[-1].condition is not None:
        return Condition(before[-1].condition.field, before[-1].condition.value, otherwise=True)
    return None


def _share_branches(intents: list[Intent]) -> None:
    """The two branches of a condition make the same follow-up: what one is dictated, the other is too."""
    for a, b in zip(intents, intents[1:], strict=False):
        if a.condition and b.condition and b.condition.otherwise and not a.condition.otherwise:
            shared = Facts()
            _hand_over(a.facts, shared)
            _hand_over(b.facts, shared)
            for branch in (a, b):
                branch.facts.titled, branch.facts.saying = list(shared.titled), list(shared.saying)
                for key, value in shared.fields.items():
                    branch.facts.fields.setdefault(key, value)


def _rule(clause: str) -> Rule | None:
    match = _PICK.search(clause)
    if match:
        return Rule(match.group(2).strip().lower(), match.group(1).lower() in ("latest", "newest", "highest", "largest"))
    match = _AT_MOST.search(clause)
    if match:
        field_name = (match.group(1) or match.group(4)).strip().lower()
        return Rule(field_name, False, float((match.group(2) or match.group(3)).replace(",", "")))
    return None


def words_of(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 1}


def _label(label: str) -> str:
    label = label.lower().replace(" ", "_")
    return {"customer": "customer_id", "user_name": "username", "passcode": "pin"}.get(label, label)


def _name_of(words: str) -> str:
    """A name without the verb that opens its sentence ("Email Liam Garcia" -> "Liam Garcia"); "" if none."""
    parts = words.split()
    while parts and parts[0] in _NOT_NAMES:
        parts = parts[1:]
    return " ".join(parts) if len(parts) > 1 else ""


def _is_date(name: str) -> bool:
    return any(part.lower() in _MONTHS for part in name.split())


def _is_weekday(word: str) -> bool:
    return word.lower() in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _date(match: re.Match[str], times: list[tuple[int, int]]) -> DateFact:
    """A day and month; the hour written beside it, else the clause's one time of day (\"18:00 ... on 4 May\")."""
    day, month, year, hour, minute = match.groups()
    if hour is None and len(times) == 1:
        hour, minute = str(times[0][0]), str(times[0][1])
    return DateFact(int(day), _MONTHS.index(month.lower()) + 1, int(year) if year else None,
                    int(hour) if hour else None, int(minute) if minute else 0)
