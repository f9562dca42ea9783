"""Argument types and result models of the units server (pydantic: they are the tools' schemas)."""

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from cworld.sandbox.stateless.shared import Real
from cworld.sandbox.stateless.units.tables import GRAMS_PER_CUP

Value = Annotated[Real, Field(description="The quantity to convert, between -1e15 and 1e15.")]

Dimension = Literal[
    "length",
    "mass",
    "volume",
    "area",
    "speed",
    "duration",
    "data_size",
    "energy",
    "pressure",
    "power",
    "angle",
    "frequency",
    "temperature",
    "fuel_economy",
    "currency",
]

Ingredient = Literal[tuple(GRAMS_PER_CUP)]  # type: ignore[valid-type]


class Conversion(BaseModel):
    value: float = Field(description="The converted quantity (12 significant digits).")
    from_unit: str = Field(description="The canonical name of the unit converted from.")
    to_unit: str = Field(description="The canonical name of the unit converted to.")
    text: str = Field(description="The conversion as a sentence, e.g. '5 km = 3.10685596119 mi'.")


class CurrencyConversion(BaseModel):
    amount: float = Field(description="The converted amount, rounded to 2 decimals.")
    rate: float = Field(description="Units of to_currency per 1 unit of from_currency.")
    note: str = Field(description="Where the rate comes from.")


class UnitInfo(BaseModel):
    unit: str = Field(description="Canonical unit name to pass to the tools.")
    aliases: list[str] = Field(description="Other accepted spellings.")


class UnitList(BaseModel):
    dimension: str
    units: list[UnitInfo]


class Size(BaseModel):
    text: str = Field(
        description="The size with the largest unit that keeps the number >= 1, e.g. '1.5 MiB'."
    )
    value: float
    unit: str
