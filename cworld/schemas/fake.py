"""Realistic building blocks from Faker: people, companies, places, phrases, drawn from the caller's RNG.

Why a library rather than word lists: a dozen hand-written names and words repeat within one page of
results and read as word salad ("Roadmap audit release invoice meeting"); Faker's providers hold
thousands of names, companies, streets and real places (a city with its country, coordinates and time
zone), so values vary and each part fits the others.

Determinism: `fake(rng)` reseeds one Faker instance (per thread, locale en_US) from `rng` with
`seed_instance`, so the same RNG state gives the same values and every purpose's RNG (`derive_rng`) keeps
its own stream. The values drawn most (names, companies, phrases, words) are drawn by `rng` itself from
Faker's en_US tables, weights included: the same values, without Faker's per-call weight sums, which
cost more than the rest of an answer.
"""

from __future__ import annotations

import random
import re
import threading
from dataclasses import dataclass
from functools import cache
from itertools import accumulate

from faker import Faker
from faker.providers.company.en_US import Provider as CompanyProvider
from faker.providers.date_time import Provider as DateTimeProvider
from faker.providers.geo import Provider as GeoProvider
from faker.providers.job.en_US import Provider as JobProvider
from faker.providers.lorem.en_US import Provider as LoremProvider
from faker.providers.person.en_US import Provider as PersonProvider

_LOCAL = threading.local()


def fake(rng: random.Random) -> Faker:
    """The thread's Faker, reseeded from `rng`: what it draws next depends on `rng`'s state only."""
    gen: Faker | None = getattr(_LOCAL, "faker", None)
    if gen is None:
        gen = _LOCAL.faker = Faker("en_US")
    gen.seed_instance(rng.getrandbits(64))
    return gen


class _Weighted:
    """A Faker table of values with weights (first names by frequency), drawn in O(log n)."""

    def __init__(self, table: dict[str, float]) -> None:
        self.values = list(table)
        self.cumulative = list(accumulate(table.values()))

    def draw(self, rng: random.Random) -> str:
        return rng.choices(self.values, cum_weights=self.cumulative)[0]


_FIRST = _Weighted(PersonProvider.first_names)  # type: ignore[arg-type]
_LAST = _Weighted(PersonProvider.last_names)  # type: ignore[arg-type]
#: Faker's en_US tables as sequences (its stubs type them as collections).
_WORDS: tuple[str, ...] = tuple(LoremProvider.word_list)
_JOBS: tuple[str, ...] = tuple(JobProvider.jobs)
_COMPANY_FORMATS: tuple[str, ...] = tuple(CompanyProvider.formats)
_SUFFIXES: tuple[str, ...] = tuple(CompanyProvider.company_suffixes)
_CATCH: tuple[tuple[str, ...], ...] = tuple(tuple(part) for part in CompanyProvider.catch_phrase_words)
_BS: tuple[tuple[str, ...], ...] = tuple(tuple(part) for part in CompanyProvider.bsWords)


def first_name(rng: random.Random) -> str:
    return _FIRST.draw(rng)


def last_name(rng: random.Random) -> str:
    return _LAST.draw(rng)


def words(rng: random.Random, count: int) -> list[str]:
    return [rng.choice(_WORDS) for _ in range(count)]


def sentence(rng: random.Random, count: int = 8) -> str:
    """Faker's lorem sentence: `count` +-40% words, capitalised, with a full stop."""
    picked = words(rng, max(1, round(count * rng.uniform(0.6, 1.4))))
    text = " ".join(picked)
    return text[0].upper() + text[1:] + "."


def paragraph(rng: random.Random, sentences: int = 2) -> str:
    return " ".join(sentence(rng) for _ in range(sentences))


def job(rng: random.Random) -> str:
    return str(rng.choice(_JOBS))


def catch_phrase(rng: random.Random) -> str:
    """ "Robust full-range hub": a product or a company motto."""
    return " ".join(rng.choice(part) for part in _CATCH)


@dataclass(frozen=True)
class Place:
    """A real place: the city, its own country, where it lies and its time zone."""

    city: str
    country: str
    country_code: str
    latitude: float
    longitude: float
    timezone: str


@cache
def _places() -> tuple[Place, ...]:
    """Faker's real places on land whose country it can name (its table has ~970, in ~130 countries)."""
    names = {c.alpha_2_code: _repaired(c.name) for c in DateTimeProvider.countries}
    return tuple(Place(city, names[cc], cc, float(lat), float(lon), tz)
                 for lat, lon, city, cc, tz in GeoProvider.land_coords if cc in names)


def _repaired(text: str) -> str:
    """Faker's country table has a mis-decoded name or two ("CÃ´te d'Ivoire")."""
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


@cache
def _country_of_city() -> dict[str, str]:
    return {p.city.lower(): p.country for p in _places()}


def place(rng: random.Random) -> Place:
    return rng.choice(_places())


def country_of(city: str) -> str | None:
    """The country of a city Faker knows (`Lisbon` is not one of them; `Jingzhou` is)."""
    return _country_of_city().get(city.strip().lower())


@dataclass(frozen=True)
class Person:
    """Someone at a company: their email is their name at the company's domain."""

    first_name: str
    last_name: str
    company: str
    job: str
    phone: str

    @property
    def name(self) -> str:
        return f"{self.first_name} {self.last_name}"

    @property
    def email(self) -> str:
        return email_for(self.name, self.company)


def person(rng: random.Random) -> Person:
    return Person(first_name(rng), last_name(rng), company(rng), job(rng), phone(rng))


def company(rng: random.Random) -> str:
    """Faker's en_US company formats ("Kelly-Torres", "Nguyen LLC")."""
    form = rng.choice(_COMPANY_FORMATS)
    form = form.replace("{{company_suffix}}", rng.choice(_SUFFIXES))
    while "{{last_name}}" in form:
        form = form.replace("{{last_name}}", last_name(rng), 1)
    return form


def phone(rng: random.Random) -> str:
    """A North American number in one format (Faker's own mixes formats and extensions)."""
    return f"+1-{rng.randint(201, 989)}-{rng.randint(200, 999)}-{rng.randint(0, 9999):04d}"


def slug(text: str, sep: str = "-") -> str:
    return sep.join(re.findall(r"[a-z0-9]+", text.lower()))


def domain_of(company_name: str) -> str:
    """`Kelly-Torres` -> kelly-torres.com; `Stewart, Olson and Bush` -> stewart-olson.com."""
    words = [w for w in re.findall(r"[A-Za-z0-9]+", company_name) if w.lower() not in {"and", "the"}]
    stem = slug(" ".join(words[:2])) or "example"
    return f"{stem}.com"


def email_for(name: str, company_name: str | None = None, domain: str | None = None) -> str:
    """first.last@domain: what a person's work address looks like."""
    local = slug(" ".join(name.split()[:1] + name.split()[-1:]), ".") or "info"
    return f"{local}@{domain or domain_of(company_name or 'example')}"


def short_sentence(rng: random.Random) -> str:
    """A short business line ("Streamline collaborative e-markets"), for a subject or a card title."""
    text = " ".join(rng.choice(part) for part in _BS)
    return text[0].upper() + text[1:]
