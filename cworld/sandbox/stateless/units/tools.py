"""Conversion tools of the units server (a mixin).

The thirteen factor-based dimensions share one tool factory, so their tools differ only in the table they
read; the non-linear ones (temperature, fuel economy, currency, cooking) are written out. This module keeps
real (not stringified) annotations so the factory can put each dimension's unit list into its schema.
"""

import math
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.shared import clean, invalid
from cworld.sandbox.stateless.units.conversions import (
    convert_fuel_economy,
    convert_linear,
    convert_temperature,
    kitchen_kind,
)
from cworld.sandbox.stateless.units.lookup import dimension_of, require, spelling_index, units_of
from cworld.sandbox.stateless.units.models import (
    AnyUnit,
    Conversion,
    CurrencyConversion,
    Dimension,
    FuelEconomy,
    FuelUnitFrom,
    FuelUnitTo,
    Ingredient,
    KitchenQuantity,
    KitchenUnitFrom,
    KitchenUnitTo,
    SameKindUnit,
    ScaleFrom,
    ScaleTo,
    Size,
    UnitInfo,
    UnitList,
    Value,
)
from cworld.sandbox.stateless.units.tables import CURRENCY_PER_EUR, GRAMS_PER_CUP, LINEAR


def _linear_tool(dimension: str, summary: str, example: tuple[str, str]) -> Callable[..., Conversion]:
    units = ", ".join(units_of(dimension))

    def convert(
        self: Any,
        value: Value,
        from_unit: Annotated[
            str,
            Field(
                description=f"Unit of `value`, e.g. '{example[0]}'. One of: {units} "
                "(full names and plurals also work).",
                min_length=1,
                max_length=40,
            ),
        ],
        to_unit: Annotated[
            str, Field(description=f"Unit to convert to, e.g. '{example[1]}'.", min_length=1, max_length=40)
        ],
    ) -> Conversion:
        return convert_linear(dimension, value, from_unit, to_unit)

    convert.__name__ = convert.__qualname__ = f"convert_{dimension}"
    convert.__doc__ = f"{summary} Units: {units}."
    return tool(read_only=True)(convert)


