"""The math server: exact arithmetic, number theory, statistics, matrices and money math.

Pure functions with bounded inputs: big integers travel as decimal strings (JSON numbers lose precision past
2**53), and every size limit is in the schema, so an agent sees it before calling.

It holds no state (no `state.py`): every answer is a function of the call's arguments alone.
"""

from __future__ import annotations

from cworld.sandbox.stateless.mathematics.tools import ArithmeticTools
from cworld.sandbox.stateless.mathematics.tools_finance import FinanceTools
from cworld.sandbox.stateless.mathematics.tools_linalg import LinearAlgebraTools
from cworld.sandbox.stateless.mathematics.tools_stats import StatisticsTools
from cworld.sandbox.stateless.shared import StatelessApp


class MathServer(ArithmeticTools, StatisticsTools, LinearAlgebraTools, FinanceTools, StatelessApp):
    name = "math"
    title = "Math"
    description = (
        "Calculator tools: safe expression evaluation, exact big-integer arithmetic, "
        "primes, combinatorics, statistics, matrices and loan/interest math."
    )
    category = "math"
