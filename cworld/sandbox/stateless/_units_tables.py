"""Unit tables for the units server: each unit's factor to its dimension's base unit, and its aliases.

Factors are exact definitions where one exists (inch = 0.0254 m, pound = 0.45359237 kg, US cup = 236.5882365
mL). Currency rates are a FIXED illustrative table (units per 1 EUR), not live market data: the sandbox must
answer the same way every time.
"""

from __future__ import annotations

import math

#: dimension -> canonical unit -> (factor to the base unit, aliases)
LINEAR: dict[str, dict[str, tuple[float, tuple[str, ...]]]] = {
    "length": {
        "nm": (1e-9, ("nanometer", "nanometre")), "um": (1e-6, ("µm", "micrometer", "micron")),
        "mm": (1e-3, ("millimeter", "millimetre")), "cm": (1e-2, ("centimeter", "centimetre")),
        "m": (1.0, ("meter", "metre")), "km": (1e3, ("kilometer", "kilometre")),
        "in": (0.0254, ("inch", "inches", '"')), "ft": (0.3048, ("foot", "feet", "'")),
        "yd": (0.9144, ("yard",)), "mi": (1609.344, ("mile",)), "nmi": (1852.0, ("nautical_mile",)),
        "au": (149_597_870_700.0, ("astronomical_unit",)), "ly": (9.4607304725808e15, ("light_year",)),
    },
    "mass": {
        "ug": (1e-9, ("µg", "microgram")), "mg": (1e-6, ("milligram",)), "g": (1e-3, ("gram",)),
        "kg": (1.0, ("kilogram", "kilo")), "t": (1e3, ("tonne", "metric_ton")), "ct": (2e-4, ("carat",)),
        "oz": (0.028349523125, ("ounce",)), "lb": (0.45359237, ("lbs", "pound")),
        "st": (6.35029318, ("stone",)), "short_ton": (907.18474, ("us_ton",)), "long_ton": (1016.0469088, ("uk_ton",)),
    },
    "volume": {
        "ml": (1e-3, ("milliliter", "millilitre", "cm3", "cc")), "cl": (1e-2, ("centiliter", "centilitre")),
        "dl": (0.1, ("deciliter", "decilitre")), "l": (1.0, ("liter", "litre")), "m3": (1e3, ("cubic_meter",)),
        "tsp": (0.00492892159375, ("teaspoon",)), "tbsp": (0.01478676478125, ("tablespoon",)),
        "fl_oz": (0.0295735295625, ("fluid_ounce", "us_fl_oz")), "cup": (0.2365882365, ("us_cup",)),
        "pint": (0.473176473, ("us_pint", "pt")), "quart": (0.946352946, ("us_quart", "qt")),
        "gallon": (3.785411784, ("us_gallon", "gal")), "imp_fl_oz": (0.0284130625, ("uk_fl_oz",)),
        "imp_pint": (0.56826125, ("uk_pint",)), "imp_gallon": (4.54609, ("uk_gallon",)),
        "in3": (0.016387064, ("cubic_inch",)), "ft3": (28.316846592, ("cubic_foot", "cubic_feet")),
    },
    "area": {
        "mm2": (1e-6, ("square_millimeter",)), "cm2": (1e-4, ("square_centimeter",)), "m2": (1.0, ("square_meter",)),
        "km2": (1e6, ("square_kilometer",)), "ha": (1e4, ("hectare",)), "acre": (4046.8564224, ()),
        "in2": (0.00064516, ("square_inch",)), "ft2": (0.09290304, ("square_foot", "square_feet", "sqft")),
        "yd2": (0.83612736, ("square_yard",)), "mi2": (2_589_988.110336, ("square_mile",)),
    },
    "speed": {
        "m/s": (1.0, ("mps", "meters_per_second")), "km/h": (1 / 3.6, ("kph", "kmh", "kilometers_per_hour")),
        "mph": (0.44704, ("mi/h", "miles_per_hour")), "knot": (1852 / 3600, ("kn", "kt")),
        "ft/s": (0.3048, ("fps", "feet_per_second")),
    },
    "duration": {
        "ns": (1e-9, ("nanosecond",)), "us": (1e-6, ("µs", "microsecond")), "ms": (1e-3, ("millisecond",)),
        "s": (1.0, ("sec", "second")), "min": (60.0, ("minute",)), "h": (3600.0, ("hr", "hour")),
        "day": (86_400.0, ("d",)), "week": (604_800.0, ("wk",)),
        "month": (2_629_800.0, ("mo",)), "year": (31_557_600.0, ("yr", "julian_year")),
    },
    "data_size": {
        "bit": (0.125, ("b",)), "B": (1.0, ("byte",)), "kB": (1e3, ("KB", "kilobyte")), "MB": (1e6, ("megabyte",)),
        "GB": (1e9, ("gigabyte",)), "TB": (1e12, ("terabyte",)), "PB": (1e15, ("petabyte",)),
        "KiB": (1024.0, ("kibibyte",)), "MiB": (1024.0**2, ("mebibyte",)), "GiB": (1024.0**3, ("gibibyte",)),
        "TiB": (1024.0**4, ("tebibyte",)), "PiB": (1024.0**5, ("pebibyte",)), "kbit": (125.0, ("kb", "kilobit")),
        "Mbit": (1.25e5, ("Mb", "megabit")), "Gbit": (1.25e8, ("Gb", "gigabit")),
    },
    "energy": {
        "J": (1.0, ("joule",)), "kJ": (1e3, ("kilojoule",)), "MJ": (1e6, ("megajoule",)),
        "cal": (4.184, ("calorie",)), "kcal": (4184.0, ("kilocalorie", "Cal", "food_calorie")),
        "Wh": (3600.0, ("watt_hour",)), "kWh": (3.6e6, ("kilowatt_hour",)),
        "BTU": (1055.05585262, ("btu",)), "eV": (1.602176634e-19, ("electronvolt",)),
    },
    "pressure": {
        "Pa": (1.0, ("pascal",)), "hPa": (100.0, ("mbar", "hectopascal", "millibar")), "kPa": (1e3, ("kilopascal",)),
        "MPa": (1e6, ("megapascal",)), "bar": (1e5, ()), "atm": (101_325.0, ("atmosphere",)),
        "psi": (6894.757293168361, ("lbf/in2",)), "mmHg": (133.322387415, ()), "inHg": (3386.389, ()),
        "torr": (101_325 / 760, ()),
    },
    "power": {
        "mW": (1e-3, ("milliwatt",)), "W": (1.0, ("watt",)), "kW": (1e3, ("kilowatt",)), "MW": (1e6, ("megawatt",)),
        "hp": (745.6998715822702, ("horsepower",)), "PS": (735.49875, ("metric_horsepower",)),
        "BTU/h": (0.29307107017, ("btu/h",)),
    },
    "angle": {
        "rad": (1.0, ("radian",)), "deg": (math.pi / 180, ("°", "degree")), "grad": (math.pi / 200, ("gon",)),
        "arcmin": (math.pi / 10_800, ("arcminute",)), "arcsec": (math.pi / 648_000, ("arcsecond",)),
        "turn": (2 * math.pi, ("revolution", "rev")),
    },
    "frequency": {
        "Hz": (1.0, ("hertz",)), "kHz": (1e3, ("kilohertz",)), "MHz": (1e6, ("megahertz",)),
        "GHz": (1e9, ("gigahertz",)), "rpm": (1 / 60, ("rev/min",)),
    },
}

