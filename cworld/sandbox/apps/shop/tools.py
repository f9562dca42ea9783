"""The shop app's account, catalog, cart and wallet tools."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from cworld.sandbox.apps._shared.auth import log_in
from cworld.sandbox.apps._shared.records import (
    Page,
    PageSize,
    lookup,
    paginate,
    paginate_counted,
    paginate_in_order,
)
from cworld.sandbox.apps._shared.values import iso, matches, money, norm
from cworld.sandbox.apps.shop import state as rules
from cworld.sandbox.apps.shop.models import (
    TOKEN_MINUTES,
    Address,
    AddressList,
    Cart,
    CartItemId,
    CartLine,
    CategoryCount,
    CategoryList,
    Coupon,
    CouponList,
    LoginResult,
    PaymentMethod,
    PaymentMethodList,
    ProductDetails,
    ProductId,
    ProductPage,
    ProductSummary,
    Quantity,
    Removed,
    Token,
)
from cworld.sandbox.apps.shop.state import ShopBase
from cworld.sandbox.framework import AppError, tool
from cworld.sandbox.framework.index import BY_KEY


def _by_price(pid: str, p: dict[str, Any]) -> tuple[float, str]:
    return (p["price"], pid)


def _by_price_desc(pid: str, p: dict[str, Any]) -> tuple[float, str]:
    return (-p["price"], pid)


def _by_rating(pid: str, p: dict[str, Any]) -> tuple[float, str]:
    return (-p["rating"], pid)


def _by_relevance(pid: str, p: dict[str, Any]) -> tuple[float, str]:
    """Relevance when the search asks no word: no name holds one, so the rating decides."""
    return (0 - p["rating"] / 10, pid)


#: Each `sort` of search_products as a function of (product id, product): the catalog's sorted indexes' order.
ORDERS = {"price_asc": _by_price, "price_desc": _by_price_desc, "rating": _by_rating, "relevance": _by_relevance}


def _category(p: dict[str, Any]) -> tuple[str]:
    """A product's category: the groups list_categories counts (from the index, not a walk of the catalog)."""
    return (p["category"],)


def _stocked(p: dict[str, Any]) -> tuple[bool]:
    """Whether a product is in stock: the group a search without a category reads."""
    return (p["stock"] > 0,)


def _shelf(p: dict[str, Any]) -> tuple[tuple[str, bool]]:
    """A product's category and whether it is in stock: the group a search in a category reads."""
    return ((p["category"], p["stock"] > 0),)


