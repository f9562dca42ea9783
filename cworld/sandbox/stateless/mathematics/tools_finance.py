"""Money tools of the math server (a mixin): compound interest, loan payments, present value, change."""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import Field

from cworld.sandbox.framework import tool
from cworld.sandbox.stateless.mathematics.models import (
    CompoundInterest,
    LoanPayment,
    Money,
    PercentChange,
    RatePercent,
)
from cworld.sandbox.stateless.shared import NumberResult, Real, clean, invalid, rejecting


def _cents(x: float) -> float:
    return round(clean(x, "amount"), 2) + 0.0


class FinanceTools:
    @tool(read_only=True)
    def compound_interest(
        self,
        principal: Money,
        annual_rate_percent: RatePercent,
        years: Annotated[
            float, Field(description="How long the money grows, in years (0..200).", ge=0, le=200)
        ],
        compounds_per_year: Annotated[
            int,
            Field(
                description="Compounding periods a year: 1 yearly, 12 monthly, "
                "365 daily; 0 means continuous.",
                ge=0,
                le=365,
            ),
        ] = 12,
    ) -> CompoundInterest:
        """The balance after compound interest: P·(1 + r/n)^(n·t), or P·e^(r·t) when compounding is
        continuous (compounds_per_year = 0)."""
        r = annual_rate_percent / 100
        if compounds_per_year == 0:
            amount = principal * math.exp(r * years)
        else:
            amount = principal * (1 + r / compounds_per_year) ** (compounds_per_year * years)
        return CompoundInterest(final_amount=_cents(amount), interest_earned=_cents(amount - principal))

    @tool(read_only=True)
    def loan_payment(
        self,
        principal: Money,
        annual_rate_percent: RatePercent,
        months: Annotated[int, Field(description="Number of monthly payments (1..1200).", ge=1, le=1200)],
    ) -> LoanPayment:
        """The fixed monthly payment that repays an amortized loan (mortgage, car loan) in `months`
        payments: P·i / (1 - (1+i)^-n) with i the monthly rate; P/n when the rate is 0."""
        i = annual_rate_percent / 100 / 12
        # expm1/log1p keep 1 - (1+i)^-n accurate, and non-zero, for tiny rates (the plain form divides by 0)
        payment = principal / months if i == 0 else principal * i / -math.expm1(-months * math.log1p(i))
        payment = _cents(payment)
        total = _cents(payment * months)
        return LoanPayment(payment=payment, total_paid=total, total_interest=_cents(total - principal))

    @tool(read_only=True)
    def net_present_value(
        self,
        rate_percent: Annotated[
            float, Field(description="Discount rate per period in percent (-99..1000).", ge=-99, le=1000)
        ],
        cash_flows: Annotated[
            list[Real],
            Field(
                description="Cash flow of each period, the first at period 0 "
                "(usually the negative investment).",
                min_length=1,
                max_length=1000,
            ),
        ],
    ) -> NumberResult:
        """Net present value: the sum of cash_flow[t] / (1 + rate)^t for t = 0, 1, 2, ..."""
        r = rate_percent / 100
        with rejecting(
            (OverflowError, ZeroDivisionError),
            "the discount factors overflow for this rate and horizon; use fewer periods or "
            "a rate closer to 0",
        ):
            npv = math.fsum(cf / (1 + r) ** t for t, cf in enumerate(cash_flows))
        return NumberResult(value=clean(npv, "NPV"))

    @tool(read_only=True)
    def percentage_change(
        self,
        old: Annotated[Real, Field(description="The starting value (not 0).")],
        new: Annotated[Real, Field(description="The new value.")],
    ) -> PercentChange:
        """The percentage change from `old` to `new`, e.g. 80 -> 100 is +25%."""
        if old == 0:
            raise invalid("the percentage change from 0 is undefined; pass a non-zero old value")
        return PercentChange(percent=clean((new - old) / abs(old) * 100), difference=clean(new - old))
