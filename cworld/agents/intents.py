"""Reading a request the way a rule-based planner does: intents (clauses) and the facts they state.

Text only: the query, the constraints as stated and the user's later messages, never a task's answer key.
An intent is a clause that asks for something ("add it to my 'Ideas' watchlist"); its facts are what a
tool argument can be filled from: quoted strings, names, e-mail addresses, labelled values
("PIN 8910", "password juniper58!"), amounts, counts with their unit ("5 trading days", "45-minute"),
dates ("Friday 20 March, 12:00 UTC") and currency codes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z'\"])")
_CLAUSE = re.compile(r",\s+and\s+|;\s+|:\s+(?=[a-z])")
_QUOTED = re.compile(r"(?<![A-Za-z0-9])'([^']{2,80}?)'(?![A-Za-z])|\"([^\"]{2,80}?)\"")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_LABELLED = re.compile(r"\b(password|pin|customer id|customer|passcode|username|user name|handle|account)"
                       r"(?:\s+(?:is|number|id))?\s*[:=]?\s+([^\s,;()]+)", re.IGNORECASE)
_NAME = re.compile(r"\b([A-Z][a-z]+(?:[ '-](?:[A-Z][a-z'A-Z]+|\d+))+)\b")
_AMOUNT = re.compile(r"(?<![\w.-])(\d{1,3}(?:,\d{3})*\.\d{1,2}|\d+\.\d{1,2})(?![\w.])")
_COUNT = re.compile(r"(?<![\w.])(\d{1,4})(?:-|\s+)(?:[a-z]+\s+)?([a-z]+)", re.IGNORECASE)
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_DATE = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + "|".join(m.title() for m in _MONTHS) + r")\b"
                   r"(?:,?\s+(\d{4}))?(?:[^.;]{0,12}?\b(\d{1,2}):(\d{2}))?")
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_PROPER = re.compile(r"(?<=[a-z,] )([A-Z][a-z]{2,})\b")
_TAG = re.compile(r"(?<![\w#])#([\w-]{2,40})")
_CURRENCIES = {"usd": "USD", "eur": "EUR", "gbp": "GBP", "jpy": "JPY", "chf": "CHF", "cad": "CAD", "aud": "AUD",
               "dollars": "USD", "euros": "EUR", "pounds": "GBP", "yen": "JPY", "francs": "CHF"}
_NOT_NAMES = {"Please", "Could", "Can", "Also", "Next", "After", "Then", "When", "Let", "Report", "Make", "Give",
              "I", "My", "The", "Once", "Finally", "First", "Look", "Send", "Set", "Put", "Track", "Find"}
_CHATTER = re.compile(r"^(please|could you|can you|i'm|i am|let me know|report back|tell me when|thanks|thank you|"
                      r"take care|do all of this|help me)\b", re.IGNORECASE)


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

    @property
    def empty(self) -> bool:
        return not (self.quoted or self.names or self.emails or self.labelled or self.amounts or self.dates
                    or self.currencies or self.tags or self.proper)

    def entities(self) -> list[str]:
        """What a search argument would look for, most specific first."""
        return list(dict.fromkeys([*self.quoted, *self.tags, *self.names, *self.proper]))


_SYNONYMS = {"meeting": "event", "email": "mail draft", "buy": "cart checkout order", "order": "checkout",
             "message": "send", "dm": "direct message", "pay": "transfer", "payment": "transfer", "send": "send",
             "book": "book reserve", "remind": "reminder", "note": "document", "watchlist": "watchlist add",
             "moved": "history change", "changed": "history change", "price": "quote", "due": "due date",
             "track": "card", "follow-up": "card create"}
_PARENS = re.compile(r"\([^)]*\)")


@dataclass
class Intent:
    text: str
    facts: Facts
    words: set[str]

    @property
    def ask(self) -> str:
        """What to rank tools with: the clause without its parentheses, plus common synonyms of its words."""
        core = _PARENS.sub(" ", self.text)
        extra = [_SYNONYMS[w] for w in re.findall(r"[a-z-]+", core.lower()) if w in _SYNONYMS]
        return " ".join([core, *extra])


def facts_of(text: str) -> Facts:
    facts = Facts()
    facts.quoted = [a or b for a, b in _QUOTED.findall(text)]
    facts.emails = _EMAIL.findall(text)
    for label, value in _LABELLED.findall(text):
        value = value.rstrip(".,;)")
        if any(ch.isdigit() for ch in value) or label.lower() == "password":
            facts.labelled.setdefault(_label(label), value)
    unquoted = _QUOTED.sub(" ", text)
    facts.names = [n for n in _NAME.findall(unquoted) if n.split()[0] not in _NOT_NAMES and not _is_date(n)]
    facts.amounts = [float(a.replace(",", "")) for a in _AMOUNT.findall(text)]
    facts.counts = [(int(n), unit.lower()) for n, unit in _COUNT.findall(_AMOUNT.sub(" ", text))]
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
    A clause that names nothing ("give it a new due date") refers to what the clause before named."""
    out: list[Intent] = []
    for sentence in _SENTENCE.split(text.strip()):
        for clause in _CLAUSE.split(sentence):
            clause = clause.strip()
            if len(clause.split()) < 3:
                continue
            facts = facts_of(clause)
            if _CHATTER.match(clause) and facts.empty:
                continue
            if out and not facts.entities():
                facts.quoted, facts.names = list(out[-1].facts.quoted), list(out[-1].facts.names)
            out.append(Intent(clause, facts, words_of(clause)))
    return out


def words_of(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 1}


def _label(label: str) -> str:
    label = label.lower().replace(" ", "_")
    return {"customer": "customer_id", "user_name": "username", "passcode": "pin"}.get(label, label)


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
