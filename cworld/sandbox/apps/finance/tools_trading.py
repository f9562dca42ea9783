"""The finance app's trading tools, as a base class of `FinanceApp`: orders against the brokerage account.

Market orders execute only while the market is open (by the virtual clock); limit orders execute at once
when the price allows and the market is open, otherwise they rest (and hold cash) until cancelled; stop
orders protect a position and rest. Prices hold still during a session.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from cworld.sandbox.apps._shared.records import Page, PageSize, paginate
from cworld.sandbox.apps._shared.values import iso, money
from cworld.sandbox.apps.finance import state as fin
from cworld.sandbox.apps.finance.models import (
    Order,
    OrderPage,
    OrderStatus,
    Portfolio,
    Position,
    Price,
    Shares,
    Symbol,
    Token,
)
from cworld.sandbox.framework import AppError, SandboxApp, tool
from cworld.sandbox.framework.index import BY_KEY

OrderId = Annotated[str, Field(description="order id such as trd_0001, from list_orders", max_length=40)]


class TradingTools(SandboxApp):
    """Orders, positions and the portfolio."""

    @tool(read_only=False, destructive=True)
    def place_order(
        self,
        token: Token,
        symbol: Symbol,
        side: Annotated[Literal["buy", "sell"], Field(description="buy or sell")],
        quantity: Shares,
        order_type: Annotated[Literal["market", "limit", "stop"],
                              Field(description="market (now, at the bid/ask), limit (at limit_price or better) "
                                                "or stop (a stop-loss sell at stop_price)")] = "market",
        limit_price: Annotated[Price | None, Field(description="limit orders only: worst price accepted")] = None,
        stop_price: Annotated[Price | None, Field(description="stop orders only: sell when the price falls to "
                                                              "this")] = None,
    ) -> Order:
        """Buy or sell shares from the brokerage account. Buying needs the cash available there (transfer money
        in first if short); market orders need the market open (get_market_status)."""
        fin.require_login(self, token)
        symbol, info = fin.listed(self, symbol)
        self._check_prices(order_type, side, limit_price, stop_price, info["price"])
        bid, ask = fin.bid_ask(info["price"])
        opened = fin.is_open(self.now)
        if order_type == "market" and not opened:
            raise AppError("precondition", f"the market is closed ({fin.HOURS}); it opens at "
                                           f"{iso(fin.next_open(self.now))}: wait, or place a limit order to rest")
        fills = opened and (order_type == "market" or (order_type == "limit" and (
            (side == "buy" and limit_price is not None and limit_price >= ask)
            or (side == "sell" and limit_price is not None and limit_price <= bid))))
        price = ask if side == "buy" else bid
        if side == "buy":
            self._cash_for(quantity * (price if fills or limit_price is None else limit_price))
        else:
            self._shares_for(symbol, quantity)
        order_id = self.new_id("trd")
        self.state["orders"][order_id] = {
            "account_id": fin.brokerage_id(self.state), "symbol": symbol, "side": side, "order_type": order_type,
            "quantity": quantity, "limit_price": limit_price, "stop_price": stop_price, "status": "open",
            "placed_at": iso(self.now), "filled_at": None, "fill_price": None}
        if fills:
            self._fill(order_id, price)
        return self._order_view(order_id)

    @tool(read_only=False, destructive=True, idempotent=True)
    def cancel_order(self, token: Token, order_id: OrderId) -> Order:
        """Cancel an open order; the cash or shares it held become available. Cancelling twice changes nothing."""
        fin.require_login(self, token)
        order = self.state["orders"].get(order_id)
        if order is None:
            raise AppError("not_found", f"no order '{order_id}': list_orders shows order ids")
        if order["status"] == "filled":
            raise AppError("conflict", f"order {order_id} already filled at {order['fill_price']}: place an "
                                       "opposite order to undo it")
        order["status"] = "cancelled"
        return self._order_view(order_id)

    @tool(read_only=True)
    def list_orders(
        self,
        token: Token,
        status: Annotated[OrderStatus | None, Field(description="only orders in this status")] = None,
        page: Page = 1,
        page_size: PageSize = 10,
    ) -> OrderPage:
        """Orders, newest first, optionally by status (open orders hold cash or shares), paginated."""
        fin.require_login(self, token)
        of_status: dict[str, Any] = {} if status is None else {"status": status}
        ids = self.ordered("orders", ("placed_at", BY_KEY), reverse=True, keys=True,
                           **of_status)
        chunk, meta = paginate(ids, page, page_size)
        return OrderPage(orders=[self._order_view(o) for o in chunk], **meta)

    @tool(read_only=True)
    def get_portfolio(self, token: Token) -> Portfolio:
        """Positions at today's prices with gains, plus the brokerage cash and how much of it is free to use."""
        fin.require_login(self, token)
        listed = fin.market(self)["listed"]
        positions = []
        for symbol, p in sorted(self.state["positions"].items()):
            price = listed[symbol]["price"]
            value = money(price * p["quantity"])
            positions.append(Position(symbol=symbol, quantity=p["quantity"], average_cost=p["average_cost"],
                                      price=price, market_value=value,
                                      unrealized_gain=money(value - p["average_cost"] * p["quantity"]),
                                      reserved=fin.reserved_shares(self, symbol)))
        broker = fin.brokerage_id(self.state)
        cash = self.state["accounts"][broker]["balance"]
        return Portfolio(positions=positions, cash=cash, cash_available=fin.available(self, broker),
                         total_value=money(cash + sum(p.market_value for p in positions)))

    # --- helpers ------------------------------------------------------------------------
    @staticmethod
    def _check_prices(order_type: str, side: str, limit: float | None, stop: float | None, price: float) -> None:
        if order_type == "limit" and (limit is None or stop is not None):
            raise AppError("invalid", "a limit order takes limit_price (and no stop_price)")
        if order_type == "market" and (limit is not None or stop is not None):
            raise AppError("invalid", "a market order takes no limit_price or stop_price: use order_type limit")
        if order_type == "stop":
            if side != "sell" or stop is None or limit is not None:
                raise AppError("invalid", "a stop order is a stop-loss sell: side sell with stop_price only")
            if stop >= fin.bid_ask(price)[0]:
                raise AppError("invalid", f"stop_price {stop} must be below the current bid "
                                          f"{fin.bid_ask(price)[0]}: it sells when the price falls")

    def _cash_for(self, cost: float) -> None:
        broker = fin.brokerage_id(self.state)
        free = fin.available(self, broker)
        if money(cost) > free:
            raise AppError("insufficient_funds", f"this order needs {cost:,.2f} and the brokerage account has "
                                                 f"{free:,.2f} available: transfer money in (create_transfer) or "
                                                 "cancel open buy orders")

    def _shares_for(self, symbol: str, quantity: int) -> None:
        held = self.state["positions"].get(symbol, {}).get("quantity", 0)
        reserved = fin.reserved_shares(self, symbol)
        if quantity > held - reserved:
            raise AppError("limit", f"you hold {held} {symbol} ({reserved} reserved by open sell orders): sell at "
                                    f"most {held - reserved}")

    def _fill(self, order_id: str, price: float) -> None:
        order = self.state["orders"][order_id]
        symbol, quantity = order["symbol"], order["quantity"]
        positions = self.state["positions"]
        if order["side"] == "buy":
            fin.post(self, order["account_id"], "trade", f"Buy {quantity} {symbol} @ {price}", -quantity * price)
            old = positions.get(symbol, {"quantity": 0, "average_cost": 0.0})
            total = old["quantity"] + quantity
            cost = money((old["average_cost"] * old["quantity"] + price * quantity) / total)
            positions[symbol] = {"quantity": total, "average_cost": cost}
        else:
            fin.post(self, order["account_id"], "trade", f"Sell {quantity} {symbol} @ {price}", quantity * price)
            positions[symbol]["quantity"] -= quantity
            if positions[symbol]["quantity"] == 0:
                del positions[symbol]
        order.update(status="filled", filled_at=iso(self.now), fill_price=price)

    def _order_view(self, order_id: str) -> Order:
        return Order(order_id=order_id, **{k: v for k, v in self.state["orders"][order_id].items()
                                           if k != "account_id"})