TEMPERATURE_UNITS: dict[str, tuple[str, ...]] = {
    "C": ("celsius", "°C", "degC"), "F": ("fahrenheit", "°F", "degF"), "K": ("kelvin",), "R": ("rankine", "°R"),
}

FUEL_ECONOMY_UNITS: dict[str, tuple[str, ...]] = {
    "L/100km": ("l/100km", "liters_per_100km"), "km/L": ("km/l", "kmpl"), "mpg": ("mpg_us", "us_mpg"),
    "mpg_uk": ("imperial_mpg", "uk_mpg"),
}

#: Units of each currency per 1 EUR: a fixed sandbox table, deliberately not live.
CURRENCY_PER_EUR: dict[str, float] = {
    "EUR": 1.0, "USD": 1.08, "GBP": 0.85, "JPY": 160.0, "CHF": 0.95, "CAD": 1.47, "AUD": 1.63, "NZD": 1.78,
    "CNY": 7.8, "HKD": 8.45, "SGD": 1.45, "KRW": 1450.0, "INR": 90.0, "BRL": 5.9, "MXN": 18.5, "ZAR": 19.8,
    "SEK": 11.3, "NOK": 11.6, "DKK": 7.46, "PLN": 4.3, "CZK": 25.0, "TRY": 35.0,
}

#: Grams per US cup of common ingredients (typical published kitchen densities).
GRAMS_PER_CUP: dict[str, float] = {
    "all_purpose_flour": 125.0, "bread_flour": 127.0, "whole_wheat_flour": 120.0, "granulated_sugar": 200.0,
    "brown_sugar": 220.0, "powdered_sugar": 120.0, "butter": 227.0, "water": 236.6, "milk": 245.0,
    "heavy_cream": 238.0, "honey": 340.0, "maple_syrup": 322.0, "vegetable_oil": 218.0, "white_rice": 185.0,
    "rolled_oats": 90.0, "cocoa_powder": 85.0, "table_salt": 292.0, "chocolate_chips": 170.0, "yogurt": 245.0,
}
