"""Values by what a field means inside its record: one person, one place, one kind of thing per record.

A record's fields are drawn together, not one by one: a contact's `name`, `email`, `company` and `phone`
belong to one person (first.last@their-company.com); an address's `city` and `country` are one real
place; a knowledge-graph entity's `name` and `observations` follow its `entityType` (a person is named
like a person and works somewhere); a hotel is named like a hotel. `RecordContext` holds what a record
has drawn so far; `harmonize` makes generated fields agree with the ones a record already has.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from cworld.schemas.fake import (
    Person,
    Place,
    catch_phrase,
    company,
    country_of,
    email_for,
    fake,
    last_name,
    paragraph,
    person,
    phone,
    place,
    sentence,
    short_sentence,
    slug,
    words,
)

#: Fields of kind `name` that name the record's own person (other `name` fields - owner, author,
#: organizer - are other people).
SELF_NAMES = re.compile(r"^(name|full_name|display_name|first_name|last_name|given_name|family_name|surname|"
                        r"recipient|holder|patient|contact_name)$")
#: Entities whose `name` is a title of their own kind (see `title`).
TITLED = ("hotel", "airport", "product", "account")
_TYPE_FIELDS = ("entityType", "entity_type", "type", "kind")
FACT_FIELDS = re.compile(r"observation|contents|facts")
_PERSONAL_FIELD = re.compile(r"e-?mail|phone|first_name|last_name|birth|recipient|holder")
_ONE_LINE = re.compile(r"snippet|summary|topic|reason|diagnosis|old_line|new_line|memo|status|bio|headline")


@dataclass
class RecordContext:
    """What one record has drawn: its person and its place (each drawn once, when first needed)."""

    rng: random.Random
    entity: str = ""
    values: dict[str, Any] = field(default_factory=dict)
    is_person: bool = False
    _person: Person | None = None
    _place: Place | None = None

    @classmethod
    def for_fields(cls, rng: random.Random, entity: str, names: list[str]) -> RecordContext:
        """A record is a person's when one of its fields names them (`name` beside `email`, `first_name`)."""
        return cls(rng, entity, is_person=_personal(entity, tuple(names)))

    @property
    def person(self) -> Person:
        if self._person is None:
            self._person = person(self.rng)
        return self._person

    @property
    def place(self) -> Place:
        if self._place is None:
            city = self.values.get("city")
            self._place = place(self.rng)
            if isinstance(city, str) and country_of(city) is not None:  # a city already given keeps its country
                self._place = Place(city, country_of(city) or "", "", self._place.latitude, self._place.longitude,
                                    self._place.timezone)
        return self._place

    @property
    def entity_type(self) -> str | None:
        found = next((self.values[f] for f in _TYPE_FIELDS if isinstance(self.values.get(f), str)), None)
        return found.lower() if found else None


@lru_cache(maxsize=4096)
def _personal(entity: str, names: tuple[str, ...]) -> bool:
    """Whether a record of these fields is a person's, read once per record shape (a tool's answers draw records
    of the same fields on every call)."""
    return any(SELF_NAMES.match(n) for n in names) and (
        any(_PERSONAL_FIELD.search(n) for n in names)
        or entity in ("person", "contact", "patient", "traveller", "user", "member", "employee", "customer"))


def person_name(rng: random.Random, fieldname: str, ctx: RecordContext | None) -> str:
    """The record's own person for `name`/`first_name`/`recipient`; someone else for `owner`, `author`."""
    low = fieldname.lower()
    if ctx is not None and low == "name" and ctx.entity in TITLED:
        return title(rng, fieldname, ctx)  # a hotel's name is a hotel's, not a person's
    own = ctx is not None and (ctx.is_person or ctx.entity_type == "person") and SELF_NAMES.match(low)
    who = ctx.person if own and ctx is not None else person(rng)
    if ctx is not None and low in ("name", "entityname") and ctx.entity_type not in (None, "person"):
        return typed_name(ctx)
    if "first" in low or "given" in low:
        return who.first_name
    if re.search(r"last|surname|family", low):
        return who.last_name
    return who.name


