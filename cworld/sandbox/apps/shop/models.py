"""What the shop's tools take (argument types) and return (one pydantic model per answer, so every tool
has an output schema)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from cworld.sandbox.apps._shared.auth import LoginBase
from cworld.sandbox.apps._shared.records import Paged

TOKEN_MINUTES = 30

Token = Annotated[str, Field(description="session token from `login` (expires after 30 minutes)", max_length=200)]
ProductId = Annotated[str, Field(description="product id such as SKU-1042, from search_products", max_length=64)]
CartItemId = Annotated[str, Field(description="cart line id such as ci_0003, from view_cart", max_length=64)]
OrderId = Annotated[str, Field(description="order id such as ord_0002, from list_orders", max_length=64)]
Quantity = Annotated[int, Field(description="number of units (1-99)", ge=1, le=99)]


class LoginResult(LoginBase):
    token: str = Field(description="pass this as `token` to account tools (orders, addresses, checkout)")
    expires_at: str = Field(description="UTC time after which the token stops working; log in again then")


class ProductSummary(BaseModel):
    product_id: str
    name: str
    brand: str
    category: str
    price: float
    rating: float
    in_stock: bool


class ProductPage(Paged):
    products: list[ProductSummary]


class ProductDetails(ProductSummary):
    description: str
    reviews: int
    stock: int = Field(description="units available right now")
    max_per_order: int = Field(description="most units of this product one order may hold")


class CategoryCount(BaseModel):
    category: str
    products: int


class CategoryList(Paged):
    categories: list[CategoryCount]


class CartLine(BaseModel):
    cart_item_id: str
    product_id: str
    name: str
    unit_price: float
    quantity: int
    line_total: float
    problem: str | None = Field(description="why this line would stop checkout (e.g. out of stock), if it would")


class Cart(BaseModel):
    items: list[CartLine]
    coupon: str | None
    subtotal: float
    discount: float
    shipping: float
    total: float
    problems: list[str] = Field(description="everything that would make checkout fail right now")
    ready_for_checkout: bool


class Coupon(BaseModel):
    code: str
    description: str
    percent_off: float
    amount_off: float
    min_subtotal: float
    category: str | None = Field(description="the only category the coupon applies to, if any")
    expires_at: str
    status: str = Field(description="active, expired or used")


class CouponList(Paged):
    coupons: list[Coupon]


class Address(BaseModel):
    address_id: str
    label: str
    recipient: str
    street: str
    city: str
    postcode: str
    country: str
    is_default: bool


class AddressList(Paged):
    addresses: list[Address]


class PaymentMethod(BaseModel):
    payment_method_id: str
    brand: str
    last4: str
    expires: str = Field(description="card expiry month, YYYY-MM")
    holder: str
    is_default: bool
    expired: bool


class PaymentMethodList(Paged):
    payment_methods: list[PaymentMethod]


class OrderLine(BaseModel):
    product_id: str
    name: str
    quantity: int
    unit_price: float
    returned_quantity: int


class Order(BaseModel):
    order_id: str
    status: str = Field(description="processing, shipped, delivered or cancelled")
    placed_at: str
    delivered_at: str | None
    items: list[OrderLine]
    subtotal: float
    discount: float
    shipping: float
    total: float
    coupon: str | None
    address_id: str
    payment_method_id: str
    refunded: float = Field(description="money returned so far (cancellation or returns)")


class OrderSummary(BaseModel):
    order_id: str
    status: str
    placed_at: str
    total: float
    item_count: int


class OrderPage(Paged):
    orders: list[OrderSummary]


class ReturnRequest(BaseModel):
    return_id: str
    order_id: str
    product_id: str
    quantity: int
    refund: float
    reason: str
    status: str
    created_at: str


class Removed(BaseModel):
    removed_id: str
    message: str
