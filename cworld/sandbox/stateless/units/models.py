"""Argument types and result models of the units server (pydantic: they are the tools' schemas)."""

from typing import Annotated, Any, Literal

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


def unit_field(what: str, example: str) -> Any:
    return Field(description=f"{what}, e.g. '{example}'.", min_length=1, max_length=40)


FuelEconomy = Annotated[float, Field(description="Fuel economy, greater than 0.", gt=0, le=1e6)]
KitchenQuantity = Annotated[float, Field(description="The quantity, 0..1e6.", ge=0, le=1e6)]
ScaleFrom = Annotated[str, unit_field("Scale of `value`: C, F, K or R (Rankine)", "F")]
ScaleTo = Annotated[str, unit_field("Scale to convert to: C, F, K or R", "C")]
FuelUnitFrom = Annotated[str, unit_field("One of L/100km, km/L, mpg (US gallons), mpg_uk", "mpg")]
FuelUnitTo = Annotated[str, unit_field("One of L/100km, km/L, mpg, mpg_uk", "L/100km")]
KitchenUnitFrom = Annotated[
    str, unit_field("A volume (tsp, tbsp, cup, fl_oz, ml, l) or mass (g, kg, oz, lb) unit", "cup")
]
KitchenUnitTo = Annotated[str, unit_field("A volume or mass unit", "g")]
AnyUnit = Annotated[str, unit_field("Any supported unit", "ft")]
SameKindUnit = Annotated[str, unit_field("A unit of the same kind", "m")]


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