def typed_name(ctx: RecordContext) -> str:
    """A knowledge-graph entity's name by its type: an organization is a company, a place a city."""
    kind = ctx.entity_type or "person"
    if kind.startswith("org") or kind in ("company", "organisation"):
        return ctx.person.company
    if kind in ("place", "location", "city"):
        return ctx.place.city
    if kind == "project":
        return f"Project {words(ctx.rng, 1)[0].capitalize()}"
    if kind == "event":
        return f"{ctx.place.city} {words(ctx.rng, 1)[0].capitalize()} Summit"
    return ctx.person.name


def email(rng: random.Random, ctx: RecordContext | None) -> str:
    who = ctx.person if ctx is not None and ctx.is_person else person(rng)
    return who.email


def company_name(rng: random.Random, fieldname: str, ctx: RecordContext | None) -> str:
    """The record's person's employer; an airline or a bank named like one."""
    low = fieldname.lower()
    if "airline" in low or "carrier" in low:
        return f"{last_name(rng)} {rng.choice(['Airways', 'Air', 'Airlines'])}"
    if "bank" in low:
        return f"{last_name(rng)} {rng.choice(['Bank', 'Savings Bank', 'Credit Union'])}"
    if ctx is not None and (ctx.is_person or ctx.entity_type == "person"):
        return ctx.person.company
    return company(rng)


def phone_number(rng: random.Random, ctx: RecordContext | None) -> str:
    return ctx.person.phone if ctx is not None and ctx.is_person else phone(rng)


def place_of(rng: random.Random, ctx: RecordContext | None) -> Place:
    return ctx.place if ctx is not None else place(rng)


#: What a shop sells and how its listings qualify it: "Walnut desk lamp", not a catch-phrase ("Future-Proofed
#: Eco-Centric Portal", which reads as generated at once).
_GOODS = ("desk lamp", "coffee grinder", "water bottle", "backpack", "office chair", "notebook", "wireless mouse",
          "yoga mat", "kettle", "headphones", "running shoes", "phone case", "blender", "bookshelf", "throw blanket",
          "cutting board", "umbrella", "desk organizer", "travel mug", "rain jacket", "wall clock", "frying pan")
_QUALITIES = ("Walnut", "Ceramic", "Stainless steel", "Recycled", "Compact", "Wireless", "Bamboo", "Leather",
              "Insulated", "Foldable", "Organic cotton", "Adjustable", "Cast iron", "Waterproof")


def product_name(rng: random.Random) -> str:
    """A product as a shop lists it: a quality and a thing (`Bamboo cutting board`)."""
    return f"{rng.choice(_QUALITIES)} {rng.choice(_GOODS)}"


#: What work is about and what is written or held about it: "Q3 budget review", "Office move checklist", where a
#: business catch-phrase ("Streamline collaborative e-markets") reads as generated at once.
_TOPICS = ("Q3 budget", "Vendor onboarding", "Website launch", "Quarterly planning", "Hiring", "Office move",
           "Security audit", "Customer feedback", "Product roadmap", "Spring campaign", "Sales pipeline",
           "Board meeting", "Year-end close", "Data migration", "Support backlog", "New starter training",
           "Pricing update", "Partner renewal", "Team offsite", "Release 2.4")
_WRITINGS = ("review", "plan", "checklist", "notes", "update", "kickoff", "draft", "summary", "sync", "proposal")


def work_title(rng: random.Random) -> str:
    """A title as people give their work: a topic and what it is (`Security audit checklist`)."""
    return f"{rng.choice(_TOPICS)} {rng.choice(_WRITINGS)}"


