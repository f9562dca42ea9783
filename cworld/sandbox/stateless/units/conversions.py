"""The conversions themselves: factor tables, temperatures (through kelvin), fuel economy (through
L/100km), and which kitchen dimension a unit belongs to."""

from cworld.sandbox.stateless.shared import clean, invalid
from cworld.sandbox.stateless.units.lookup import require, resolve
from cworld.sandbox.stateless.units.models import Conversion
from cworld.sandbox.stateless.units.tables import LINEAR

#: Litres per 100 km = this constant / miles per gallon (US and imperial gallons).
_MPG_US = 100 * 3.785411784 / 1.609344


_MPG_UK = 100 * 4.54609 / 1.609344


def _result(value: float, source: float, from_unit: str, to_unit: str) -> Conversion:
    out = clean(value, "converted value")
    return Conversion(
        value=out,
        from_unit=from_unit,
        to_unit=to_unit,
        text=f"{source:.12g} {from_unit} = {out:.12g} {to_unit}",
    )


def convert_linear(dimension: str, value: float, from_unit: str, to_unit: str) -> Conversion:
    table = LINEAR[dimension]
    src, dst = require(dimension, from_unit), require(dimension, to_unit)
    return _result(value * table[src][0] / table[dst][0], value, src, dst)


def _to_kelvin(value: float, unit: str) -> float:
    return {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": value, "R": value * 5 / 9}[unit]


def _from_kelvin(kelvin: float, unit: str) -> float:
    return {"C": kelvin - 273.15, "F": (kelvin - 273.15) * 9 / 5 + 32, "K": kelvin, "R": kelvin * 9 / 5}[unit]


def convert_temperature(value: float, from_unit: str, to_unit: str) -> Conversion:
    src, dst = require("temperature", from_unit), require("temperature", to_unit)
    kelvin = _to_kelvin(value, src)
    if kelvin < -1e-9:
        raise invalid(f"{value:g} {src} is below absolute zero (0 K); pass a physically possible temperature")
    return _result(_from_kelvin(max(kelvin, 0.0), dst), value, src, dst)


def convert_fuel_economy(value: float, from_unit: str, to_unit: str) -> Conversion:
    src, dst = require("fuel_economy", from_unit), require("fuel_economy", to_unit)
    if value <= 0:
        raise invalid("fuel economy must be a positive number; 0 or less cannot be converted")
    per_100km = {
        "L/100km": lambda x: x,
        "km/L": lambda x: 100 / x,
        "mpg": lambda x: _MPG_US / x,
        "mpg_uk": lambda x: _MPG_UK / x,
    }
    # Every mapping is its own inverse (x -> c/x), or the identity, so the same table converts back.
    return _result(per_100km[dst](per_100km[src](value)), value, src, dst)


def kitchen_kind(unit: str) -> str:
    for kind in ("volume", "mass"):
        if resolve(kind, unit):
            return kind
    raise invalid(
        f"{unit!r} is not a kitchen unit; use a volume (tsp, tbsp, cup, fl_oz, ml, l) or mass "
        f"(g, kg, oz, lb) unit"
    )