class ShopTools(ShopBase):
    """Tools of the shop app (a mixin of `ShopApp`)."""

    # --- account ------------------------------------------------------------------------
    @tool(read_only=False)
    def login(
        self,
        email: Annotated[str, Field(description="the account's email address", max_length=200)],
        password: Annotated[str, Field(description="the account's password", max_length=200)],
    ) -> LoginResult:
        """Log in to the shop account and get a session token for account tools (valid 30 minutes; a new login
        replaces the previous token)."""
        account = self.state["account"]
        if norm(email) != account["email"] or password != account["password"]:
            raise AppError("auth", "email or password is wrong: check both and call login again")
        return log_in(self, "shop", TOKEN_MINUTES, account["name"], LoginResult)

    # --- catalog ------------------------------------------------------------------------
    @tool(read_only=True)
    def list_categories(self, page: Page = 1, page_size: PageSize = 20) -> CategoryList:
        """List the catalog's categories by name with how many products each holds (20 a page by default);
        search_products filters by these names."""
        counts = [(c, self.count_having("catalog", _category, c)) for c in sorted(self.held("catalog", _category))]
        chunk, meta = paginate(counts, page, page_size)
        return CategoryList(categories=[CategoryCount(category=c, products=n) for c, n in chunk], **meta)

    @tool(read_only=True)
    def search_products(
        self,
        query: Annotated[str, Field(description="words to look for in name, brand or description; empty lists all",
                                    max_length=200)] = "",
        category: Annotated[str | None, Field(description="exact category name from list_categories")] = None,
        min_price: Annotated[float | None, Field(description="lowest price to include", ge=0, le=1e6)] = None,
        max_price: Annotated[float | None, Field(description="highest price to include", ge=0, le=1e6)] = None,
        in_stock_only: Annotated[bool, Field(description="leave out products with no stock")] = False,
        sort: Annotated[Literal["relevance", "price_asc", "price_desc", "rating"],
                        Field(description="result order")] = "relevance",
        page: Page = 1,
        page_size: PageSize = 10,
    ) -> ProductPage:
        """Search the catalog by words, category, price range and stock, sorted and paginated; gives product ids."""
        if category is not None and not self.count("catalog", category=category):
            raise AppError("not_found", f"no category '{category}': list_categories shows the exact names")
        words = norm(query).split()
        if not words:
            chunk, meta = self._shelf_page(category, min_price, max_price, in_stock_only, sort, page, page_size)
            return ProductPage(products=[self._summary(pid) for pid in chunk], **meta)
        catalog = self.state["catalog"]
        in_category = {} if category is None else {"category": category}

        def fits(p: dict[str, Any]) -> bool:
            return ((not words or matches(query, p["name"], p["brand"], p["description"]))
                    and category in (None, p["category"]) and (min_price is None or p["price"] >= min_price)
                    and (max_price is None or p["price"] <= max_price) and (not in_stock_only or p["stock"] > 0))

        hits = [pid for pid in self.keys_matching("catalog", query, ("name", "brand", "description"), **in_category)
                if fits(catalog[pid])]
        first = heapq.nsmallest(page * page_size, hits, key=lambda pid: self._sort_key(pid, words, sort))
        chunk, meta = paginate_counted(iter(first), len(hits), page, page_size)  # only the pages up to this sorted
        return ProductPage(products=[self._summary(pid) for pid in chunk], **meta)

    def _shelf_page(self, category: str | None, min_price: float | None, max_price: float | None, in_stock: bool,
                    sort: str, page: int, page_size: int) -> tuple[list[str], dict[str, Any]]:
        """A page of a search without words, read off the catalog sorted in the search's order, per category and
        stock (a price range, in price order, is a window of it)."""
        stocked = [True] if in_stock else [True, False]
        having = (_stocked, stocked) if category is None else (_shelf, [(category, s) for s in stocked])
        within = (min_price, None if max_price is None else math.nextafter(max_price, math.inf))
        if sort == "price_asc" or within == (None, None):
            return paginate(self.ordered("catalog", ORDERS[sort], keys=True, having=having, within=within), page,
                            page_size)
        return self._priced_page(having, within, ORDERS[sort], page, page_size)

    def _priced_page(self, having: tuple[Any, Any], within: tuple[float | None, float | None],
                     order: Callable[[str, dict[str, Any]], tuple[float, str]], page: int,
                     page_size: int) -> tuple[list[str], dict[str, Any]]:
        """A page of a price range in another order than price's: the total is the price order's window; the
        page is read off `order`'s shelf while the range holds enough of it that few products are skipped,
        else the window is sorted up to the page (both what sorting every product in range gives)."""
        priced = self.ordered("catalog", _by_price, keys=True, having=having, within=within)
        shelf = self.ordered("catalog", order, keys=True, having=having)
        catalog, (lo, hi), end = self.state["catalog"], within, page * page_size
        if end * len(shelf) <= len(priced) ** 2:
            found = (pid for pid in shelf if (lo is None or catalog[pid]["price"] >= lo)
                     and (hi is None or catalog[pid]["price"] < hi))
            return paginate_counted(found, len(priced), page, page_size)
        first = heapq.nsmallest(end, priced, key=lambda pid: order(pid, catalog[pid]))
        return paginate_counted(iter(first), len(priced), page, page_size)

    def _sort_key(self, pid: str, words: list[str], sort: str) -> tuple[float, str]:
        p = self.state["catalog"][pid]
        if sort != "relevance" or not words:
            return ORDERS[sort](pid, p)
        in_name = sum(word in norm(p["name"]) for word in words)
        return (-in_name - p["rating"] / 10, pid)

    @tool(read_only=True)
    def get_product(self, product_id: ProductId) -> ProductDetails:
        """Full details of one product: price, description, current stock and the per-order limit."""
        product_id, p = self._product(product_id)
        return ProductDetails(**self._summary(product_id).model_dump(), description=p["description"],
                              reviews=p["reviews"], stock=p["stock"], max_per_order=p["max_per_order"])

    # --- cart ---------------------------------------------------------------------------
    @tool(read_only=True)
    def view_cart(self) -> Cart:
        """Show the cart: lines with their cart_item_id, the applied coupon, totals, and every problem that would
        stop checkout (look here before checking out: the cart may hold items from earlier visits)."""
        return self._cart()

    @tool(read_only=False)
    def add_to_cart(self, product_id: ProductId, quantity: Quantity = 1) -> Cart:
        """Add units of a product to the cart (a product already in the cart gets its quantity raised)."""
        product_id, product = self._product(product_id)
        items = self.state["cart"]["items"]
        line_id = next((cid for cid, i in items.items() if i["product_id"] == product_id), None)
        wanted = quantity + (items[line_id]["quantity"] if line_id else 0)
        self._check_quantity(product, wanted)
        if line_id:
            items[line_id]["quantity"] = wanted
        else:
            items[self.new_id("ci")] = {"product_id": product_id, "quantity": quantity, "added_at": iso(self.now)}
        return self._cart()

    @tool(read_only=False, destructive=True, idempotent=True)
    def update_cart_item(self, cart_item_id: CartItemId, quantity: Quantity) -> Cart:
        """Set the quantity of one cart line (use remove_cart_item to drop it)."""
        line = self._line(cart_item_id)
        self._check_quantity(self.state["catalog"][line["product_id"]], quantity)
        line["quantity"] = quantity
        return self._cart()

    @tool(read_only=False, destructive=True, idempotent=True)
    def remove_cart_item(self, cart_item_id: CartItemId) -> Cart:
        """Remove one line from the cart."""
        self._line(cart_item_id)
        del self.state["cart"]["items"][cart_item_id]
        return self._cart()

    @tool(read_only=False, destructive=True, idempotent=True)
    def apply_coupon(
        self, code: Annotated[str, Field(description="coupon code from list_coupons", max_length=40)]
    ) -> Cart:
        """Apply a coupon code to the cart (one code per order; it replaces a code applied before)."""
        code = code.strip().upper()
        problem = rules.coupon_problem(self.state, code, self.now)
        if problem:
            raise AppError("not_found" if code not in self.state["coupons"] else "conflict", problem)
        self.state["cart"]["coupon"] = code
        return self._cart()

    @tool(read_only=False, destructive=True, idempotent=True)
    def remove_coupon(self) -> Cart:
        """Take the coupon code off the cart (no-op when none is applied)."""
        self.state["cart"]["coupon"] = None
        return self._cart()

    # --- wallet, addresses, cards -------------------------------------------------------
    @tool(read_only=True)
    def list_coupons(self, token: Token, page: Page = 1, page_size: PageSize = 20) -> CouponList:
        """The coupon codes in the account's wallet, by code, with their conditions and status (active, expired,
        used), 20 a page by default."""
        self._auth(token)
        coupons = self.state["coupons"]
        codes, meta = paginate(self.ordered("coupons", (BY_KEY,), keys=True), page, page_size)
        return CouponList(coupons=[Coupon(code=code, status=rules.coupon_status(coupons[code], self.now),
                                          **{k: v for k, v in coupons[code].items() if k != "used"})
                                   for code in codes], **meta)

    @tool(read_only=True)
    def list_addresses(self, token: Token, page: Page = 1, page_size: PageSize = 20) -> AddressList:
        """The account's saved shipping addresses with their ids (checkout needs one), 20 a page by default."""
        self._auth(token)
        chunk, meta = paginate_in_order(self.state["addresses"].items(), page, page_size)
        return AddressList(addresses=[Address(address_id=a, **v) for a, v in chunk], **meta)

    @tool(read_only=False)
    def add_address(
        self,
        token: Token,
        label: Annotated[str, Field(description="short name such as home or office", min_length=1, max_length=40)],
        recipient: Annotated[str, Field(description="full name of the person receiving parcels", min_length=1,
                                        max_length=100)],
        street: Annotated[str, Field(description="street and house number", min_length=1, max_length=200)],
        city: Annotated[str, Field(description="city", min_length=1, max_length=100)],
        postcode: Annotated[str, Field(description="postal code", min_length=1, max_length=20)],
        country: Annotated[str, Field(description="country name", min_length=1, max_length=60)],
        make_default: Annotated[bool, Field(description="use it as the default shipping address")] = False,
    ) -> Address:
        """Save a new shipping address to the account and get its address_id."""
        self._auth(token)
        addresses = self.state["addresses"]
        if make_default or not addresses:
            for a in addresses.values():
                a["is_default"] = False
        record = {"label": label, "recipient": recipient, "street": street, "city": city, "postcode": postcode,
                  "country": country, "is_default": make_default or not addresses}
        address_id = self.new_id("addr")
        addresses[address_id] = record
        return Address(address_id=address_id, **record)

    @tool(read_only=False, destructive=True, idempotent=True)
    def delete_address(
        self, token: Token, address_id: Annotated[str, Field(description="address id from list_addresses",
                                                            max_length=64)]
    ) -> Removed:
        """Delete a saved shipping address (orders already placed keep their delivery details)."""
        self._auth(token)
        self._address(address_id)
        del self.state["addresses"][address_id]
        return Removed(removed_id=address_id, message="address deleted")

    @tool(read_only=True)
    def list_payment_methods(self, token: Token, page: Page = 1, page_size: PageSize = 20) -> PaymentMethodList:
        """The account's saved cards with their ids, expiry and whether they have expired (20 a page by default)."""
        self._auth(token)
        chunk, meta = paginate_in_order(self.state["payment_methods"].items(), page, page_size)
        return PaymentMethodList(payment_methods=[
            PaymentMethod(payment_method_id=pm, expired=rules.card_expired(c, self.now), **c) for pm, c in chunk],
            **meta)

    # --- helpers ------------------------------------------------------------------------
    def _product(self, product_id: str) -> tuple[str, dict[str, Any]]:
        """(canonical id, product): ids are matched case-insensitively, stored as the catalog spells them."""
        canonical = product_id.strip().upper()
        product = self.state["catalog"].get(canonical)
        if product is None:
            raise AppError("not_found", f"no product '{product_id}': ids look like SKU-1042; find them with "
                                        "search_products")
        return canonical, product

    def _line(self, cart_item_id: str) -> dict[str, Any]:
        return lookup(self.state["cart"]["items"], cart_item_id,
                      f"no cart line '{cart_item_id}': view_cart shows the cart_item_id of each line")

    def _check_quantity(self, product: dict[str, Any], wanted: int) -> None:
        if product["stock"] == 0:
            raise AppError("limit", f"{product['name']} is out of stock: pick another product")
        if wanted > product["stock"]:
            raise AppError("limit", f"only {product['stock']} of {product['name']} in stock; the cart would hold "
                                    f"{wanted}: ask for fewer")
        if wanted > product["max_per_order"]:
            raise AppError("limit", f"at most {product['max_per_order']} of {product['name']} per order; the cart "
                                    f"would hold {wanted}: ask for fewer")

    def _summary(self, pid: str) -> ProductSummary:
        p = self.state["catalog"][pid]
        return ProductSummary(product_id=pid, name=p["name"], brand=p["brand"], category=p["category"],
                              price=p["price"], rating=p["rating"], in_stock=p["stock"] > 0)

    def _cart(self) -> Cart:
        cart, catalog = self.state["cart"], self.state["catalog"]
        lines = []
        for cid, item in cart["items"].items():
            p = catalog[item["product_id"]]
            lines.append(CartLine(cart_item_id=cid, product_id=item["product_id"], name=p["name"],
                                  unit_price=p["price"], quantity=item["quantity"],
                                  line_total=money(p["price"] * item["quantity"]),
                                  problem=rules.line_problem(p, item["quantity"])))
        problems = [line.problem for line in lines if line.problem]
        if cart["coupon"] and (coupon_issue := rules.coupon_problem(self.state, cart["coupon"], self.now)):
            problems.append(coupon_issue)
        if not lines:
            problems.append("the cart is empty: add_to_cart first")
        return Cart(items=lines, coupon=cart["coupon"], problems=problems, ready_for_checkout=not problems,
                    **rules.totals(self.state, self.now))
