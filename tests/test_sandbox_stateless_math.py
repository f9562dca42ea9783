"""Worked examples for the math and units servers, called through the MCP adapter (schema validation
included), with answers known independently of the code (textbook values, published test vectors)."""

from __future__ import annotations

import pytest
from stateless_calls import fails, ok
from stateless_calls import stateless_server as _server


@pytest.fixture(scope="module")
def math():
    return _server("math")


@pytest.fixture(scope="module")
def units():
    return _server("units")


# --- math: expressions and exact integers ------------------------------------------------------------
def test_expressions(math):
    assert ok(math, "evaluate_expression", expression="2 * (3 + 4) ** 2 / sqrt(9)")["value"] == pytest.approx(
        98 / 3
    )
    big = ok(math, "evaluate_expression", expression="2**100")
    assert big["exact"] == "1267650600228229401496703205376" and big["is_integer"]
    assert ok(math, "evaluate_expression", expression="10 // 3 + 10 % 3 - abs(-1)")["exact"] == "3"
    assert ok(math, "evaluate_expression", expression="round(log(8, 2) + cos(pi), 6)")["value"] == 2.0


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ("1/0", "division by zero"),
        ("2^10", "**"),
        ("__import__('os')", "unknown function"),
        ("sqrt(-1)", "domain"),
        ("x + 1", "unknown name"),
        ("'a' * 3", "only numbers"),
        ("1 +", "cannot parse"),
        ("9**9**9", "too large"),
        ("(2**5000)**2", "too large"),
    ],
)
def test_bad_expressions_are_explained(math, expression, says):
    assert says in fails(math, "evaluate_expression", expression=expression)


def test_big_integers(math):
    assert (
        ok(math, "big_integer_arithmetic", a="99999999999999999999", b="1", operation="add")["value"]
        == "1" + "0" * 20
    )
    assert (
        ok(math, "big_integer_arithmetic", a="2", b="64", operation="power")["value"]
        == "18446744073709551616"
    )
    assert ok(math, "big_integer_arithmetic", a="-7", b="2", operation="floor_divide")["value"] == "-4"
    assert ok(math, "big_integer_arithmetic", a="-7", b="2", operation="modulo")["value"] == "1"
    assert "zero" in fails(math, "big_integer_arithmetic", a="5", b="0", operation="modulo")
    assert "whole number" in fails(math, "big_integer_arithmetic", a="12.5", b="1", operation="add")


def test_combinatorics_and_number_theory(math):
    assert ok(math, "factorial", n=20)["value"] == "2432902008176640000"
    assert ok(math, "factorial", n=1000)["digits"] == 2568
    assert ok(math, "combinations", n=52, k=5)["value"] == "2598960"
    assert ok(math, "combinations", n=5, k=7)["value"] == "0"
    assert ok(math, "permutations", n=10, k=3)["value"] == "720"
    assert ok(math, "gcd_lcm", numbers=[12, 18, 30]) == {"gcd": 6, "lcm": "180"}
    assert ok(math, "fibonacci", n=100)["value"] == "354224848179261915075"


def test_primes(math):
    assert ok(math, "is_prime", n=97)["is_prime"] is True
    assert ok(math, "is_prime", n=561) == {"is_prime": False, "smallest_factor": 3}  # a Carmichael number
    assert ok(math, "is_prime", n=999_999_999_999_989)["is_prime"] is True  # largest 15-digit prime
    assert ok(math, "prime_factors", n=600_851_475_143)["factors"] == [71, 839, 1471, 6857]
    assert ok(math, "prime_factors", n=360)["powers"] == {"2": 3, "3": 2, "5": 1}
    assert ok(math, "primes_in_range", start=0, end=100)["count"] == 25
    window = ok(math, "primes_in_range", start=10**12 - 100, end=10**12, limit=100)
    assert window["primes"][-1] == 999_999_999_989
    assert "before start" in fails(math, "primes_in_range", start=10, end=5)


def test_base_conversion_and_rounding(math):
    assert ok(math, "convert_base", value="ff", from_base=16, to_base=2)["value"] == "11111111"
    assert ok(math, "convert_base", value="255", from_base=10, to_base=16)["value"] == "FF"
    assert ok(math, "convert_base", value="-1011", from_base=2, to_base=10)["value"] == "-11"
    assert "base 2" in fails(math, "convert_base", value="12", from_base=2, to_base=10)
    assert ok(math, "round_number", value=2.675, decimals=2)["value"] == 2.68
    assert ok(math, "round_number", value=2.5, mode="half_even")["value"] == 2.0
    assert ok(math, "round_number", value=-2.5, mode="half_up")["value"] == -3.0
    assert ok(math, "round_number", value=1234.5678, decimals=-2)["value"] == 1200.0


