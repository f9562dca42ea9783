"""The shop's checkout and order tools, as a base class of `ShopApp` (one app, its tools split by concept).

Checkout checks everything before it changes anything, so a refused checkout leaves the cart, stock and
coupons exactly as they were even when called directly (the server adapter also restores state).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from cworld.sandbox.apps._shared.records import Page, PageSize, lookup, paginate
from cworld.sandbox.apps._shared.values import iso, later, money, parse_iso
from cworld.sandbox.apps.shop import state as rules
from cworld.sandbox.apps.shop.models import (
    Order,
    OrderId,
    OrderLine,
    OrderPage,
    OrderSummary,
    ProductId,
    Quantity,
    ReturnRequest,
    Token,
)
from cworld.sandbox.apps.shop.state import ShopBase
from cworld.sandbox.framework import AppError, tool
from cworld.sandbox.framework.index import BY_KEY

AddressId = Annotated[str, Field(description="address id from list_addresses or add_address", max_length=64)]
PaymentId = Annotated[str, Field(description="card id from list_payment_methods", max_length=64)]


class OrderTools(ShopBase):
    """Checkout, order history, cancellation and returns."""

    @tool(read_only=False, destructive=True)
    def checkout(self, token: Token, address_id: AddressId, payment_method_id: PaymentId) -> Order:
        """Buy everything in the cart: ships to a saved address, charges a saved, unexpired card and applies the
        cart's coupon. Shipping costs 4.99, free from 50.00 after discounts. Fails, changing nothing, while
        view_cart lists problems (stock, expired coupon)."""
        self._auth(token)
        state = self.state
        if not state["cart"]["items"]:
            raise AppError("precondition", "the cart is empty: add_to_cart first")
        self._address(address_id)
        self._usable_card(payment_method_id)
        self._check_cart()
        order_id = self.new_id("ord")
        state["orders"][order_id] = self._new_order(address_id, payment_method_id)
        for line in state["cart"]["items"].values():
            state["catalog"][line["product_id"]]["stock"] -= line["quantity"]
        if state["cart"]["coupon"]:
            state["coupons"][state["cart"]["coupon"]]["used"] = True
        state["cart"] = {"items": {}, "coupon": None}
        return self._order_view(order_id)

    @tool(read_only=True)
    def list_orders(
        self,
        token: Token,
        status: Annotated[Literal["processing", "shipped", "delivered", "cancelled"] | None,
                          Field(description="only orders in this status")] = None,
        page: Page = 1,
        page_size: PageSize = 10,
    ) -> OrderPage:
        """The account's orders, newest first, optionally by status, paginated."""
        self._auth(token)
        in_status: dict[str, Any] = {} if status is None else {"status": status}
        ids = self.ordered("orders", ("placed_at", BY_KEY), reverse=True, keys=True, **in_status)
        chunk, meta = paginate(ids, page, page_size)
        return OrderPage(orders=[self._order_summary(o) for o in chunk], **meta)

    @tool(read_only=True)
    def get_order(self, token: Token, order_id: OrderId) -> Order:
        """Everything about one order: items (with product ids), amounts, status, delivery and refunds."""
        self._auth(token)
        self._order(order_id)
        return self._order_view(order_id)

    @tool(read_only=False, destructive=True, idempotent=True)
    def cancel_order(self, token: Token, order_id: OrderId) -> Order:
        """Cancel an order that has not shipped yet: the full amount is refunded and the stock released.
        Cancelling an already-cancelled order changes nothing."""
        self._auth(token)
        order = self._order(order_id)
        if order["status"] in ("shipped", "delivered"):
            raise AppError("conflict", f"order {order_id} is already {order['status']} and cannot be cancelled: "
                                       "once delivered, use request_return")
        if order["status"] == "processing":
            order["status"] = "cancelled"
            order["refunded"] = order["total"]
            for item in order["items"]:
                if item["product_id"] in self.state["catalog"]:
                    self.state["catalog"][item["product_id"]]["stock"] += item["quantity"]
        return self._order_view(order_id)

    @tool(read_only=False)
    def request_return(
        self,
        token: Token,
        order_id: OrderId,
        product_id: ProductId,
        quantity: Quantity,
        reason: Annotated[str, Field(description="why the item goes back", min_length=1, max_length=300)],
    ) -> ReturnRequest:
        """Return units of a delivered item within 30 days of delivery; the refund is the price paid for them."""
        self._auth(token)
        order = self._order(order_id)
        item = self._returnable_item(order_id, order, product_id, quantity)
        share = 1 - order["discount"] / order["subtotal"] if order["subtotal"] else 1
        refund = money(item["unit_price"] * quantity * share)
        item["returned_quantity"] += quantity
        order["refunded"] = money(order["refunded"] + refund)
        return_id = self.new_id("ret")
        record = {"order_id": order_id, "product_id": item["product_id"], "quantity": quantity, "refund": refund,
                  "reason": reason, "status": "approved", "created_at": iso(self.now)}
        self.state["returns"][return_id] = record
        return ReturnRequest(return_id=return_id, **record)

    # --- helpers ------------------------------------------------------------------------
    def _order(self, order_id: str) -> dict[str, Any]:
        return lookup(self.state["orders"], order_id,
                      f"no order '{order_id}' on this account: list_orders shows order ids")

    def _usable_card(self, payment_method_id: str) -> None:
        card = self.state["payment_methods"].get(payment_method_id)
        if card is None:
            raise AppError("not_found", f"no saved card '{payment_method_id}': list_payment_methods shows ids")
        if rules.card_expired(card, self.now):
            raise AppError("conflict", f"card {card['brand']} ending {card['last4']} expired in {card['expires']}: "
                                       "pick another card from list_payment_methods")

    def _check_cart(self) -> None:
        state = self.state
        problems = [p for line in state["cart"]["items"].values()
                    if (p := rules.line_problem(state["catalog"][line["product_id"]], line["quantity"]))]
        code = state["cart"]["coupon"]
        if code and (issue := rules.coupon_problem(state, code, self.now)):
            problems.append(issue)
        if problems:
            raise AppError("conflict", "checkout stopped, nothing was charged: " + "; ".join(problems))

    def _new_order(self, address_id: str, payment_method_id: str) -> dict[str, Any]:
        state = self.state
        items = [{"product_id": line["product_id"], "name": state["catalog"][line["product_id"]]["name"],
                  "quantity": line["quantity"], "unit_price": state["catalog"][line["product_id"]]["price"],
                  "returned_quantity": 0} for line in state["cart"]["items"].values()]
        return {"status": "processing", "placed_at": iso(self.now), "delivered_at": None, "items": items,
                **rules.totals(state, self.now), "coupon": state["cart"]["coupon"], "address_id": address_id,
                "payment_method_id": payment_method_id, "refunded": 0.0}

    def _returnable_item(self, order_id: str, order: dict[str, Any], product_id: str, quantity: int
                         ) -> dict[str, Any]:
        if order["status"] != "delivered":
            raise AppError("conflict", f"order {order_id} is {order['status']}: only delivered orders can be "
                                       "returned (cancel_order stops an order that has not shipped)")
        deadline = later(parse_iso(order["delivered_at"]), days=rules.RETURN_WINDOW_DAYS)
        if parse_iso(deadline) < self.now:
            raise AppError("conflict", f"the return window for order {order_id} closed at {deadline}")
        item = next((i for i in order["items"] if i["product_id"] == product_id.strip().upper()), None)
        if item is None:
            raise AppError("not_found", f"order {order_id} has no product '{product_id}': get_order lists its items")
        left = item["quantity"] - item["returned_quantity"]
        if quantity > left:
            raise AppError("limit", f"only {left} unit(s) of {item['name']} in order {order_id} can still be "
                                    "returned: ask for fewer")
        return item

    def _order_view(self, order_id: str) -> Order:
        o = self.state["orders"][order_id]
        return Order(order_id=order_id, items=[OrderLine(**i) for i in o["items"]],
                     **{k: v for k, v in o.items() if k != "items"})

    def _order_summary(self, order_id: str) -> OrderSummary:
        o = self.state["orders"][order_id]
        return OrderSummary(order_id=order_id, status=o["status"], placed_at=o["placed_at"], total=o["total"],
                            item_count=sum(i["quantity"] for i in o["items"]))
