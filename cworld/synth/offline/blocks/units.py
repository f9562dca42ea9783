"""Unit-converter block: what an amount an anchor left (a payment, an order, a fare) comes to in another
currency. The amount goes to the final answer only (a dictated text holds only what the request states)."""

from __future__ import annotations

from cworld.synth.offline.composer import Composer, follow_up

APP = "units"


def currency(c: Composer) -> None:
    ref, value, label = c.facts["amount"]
    target = c.rng.choice(["EUR", "GBP", "JPY", "CAD", "CHF"])
    c.subgoal("convert", label=label, currency=target)
    asked = {"amount": ref, "from_currency": "USD", "to_currency": target}
    converted = c.step("convert", "units/convert_currency", asked, label=label, currency=target)
    amount = converted.ref("amount")
    c.say(*c.variants("currency.say", label=label, currency=target))
    c.hint(c.text("currency.hint", Label=label.capitalize(), currency=target, amount=amount))
    c.report(c.text("currency.report", currency=target), amount)


BLOCKS = [follow_up("currency", APP, frozenset({"units/convert_currency"}), currency, needs="amount")]