def test_quadratic(math):
    assert [r["real"] for r in ok(math, "solve_quadratic", a=1, b=-3, c=2)["roots"]] == [1.0, 2.0]
    pair = ok(math, "solve_quadratic", a=1, b=2, c=5)
    assert pair["kind"] == "complex_pair" and pair["roots"][0] == {"real": -1.0, "imaginary": 2.0}
    assert ok(math, "solve_quadratic", a=0, b=2, c=-4)["roots"] == [{"real": 2.0, "imaginary": 0.0}]
    assert ok(math, "solve_quadratic", a=1, b=-1e8, c=1)["roots"][0]["real"] == pytest.approx(
        1e-8
    )  # no cancellation
    fails(math, "solve_quadratic", a=0, b=0, c=1)


# --- math: statistics, matrices, money ---------------------------------------------------------------
def test_statistics(math):
    s = ok(math, "describe_statistics", values=[2, 4, 4, 4, 5, 5, 7, 9])
    assert (s["mean"], s["median"], s["modes"], s["population_stdev"]) == (5.0, 4.5, [4.0], 2.0)
    assert s["sample_variance"] == pytest.approx(32 / 7)
    assert ok(math, "describe_statistics", values=[3])["sample_stdev"] is None
    assert ok(math, "percentile", values=[15, 20, 35, 40, 50], percent=40)["value"] == 29.0
    assert ok(math, "correlation", x=[1, 2, 3, 4], y=[8, 6, 4, 2]) == {"pearson": -1.0, "spearman": -1.0}
    assert "constant" in fails(math, "correlation", x=[1, 1, 1], y=[1, 2, 3])
    fit = ok(math, "linear_regression", x=[1, 2, 3, 4, 5], y=[2, 4, 5, 4, 5])
    assert (fit["slope"], fit["intercept"], fit["r_squared"]) == (0.6, 2.2, 0.6)
    assert "same length" in fails(math, "linear_regression", x=[1, 2, 3], y=[1, 2])
    assert ok(math, "weighted_mean", values=[80, 90], weights=[1, 3])["value"] == 87.5
    assert ok(math, "moving_average", values=[1, 2, 3, 4, 5], window=3)["values"] == [2.0, 3.0, 4.0]


def test_matrices(math):
    assert ok(math, "matrix_determinant", matrix=[[6, 1, 1], [4, -2, 5], [2, 8, 7]])["value"] == -306.0
    assert ok(math, "matrix_inverse", matrix=[[4, 7], [2, 6]])["matrix"] == [[0.6, -0.7], [-0.2, 0.4]]
    product = ok(math, "matrix_multiply", a=[[1, 2], [3, 4]], b=[[5, 6], [7, 8]])
    assert product["matrix"] == [[19.0, 22.0], [43.0, 50.0]]
    assert ok(math, "matrix_transpose", matrix=[[1, 2, 3]])["matrix"] == [[1.0], [2.0], [3.0]]
    assert ok(math, "solve_linear_system", coefficients=[[2, 1], [1, 3]], constants=[3, 5])["solution"] == [
        0.8,
        1.4,
    ]
    assert "singular" in fails(math, "matrix_inverse", matrix=[[1, 2], [2, 4]])
    assert "row 1" in fails(math, "matrix_determinant", matrix=[[1, 2], [3]])
    assert "columns" in fails(math, "matrix_multiply", a=[[1, 2]], b=[[1, 2]])


def test_money(math):
    assert (
        ok(math, "compound_interest", principal=1000, annual_rate_percent=5, years=10, compounds_per_year=1)[
            "final_amount"
        ]
        == 1628.89
    )
    assert (
        ok(math, "compound_interest", principal=1000, annual_rate_percent=5, years=10, compounds_per_year=0)[
            "final_amount"
        ]
        == 1648.72
    )
    assert (
        ok(math, "loan_payment", principal=200_000, annual_rate_percent=6, months=360)["payment"] == 1199.10
    )
    assert ok(math, "loan_payment", principal=1200, annual_rate_percent=0, months=12)["payment"] == 100.0
    assert ok(math, "loan_payment", principal=1200, annual_rate_percent=1e-60, months=12)["payment"] == 100.0
    assert ok(math, "net_present_value", rate_percent=10, cash_flows=[-100, 60, 60])[
        "value"
    ] == pytest.approx(4.1322314)
    assert ok(math, "percentage_change", old=80, new=100)["percent"] == 25.0
    assert "from 0" in fails(math, "percentage_change", old=0, new=5)


