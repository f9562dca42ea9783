"""The people directory calendar and docs share: its `Person` fields and its search."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

from pydantic import BaseModel, Field

from cworld.sandbox.apps._shared.records import Paged, name_search
from cworld.sandbox.framework import SandboxApp


class PersonBase(BaseModel):
    # calendar and docs publish it as `Person`, a subclass adding the fields that app shows; a subclass
    # under the app's own name keeps each published schema (its title and fields) as it was
    person_id: str
    name: str
    email: str


P = TypeVar("P", bound=PersonBase)


PageT = TypeVar("PageT", bound=Paged)


PeopleQuery = Annotated[str, Field(description="words from a name, email or company")]


#: The fields a directory search reads.
PERSON_TEXT = ("name", "email", "company")


def people_page(app: SandboxApp, directory: str, query: str, page: int, page_size: int,
                person: type[P], page_model: Callable[..., PageT]) -> PageT:
    """A page of the people of the app's map `directory` whose name, email or company match `query`, by
    name: the look-up that calendar invitations and document sharing both need before they take a person id."""
    chunk, meta = name_search(app, directory, query, PERSON_TEXT, page, page_size)
    people = [person(person_id=p["id"], **{k: p[k] for k in person.model_fields if k != "person_id"}) for p in chunk]
    return page_model(people=people, **meta)
