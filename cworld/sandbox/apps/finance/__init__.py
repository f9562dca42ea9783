"""Finance: market data, a bank and brokerage login, balances and statements, trading, transfers, watchlists.

Market data is public; everything about the customer needs the token `login` gives for a customer id and
PIN, valid 10 virtual minutes. Company names resolve to symbols with `find_symbol`. Transfers move money in
two steps (create, then confirm with a one-time code); trading follows market hours by the virtual clock.
"""

from __future__ import annotations

from typing import Any

from cworld.sandbox.apps._shared.records import produces
from cworld.sandbox.apps.finance import state as fin
from cworld.sandbox.apps.finance.state import seed_state
from cworld.sandbox.apps.finance.tools import FinanceTools
from cworld.sandbox.apps.finance.tools_trading import TradingTools
from cworld.sandbox.apps.finance.tools_transfers import TransferTools
from cworld.sandbox.framework import Prerequisite

_ACCOUNT_TOOLS = ("list_accounts", "list_transactions", "get_portfolio", "place_order", "cancel_order",
                  "list_orders", "list_payees", "create_transfer", "confirm_transfer", "resend_transfer_code",
                  "cancel_transfer", "list_transfers", "list_watchlists", "add_to_watchlist",
                  "remove_from_watchlist")


def _edges() -> tuple[Prerequisite, ...]:
    token = [Prerequisite("login", t, "produces", "token", "customer tools need a live token (10 minutes)")
             for t in _ACCOUNT_TOOLS]
    flows = [
        ("find_symbol", "get_quote", "symbol"), ("find_symbol", "get_price_history", "symbol"),
        ("find_symbol", "place_order", "symbol"), ("find_symbol", "add_to_watchlist", "symbol"),
        ("list_accounts", "create_transfer", "from_account_id"), ("list_accounts", "list_transactions",
                                                                  "account_id"),
        ("list_payees", "create_transfer", "to_id"), ("create_transfer", "confirm_transfer", "transfer_id"),
        ("read_authenticator", "confirm_transfer", "code"), ("list_transfers", "cancel_transfer", "transfer_id"),
        ("list_orders", "cancel_order", "order_id"), ("list_watchlists", "add_to_watchlist", "watchlist_id"),
        ("list_watchlists", "remove_from_watchlist", "watchlist_id"),
    ]
    produced = produces(flows)
    return (*token, *produced,
            Prerequisite("create_transfer", "read_authenticator", "requires", None, "creating sends the code"),
            Prerequisite("get_market_status", "place_order", "requires", None, "market orders need open hours"))


class FinanceApp(FinanceTools, TradingTools, TransferTools):
    name = "finance"
    volatile_paths = ("auth**", "codes**", "transfers.*.codes_sent", "transactions.*.at")
    title = "Finance"
    description = ("Bank and brokerage: look up symbols and quotes, log in with a PIN, check balances and "
                   "statements, trade, move money with confirmed transfers, keep watchlists.")
    category = "finance"
    entity_kinds = {"accounts": "account", "transactions": "transaction", "payees": "payee", "transfers": "transfer", "orders": "order", "watchlists": "watchlist"}
    observed_kinds = {"symbol": "symbol"}  # the market's securities: no state collection, shown by find_symbol/get_quote
    prerequisites = _edges()

    initial_state = seed_state

    def world_reference(self) -> dict[str, Any]:
        """The seed's market (listed and delisted securities) and the 60 trading days of closes before the
        session's first day, by symbol: what quotes, history and fills are read from."""
        listed = fin.market(self)
        return {"MARKET": listed, "HISTORY": {s: [list(p) for p in fin.history(self, s, 60)] for s in listed["listed"]}}