class ConversionTools:
    convert_length = _linear_tool(
        "length", "Convert a length or distance (metric, imperial, nautical, astronomical).", ("km", "mi")
    )
    convert_mass = _linear_tool(
        "mass", "Convert a mass or weight (metric, avoirdupois ounces/pounds, stones, tons).", ("kg", "lb")
    )
    convert_volume = _linear_tool(
        "volume",
        "Convert a volume; cups, pints, quarts and gallons are US measures, imp_* are imperial (UK).",
        ("gallon", "l"),
    )
    convert_area = _linear_tool("area", "Convert an area (square units, hectares, acres).", ("acre", "m2"))
    convert_speed = _linear_tool("speed", "Convert a speed.", ("mph", "km/h"))
    convert_duration = _linear_tool(
        "duration",
        "Convert a duration; a month is 1/12 year and a year is 365.25 "
        "days (for calendar arithmetic use the datetime server).",
        ("h", "min"),
    )
    convert_data_size = _linear_tool(
        "data_size",
        "Convert a data size. kB/MB/GB are decimal (1000), KiB/MiB/GiB "
        "binary (1024); bit units are case-sensitive (Mbit vs MB).",
        ("GiB", "MB"),
    )
    convert_energy = _linear_tool("energy", "Convert energy; 'kcal' is the food Calorie.", ("kcal", "kJ"))
    convert_pressure = _linear_tool(
        "pressure", "Convert a pressure (tyres, weather, diving).", ("psi", "bar")
    )
    convert_power = _linear_tool(
        "power", "Convert power; 'hp' is mechanical horsepower, 'PS' metric.", ("hp", "kW")
    )
    convert_angle = _linear_tool("angle", "Convert an angle.", ("deg", "rad"))
    convert_frequency = _linear_tool("frequency", "Convert a frequency or rotation rate.", ("rpm", "Hz"))

    @tool(read_only=True)
    def convert_temperature(self, value: Value, from_unit: ScaleFrom, to_unit: ScaleTo) -> Conversion:
        """Convert a temperature between Celsius, Fahrenheit, Kelvin and Rankine. Fails below absolute
        zero."""
        return convert_temperature(value, from_unit, to_unit)

    @tool(read_only=True)
    def convert_fuel_economy(
        self, value: FuelEconomy, from_unit: FuelUnitFrom, to_unit: FuelUnitTo
    ) -> Conversion:
        """Convert fuel economy. L/100km is inverse to km/L and mpg, so 10 L/100km = 23.52 US mpg."""
        return convert_fuel_economy(value, from_unit, to_unit)

    @tool(read_only=True)
    def convert_currency(
        self,
        amount: Annotated[float, Field(description="Amount of money, 0..1e12.", ge=0, le=1e12)],
        from_currency: Annotated[
            str, Field(description="ISO 4217 code, e.g. 'USD'.", min_length=3, max_length=3)
        ],
        to_currency: Annotated[
            str, Field(description="ISO 4217 code, e.g. 'EUR'.", min_length=3, max_length=3)
        ],
    ) -> CurrencyConversion:
        """Convert money with a FIXED sandbox rate table (not live market rates; same answer every time).
        Call list_units with dimension 'currency' for the supported codes."""
        src, dst = from_currency.upper(), to_currency.upper()
        for code in (src, dst):
            if code not in CURRENCY_PER_EUR:
                raise invalid(f"unknown currency {code!r}; supported: {', '.join(CURRENCY_PER_EUR)}")
        rate = CURRENCY_PER_EUR[dst] / CURRENCY_PER_EUR[src]
        return CurrencyConversion(
            amount=round(amount * rate, 2) + 0.0,
            rate=clean(rate),
            note="fixed sandbox rates (units per EUR table), not live market data",
        )

    @tool(read_only=True)
    def convert_cooking(
        self,
        value: KitchenQuantity,
        from_unit: KitchenUnitFrom,
        to_unit: KitchenUnitTo,
        ingredient: Annotated[
            Ingredient | None,  # type: ignore[valid-type]
            Field(description="Needed only between volume and mass: the ingredient whose density to use."),
        ] = None,
    ) -> Conversion:
        """Convert a recipe measure, including between volume and weight for a known ingredient (e.g. 1 cup
        of all_purpose_flour = 125 g). Cups and spoons are US measures."""
        kinds = [kitchen_kind(u) for u in (from_unit, to_unit)]
        if kinds[0] == kinds[1]:
            return convert_linear(kinds[0], value, from_unit, to_unit)
        if ingredient is None:
            raise invalid("converting between volume and mass needs an ingredient (its density); pass one")
        grams_per_litre = GRAMS_PER_CUP[ingredient] / LINEAR["volume"]["cup"][0]
        if kinds[0] == "volume":
            grams = convert_linear("volume", value, from_unit, "l").value * grams_per_litre
            out = convert_linear("mass", grams, "g", to_unit)
        else:
            litres = convert_linear("mass", value, from_unit, "g").value / grams_per_litre
            out = convert_linear("volume", litres, "l", to_unit)
        src = require(kinds[0], from_unit)
        return Conversion(
            value=out.value,
            from_unit=src,
            to_unit=out.to_unit,
            text=f"{value:.12g} {src} of {ingredient} = {out.value:.12g} {out.to_unit}",
        )

    @tool(read_only=True)
    def list_units(
        self, dimension: Annotated[Dimension, Field(description="Which kind of quantity.")]
    ) -> UnitList:
        """The units (and accepted spellings) of one dimension, or the currency codes for 'currency'."""
        if dimension == "currency":
            return UnitList(
                dimension=dimension, units=[UnitInfo(unit=c, aliases=[]) for c in CURRENCY_PER_EUR]
            )
        index = spelling_index(dimension)
        units = [
            UnitInfo(unit=u, aliases=sorted(s for s, v in index.items() if v == u and s != u))
            for u in units_of(dimension)
        ]
        return UnitList(dimension=dimension, units=units)

    @tool(read_only=True)
    def convert_units(self, value: Value, from_unit: AnyUnit, to_unit: SameKindUnit) -> Conversion:
        """Convert between any two units of the same kind, finding the kind from the unit names (not currency
        or cooking-by-ingredient: use their own tools)."""
        dimension = dimension_of(from_unit, to_unit)
        if dimension == "temperature":
            return convert_temperature(value, from_unit, to_unit)
        if dimension == "fuel_economy":
            return convert_fuel_economy(value, from_unit, to_unit)
        return convert_linear(dimension, value, from_unit, to_unit)

    @tool(read_only=True)
    def human_readable_size(
        self,
        size_bytes: Annotated[int, Field(description="A size in bytes, 0..1e18.", ge=0, le=10**18)],
        binary: Annotated[
            bool, Field(description="True: powers of 1024 (KiB, MiB); false: powers of 1000 (kB, MB).")
        ] = True,
    ) -> Size:
        """Write a byte count the way people read it, e.g. 1536 -> '1.5 KiB', with 1 decimal at most."""
        base, names = (
            (1024, ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"])
            if binary
            else (1000, ["B", "kB", "MB", "GB", "TB", "PB", "EB"])
        )
        power = 0 if size_bytes == 0 else min(int(math.log(size_bytes, base) + 1e-12), len(names) - 1)
        value = round(size_bytes / base**power, 1)
        if value >= base and power < len(names) - 1:  # rounding pushed it up to the next unit
            power, value = power + 1, round(size_bytes / base ** (power + 1), 1)
        return Size(text=f"{value:g} {names[power]}", value=value, unit=names[power])
