"""The finance app's market-data, customer and watchlist tools."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from cworld.sandbox.apps._shared.auth import log_in
from cworld.sandbox.apps._shared.records import Page, PageSize, lookup, paginate, paginate_in_order
from cworld.sandbox.apps._shared.values import iso, matches
from cworld.sandbox.apps.finance import state as fin
from cworld.sandbox.apps.finance.models import (
    Account,
    AccountId,
    AccountList,
    LoginResult,
    MarketStatus,
    PriceHistory,
    PricePoint,
    Quote,
    Symbol,
    SymbolList,
    SymbolMatch,
    Token,
    Transaction,
    TransactionPage,
    Watchlist,
    WatchlistId,
    WatchlistList,
)
from cworld.sandbox.framework import AppError, SandboxApp, tool
from cworld.sandbox.framework.index import BY_KEY

TOKEN_MINUTES = 10


class FinanceTools(SandboxApp):
    """Tools of the finance app (a mixin of `FinanceApp`)."""

    # --- market data --------------------------------------------------------------------
    @tool(read_only=True)
    def find_symbol(
        self, query: Annotated[str, Field(description="company name or part of it, or a symbol", min_length=1,
                                          max_length=100)],
        page: Page = 1,
        page_size: PageSize = 20,
    ) -> SymbolList:
        """Look up ticker symbols by company name (or symbol), by symbol (20 a page by default); other tools
        take the symbol."""
        listed = fin.market(self)["listed"]
        found = [(s, v) for s, v in sorted(listed.items()) if matches(query, v["company"], s)]
        chunk, meta = paginate(found, page, page_size)
        hits = [SymbolMatch(symbol=s, company=v["company"], sector=v["sector"], exchange=v["exchange"]) for s, v in chunk]
        return SymbolList(matches=hits, **meta)

    @tool(read_only=True)
    def get_quote(self, symbol: Symbol) -> Quote:
        """Today's price, bid and ask, change from the previous close and key figures for a symbol."""
        symbol, info = fin.listed(self, symbol)
        bid, ask = fin.bid_ask(info["price"])
        change = (info["price"] / info["previous_close"] - 1) * 100
        return Quote(symbol=symbol, company=info["company"], price=info["price"], bid=bid, ask=ask,
                     previous_close=info["previous_close"], change_percent=round(change, 2),
                     pe_ratio=info["pe_ratio"], dividend_yield=info["dividend_yield"],
                     market_cap_billions=info["market_cap_b"], market_open=fin.is_open(self.now))

    @tool(read_only=True)
    def get_price_history(
        self, symbol: Symbol, days: Annotated[int, Field(description="trading days back (1-60)", ge=1, le=60)] = 20
    ) -> PriceHistory:
        """Daily closing prices for the last trading days, oldest first."""
        symbol, _ = fin.listed(self, symbol)
        return PriceHistory(symbol=symbol, closes=[PricePoint(date=d, close=c) for d, c in
                                                   fin.history(self, symbol, days)])

    @tool(read_only=True)
    def get_market_status(self) -> MarketStatus:
        """Whether the exchange is open now (virtual clock), when it next opens or today's closing time."""
        opened = fin.is_open(self.now)
        return MarketStatus(open=opened, now=iso(self.now), hours=fin.HOURS,
                            next_open=None if opened else iso(fin.next_open(self.now)),
                            closes_at=iso(fin.closes_at(self.now)) if opened else None)

    # --- customer -----------------------------------------------------------------------
    @tool(read_only=False)
    def login(
        self,
        customer_id: Annotated[str, Field(description="customer id such as CU-123456", max_length=40)],
        pin: Annotated[str, Field(description="the customer's 4-digit PIN", max_length=12)],
    ) -> LoginResult:
        """Log in with customer id and PIN; the token works for 10 minutes (log in again after that)."""
        customer = self.state["customer"]
        if customer_id.strip().upper() != customer["customer_id"] or pin.strip() != customer["pin"]:
            raise AppError("auth", "customer id or PIN is wrong: check both and call login again")
        return log_in(self, "fin", TOKEN_MINUTES, customer["name"], LoginResult)

    @tool(read_only=True)
    def list_accounts(self, token: Token, page: Page = 1, page_size: PageSize = 20) -> AccountList:
        """The customer's accounts with balance and available money (balance minus holds), 20 a page by default."""
        fin.require_login(self, token)
        chunk, meta = paginate_in_order(self.state["accounts"].items(), page, page_size)
        return AccountList(accounts=[Account(account_id=a, available=fin.available(self, a), **v)
                                     for a, v in chunk], **meta)

    @tool(read_only=True)
    def list_transactions(
        self,
        token: Token,
        account_id: AccountId,
        kind: Annotated[Literal["card", "bill", "deposit", "interest", "dividend", "transfer", "trade"] | None,
                        Field(description="only this kind of transaction")] = None,
        page: Page = 1,
        page_size: PageSize = 10,
    ) -> TransactionPage:
        """An account's statement, newest first, paginated (check has_more: older entries are on later pages)."""
        fin.require_login(self, token)
        fin.account(self, account_id)
        rows = self.state["transactions"]
        of_kind: dict[str, Any] = {} if kind is None else {"kind": kind}
        ids = self.ordered("transactions", ("at", BY_KEY), reverse=True, keys=True, account_id=account_id,
                           **of_kind)
        chunk, meta = paginate(ids, page, page_size)
        return TransactionPage(transactions=[Transaction(transaction_id=t, **rows[t]) for t in chunk], **meta)

    # --- watchlists ---------------------------------------------------------------------
    @tool(read_only=True)
    def list_watchlists(self, token: Token, page: Page = 1, page_size: PageSize = 20) -> WatchlistList:
        """The customer's watchlists and the symbols on them (a symbol may have been delisted since), 20 a page
        by default."""
        fin.require_login(self, token)
        chunk, meta = paginate_in_order(self.state["watchlists"].items(), page, page_size)
        return WatchlistList(watchlists=[Watchlist(watchlist_id=w, name=v["name"], symbols=list(v["symbols"]))
                                         for w, v in chunk], **meta)

    @tool(read_only=False, idempotent=True)
    def add_to_watchlist(self, token: Token, watchlist_id: WatchlistId, symbol: Symbol) -> Watchlist:
        """Add a listed symbol to a watchlist (already there: nothing changes)."""
        fin.require_login(self, token)
        watchlist = self._watchlist(watchlist_id)
        symbol, _ = fin.listed(self, symbol)
        if symbol not in watchlist["symbols"]:
            watchlist["symbols"].append(symbol)
        return Watchlist(watchlist_id=watchlist_id, name=watchlist["name"], symbols=list(watchlist["symbols"]))

    @tool(read_only=False, destructive=True, idempotent=True)
    def remove_from_watchlist(self, token: Token, watchlist_id: WatchlistId, symbol: Symbol) -> Watchlist:
        """Remove a symbol (listed or delisted) from a watchlist."""
        fin.require_login(self, token)
        watchlist = self._watchlist(watchlist_id)
        wanted = symbol.strip().upper()
        if wanted not in watchlist["symbols"]:
            raise AppError("not_found", f"{wanted} is not on watchlist {watchlist_id} ({', '.join(watchlist['symbols'])})")
        watchlist["symbols"].remove(wanted)
        return Watchlist(watchlist_id=watchlist_id, name=watchlist["name"], symbols=list(watchlist["symbols"]))

    def _watchlist(self, watchlist_id: str) -> dict[str, Any]:
        return lookup(self.state["watchlists"], watchlist_id,
                      f"no watchlist '{watchlist_id}': list_watchlists shows watchlist ids")
