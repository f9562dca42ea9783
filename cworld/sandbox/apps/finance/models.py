"""What the finance app's tools take (argument types) and return (pydantic models: every tool has an output
schema)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from cworld.sandbox.apps._shared.auth import LoginBase
from cworld.sandbox.apps._shared.records import Paged

Token = Annotated[str, Field(description="session token from `login` (expires after 10 minutes)", max_length=200)]
Symbol = Annotated[str, Field(description="ticker symbol such as NWSC; find_symbol resolves company names",
                              min_length=1, max_length=12)]
AccountId = Annotated[str, Field(description="account id such as acct_0001, from list_accounts", max_length=40)]
Amount = Annotated[float, Field(description="amount in USD (at least 0.01)", ge=0.01, le=10_000_000)]
Shares = Annotated[int, Field(description="number of shares (1-100000)", ge=1, le=100_000)]
Price = Annotated[float, Field(description="price per share in USD", gt=0, le=1_000_000)]
TransferId = Annotated[str, Field(description="transfer id such as trf_0002, from create_transfer or "
                                               "list_transfers", max_length=40)]
WatchlistId = Annotated[str, Field(description="watchlist id such as wl_0001, from list_watchlists", max_length=40)]
OrderStatus = Literal["open", "filled", "cancelled"]


class LoginResult(LoginBase):
    token: str = Field(description="pass as `token` to account tools")
    expires_at: str = Field(description="UTC time the token stops working; log in again after it")


class SymbolMatch(BaseModel):
    symbol: str
    company: str
    sector: str
    exchange: str


class SymbolList(Paged):
    matches: list[SymbolMatch]


class Quote(BaseModel):
    symbol: str
    company: str
    price: float = Field(description="last trade price")
    bid: float = Field(description="what a market sell order gets")
    ask: float = Field(description="what a market buy order pays")
    previous_close: float
    change_percent: float
    pe_ratio: float | None
    dividend_yield: float
    market_cap_billions: float
    market_open: bool


class PricePoint(BaseModel):
    date: str
    close: float


class PriceHistory(BaseModel):
    symbol: str
    closes: list[PricePoint] = Field(description="daily closes, oldest first, trading days only")


class MarketStatus(BaseModel):
    open: bool
    now: str
    next_open: str | None = Field(description="when the market opens next, if it is closed")
    closes_at: str | None = Field(description="when today's session ends, if it is open")
    hours: str


class Account(BaseModel):
    account_id: str
    kind: str = Field(description="checking, savings or brokerage")
    name: str
    number: str = Field(description="masked account number")
    balance: float
    available: float = Field(description="balance minus holds (pending transfers, open buy orders)")


class AccountList(Paged):
    accounts: list[Account]


class Transaction(BaseModel):
    transaction_id: str
    account_id: str
    at: str
    kind: str
    description: str
    amount: float = Field(description="positive in, negative out")
    balance_after: float


class TransactionPage(Paged):
    transactions: list[Transaction]


class Position(BaseModel):
    symbol: str
    quantity: int
    average_cost: float
    price: float
    market_value: float
    unrealized_gain: float
    reserved: int = Field(description="shares held back by open sell orders")


class Portfolio(BaseModel):
    positions: list[Position]
    cash: float
    cash_available: float
    total_value: float


class Order(BaseModel):
    order_id: str
    symbol: str
    side: str
    order_type: str
    quantity: int
    limit_price: float | None
    stop_price: float | None
    status: str = Field(description="open, filled or cancelled")
    placed_at: str
    filled_at: str | None
    fill_price: float | None


class OrderPage(Paged):
    orders: list[Order]


class Payee(BaseModel):
    payee_id: str
    name: str
    bank: str
    account: str


class PayeeList(Paged):
    payees: list[Payee]


class Transfer(BaseModel):
    transfer_id: str
    from_account_id: str
    to_id: str = Field(description="an own account id or a payee id")
    to_name: str
    amount: float
    memo: str
    status: str = Field(description="pending_confirmation, completed or cancelled")
    created_at: str
    completed_at: str | None
    next_step: str = Field(description="what to do next, if anything")


class TransferList(Paged):
    transfers: list[Transfer]


class AuthenticatorCode(BaseModel):
    transfer_id: str
    code: str
    expires_at: str
    expired: bool


class Authenticator(Paged):
    codes: list[AuthenticatorCode] = Field(description="one-time codes sent to the account holder's phone")


class Watchlist(BaseModel):
    watchlist_id: str
    name: str
    symbols: list[str]


class WatchlistList(Paged):
    watchlists: list[Watchlist]