def title(rng: random.Random, fieldname: str, ctx: RecordContext | None) -> str:
    """A title that fits what it titles: a hotel, an airport, a product, an account, a subject line."""
    entity, low = (ctx.entity if ctx else ""), fieldname.lower()
    if entity == "hotel":
        city, surname = place_of(rng, ctx).city, last_name(rng)
        return rng.choice([f"Hotel {surname}", f"{city} Grand Hotel", f"The {surname} Inn", f"{surname} Suites {city}"])
    if entity == "airport":
        return f"{place_of(rng, ctx).city} International Airport"
    if entity == "product":
        return product_name(rng)
    if entity == "account":
        kind = str((ctx.values.get("kind") if ctx else None) or "checking")
        return f"{kind.capitalize()} account {rng.randint(1000, 9999)}"
    if entity == "transaction" or low == "description":
        return f"Card payment to {company(rng)}"
    if low == "subject":
        line = work_title(rng)
        return rng.choice([line, line, f"Re: {line}", f"Invoice {rng.randint(1000, 9999)} from {company(rng)}"])
    if low in ("message", "commit_message"):
        return f"{rng.choice(['Fix', 'Add', 'Update', 'Refactor', 'Remove'])} {' '.join(words(rng, 2))}"
    if entity in ("article", "result", "page"):
        return catch_phrase(rng).capitalize()
    return work_title(rng)


def text(rng: random.Random, fieldname: str, ctx: RecordContext | None) -> str:
    """One sentence for a snippet or summary, a short paragraph otherwise; facts for an entity's notes."""
    if ctx is not None and FACT_FIELDS.search(fieldname.lower()):
        return rng.choice(facts(ctx))
    if _ONE_LINE.search(fieldname.lower()):
        return sentence(rng, 8)
    return paragraph(rng, rng.randint(2, 3))


def facts(ctx: RecordContext) -> list[str]:
    """What a knowledge graph notes about an entity of its type."""
    kind, who, where = ctx.entity_type or "person", ctx.person, ctx.place
    if kind.startswith("org") or kind == "company":
        return [f"Headquartered in {where.city}, {where.country}", catch_phrase(ctx.rng).capitalize(),
                f"Main contact: {who.name} ({who.email})"]
    if kind in ("place", "location", "city"):
        return [f"City in {where.country}", f"Time zone {where.timezone}",
                f"Located at {where.latitude:.2f}, {where.longitude:.2f}"]
    if kind == "project":
        return [f"Led by {who.name}", f"Goal: {short_sentence(ctx.rng).lower()}", f"Run by {who.company}"]
    if kind == "event":
        return [f"Held in {where.city}, {where.country}", f"Organized by {who.company}"]
    return [f"Works at {who.company} as {who.job.lower()}", f"Lives in {where.city}, {where.country}",
            f"Reachable at {who.email}"]


def street(rng: random.Random, fieldname: str, ctx: RecordContext | None) -> str:
    f = fake(rng)
    if re.search(r"address", fieldname.lower()):
        where = place_of(rng, ctx)
        return f"{f.street_address()}, {where.city}, {where.country}"
    return str(f.street_address())


def handle(rng: random.Random, ctx: RecordContext | None) -> str:
    who = ctx.person if ctx is not None and ctx.is_person else person(rng)
    return slug(who.name, ".")


def harmonize(values: dict[str, Any], generated: set[str]) -> dict[str, Any]:
    """Generated fields made to agree with the record's other fields: `name` is `first_name last_name`,
    an email is the name's, a country is the city's."""
    first, last = values.get("first_name"), values.get("last_name")
    name_key = next((k for k in ("name", "full_name", "display_name") if isinstance(values.get(k), str)), None)
    if isinstance(first, str) and isinstance(last, str) and name_key in generated:
        values[name_key] = f"{first} {last}"
    elif name_key is not None and " " in values[name_key]:
        parts = values[name_key].split()
        for key, part in (("first_name", parts[0]), ("last_name", parts[-1])):
            if key in generated and isinstance(values.get(key), str):
                values[key] = part
    name = values.get(name_key) if name_key else None
    for key in [k for k in generated if "email" in k.lower() and isinstance(values.get(k), str)]:
        if isinstance(name, str) and "@" in values[key] and name_key not in generated:
            values[key] = email_for(name, domain=values[key].split("@", 1)[1])
    city = values.get("city")
    known = country_of(city) if isinstance(city, str) else None
    if known and "country" in generated and isinstance(values.get("country"), str):
        values["country"] = known
    return values
