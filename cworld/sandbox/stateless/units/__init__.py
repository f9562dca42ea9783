"""The units server: conversions of length, mass, volume, temperature, data sizes, currency and more.

The thirteen factor-based dimensions share one tool factory, so their tools differ only in the table they
read; the non-linear ones (temperature, fuel economy, currency, cooking) are written out.

It holds no state (no `state.py`): every answer is a function of the call's arguments alone.
"""

from __future__ import annotations

from cworld.sandbox.stateless.shared import StatelessApp
from cworld.sandbox.stateless.units.tools import ConversionTools


class UnitsServer(ConversionTools, StatelessApp):
    name = "units"
    title = "Unit converter"
    description = (
        "Unit conversions: length, mass, volume, area, temperature, speed, time, data "
        "sizes, energy, pressure, power, angles, frequency, fuel economy, cooking "
        "measures and currency (fixed rates)."
    )
    category = "units"