# --- units ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("tool", "value", "src", "dst", "expected"),
    [
        ("convert_length", 5, "km", "mi", 3.10685596119),
        ("convert_length", 1, "Feet", "inches", 12.0),
        ("convert_mass", 1, "lb", "kg", 0.45359237),
        ("convert_volume", 1, "gallon", "l", 3.785411784),
        ("convert_area", 1, "ha", "acre", 2.47105381467),
        ("convert_speed", 100, "km/h", "mph", 62.1371192237),
        ("convert_duration", 1, "week", "h", 168.0),
        ("convert_data_size", 1, "GiB", "MB", 1073.741824),
        ("convert_data_size", 8, "bit", "B", 1.0),
        ("convert_energy", 1, "kcal", "kJ", 4.184),
        ("convert_pressure", 1, "atm", "psi", 14.6959487755),
        ("convert_power", 1, "hp", "W", 745.699871582),
        ("convert_angle", 180, "deg", "rad", 3.14159265359),
        ("convert_frequency", 60, "rpm", "Hz", 1.0),
        ("convert_temperature", 212, "F", "C", 100.0),
        ("convert_temperature", -40, "celsius", "F", -40.0),
        ("convert_temperature", 0, "K", "C", -273.15),
        ("convert_fuel_economy", 10, "L/100km", "mpg", 23.5214583333),
        ("convert_fuel_economy", 30, "mpg", "L/100km", 7.84048611111),
        ("convert_units", 6, "ft", "m", 1.8288),
        ("convert_units", 100, "C", "F", 212.0),
    ],
)
def test_conversions(units, tool, value, src, dst, expected):
    assert ok(units, tool, value=value, from_unit=src, to_unit=dst)["value"] == pytest.approx(
        expected, rel=1e-11
    )


def test_unit_errors_name_the_choices(units):
    assert "Mbit" in fails(
        units, "convert_data_size", value=1, from_unit="mb", to_unit="kB"
    )  # ambiguous case
    assert "mass unit" in fails(units, "convert_units", value=1, from_unit="kg", to_unit="m")
    assert "absolute zero" in fails(units, "convert_temperature", value=-300, from_unit="C", to_unit="K")
    assert "km" in fails(units, "convert_length", value=1, from_unit="parsec", to_unit="km")


def test_currency_uses_the_fixed_table(units):
    out = ok(units, "convert_currency", amount=100, from_currency="usd", to_currency="EUR")
    assert out["amount"] == 92.59 and "fixed" in out["note"]
    assert ok(units, "convert_currency", amount=5, from_currency="GBP", to_currency="GBP")["rate"] == 1.0
    assert "XYZ" in fails(units, "convert_currency", amount=1, from_currency="XYZ", to_currency="EUR")


def test_cooking_and_listing(units):
    assert (
        ok(units, "convert_cooking", value=1, from_unit="cup", to_unit="g", ingredient="all_purpose_flour")[
            "value"
        ]
        == 125.0
    )
    assert (
        ok(units, "convert_cooking", value=250, from_unit="g", to_unit="cup", ingredient="granulated_sugar")[
            "value"
        ]
        == 1.25
    )
    assert ok(units, "convert_cooking", value=2, from_unit="tbsp", to_unit="tsp")["value"] == 6.0
    assert "ingredient" in fails(units, "convert_cooking", value=1, from_unit="cup", to_unit="g")
    length = ok(units, "list_units", dimension="length")["units"]
    assert {"unit": "km", "aliases": ["kilometer", "kilometers", "kilometre", "kilometres"]} in length
    assert any(u["unit"] == "USD" for u in ok(units, "list_units", dimension="currency")["units"])
    assert ok(units, "human_readable_size", size_bytes=1536)["text"] == "1.5 KiB"
    assert ok(units, "human_readable_size", size_bytes=1_500_000, binary=False)["text"] == "1.5 MB"
    assert ok(units, "human_readable_size", size_bytes=0)["text"] == "0 B"
