"""The finance app's money transfers, as a base class of `FinanceApp`: create, then confirm with a one-time code.

A created transfer only holds the money; it moves when `confirm_transfer` gets the 6-digit code that the
account holder's authenticator shows (`read_authenticator`), within 5 minutes. A transfer nobody confirms
keeps holding its money until it is cancelled, which is what the seeded stale transfer does.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from cworld.sandbox.apps._shared.records import Page, PageSize, lookup, paginate, paginate_in_order
from cworld.sandbox.apps._shared.values import iso, money, parse_iso
from cworld.sandbox.apps.finance import state as fin
from cworld.sandbox.apps.finance.models import (
    AccountId,
    Amount,
    Authenticator,
    AuthenticatorCode,
    Payee,
    PayeeList,
    Token,
    Transfer,
    TransferId,
    TransferList,
)
from cworld.sandbox.framework import AppError, SandboxApp, tool
from cworld.sandbox.framework.index import BY_KEY

PAYEE_LIMIT = 5000.0


class TransferTools(SandboxApp):
    """Payees, transfers and the authenticator that confirms them."""

    @tool(read_only=True)
    def list_payees(self, token: Token, page: Page = 1, page_size: PageSize = 20) -> PayeeList:
        """People and companies money can be sent to, with the payee ids create_transfer takes (20 a page by
        default)."""
        fin.require_login(self, token)
        chunk, meta = paginate_in_order(self.state["payees"].items(), page, page_size)
        return PayeeList(payees=[Payee(payee_id=p, **v) for p, v in chunk], **meta)

    @tool(read_only=False)
    def create_transfer(
        self,
        token: Token,
        from_account_id: AccountId,
        to_id: Annotated[str, Field(description="own account id (list_accounts) or payee id (list_payees)",
                                    max_length=40)],
        amount: Amount,
        memo: Annotated[str, Field(description="note shown on both statements", max_length=140)] = "",
    ) -> Transfer:
        """Step 1 of a transfer: set it up and hold the money. It moves only after confirm_transfer with the
        one-time code from read_authenticator (payees: at most 5,000.00 per transfer)."""
        fin.require_login(self, token)
        fin.account(self, from_account_id)
        self._destination(to_id)
        if to_id == from_account_id:
            raise AppError("invalid", "from_account_id and to_id are the same account: pick another destination")
        amount = money(amount)
        if to_id in self.state["payees"] and amount > PAYEE_LIMIT:
            raise AppError("limit", f"transfers to payees are limited to {PAYEE_LIMIT:,.2f}: split the payment")
        self._covered(from_account_id, amount, exclude=None)
        transfer_id = self.new_id("trf")
        self.state["transfers"][transfer_id] = {
            "from_account_id": from_account_id, "to_id": to_id, "amount": amount, "memo": memo,
            "status": "pending_confirmation", "created_at": iso(self.now), "completed_at": None, "codes_sent": 0}
        self._send_code(transfer_id)
        return self._transfer_view(transfer_id)

    @tool(read_only=True)
    def read_authenticator(self, page: Page = 1, page_size: PageSize = 20) -> Authenticator:
        """Read the one-time codes the bank sent to the account holder's phone, newest first, 20 a page by
        default (each is valid for 5 minutes and only for its transfer)."""
        codes = self.state["codes"]
        newest = self.ordered("codes", ("expires_at", BY_KEY), reverse=True, keys=True)
        ids, meta = paginate(newest, page, page_size)
        chunk = [(t, codes[t]) for t in ids]
        return Authenticator(codes=[
            AuthenticatorCode(transfer_id=t, code=c["code"], expires_at=c["expires_at"],
                              expired=parse_iso(c["expires_at"]) <= self.now) for t, c in chunk], **meta)

    @tool(read_only=False, destructive=True, idempotent=True)
    def confirm_transfer(
        self,
        token: Token,
        transfer_id: TransferId,
        code: Annotated[str, Field(description="6-digit code from read_authenticator", min_length=1,
                                   max_length=12)],
    ) -> Transfer:
        """Step 2 of a transfer: confirm it with its one-time code; the money moves now. Confirming a completed
        transfer again changes nothing."""
        fin.require_login(self, token)
        transfer = self._transfer(transfer_id)
        if transfer["status"] == "completed":
            return self._transfer_view(transfer_id)
        if transfer["status"] == "cancelled":
            raise AppError("conflict", f"transfer {transfer_id} was cancelled: create a new transfer")
        sent = self.state["codes"][transfer_id]
        if parse_iso(sent["expires_at"]) <= self.now:
            raise AppError("precondition", f"the code for {transfer_id} expired at {sent['expires_at']}: call "
                                           "resend_transfer_code, then read_authenticator")
        if code.strip() != sent["code"]:
            raise AppError("auth", f"that code does not match transfer {transfer_id}: read_authenticator shows its "
                                   "current code")
        self._covered(transfer["from_account_id"], transfer["amount"], exclude=transfer_id)
        self._execute(transfer_id, transfer)
        return self._transfer_view(transfer_id)

    @tool(read_only=False, destructive=True)
    def resend_transfer_code(self, token: Token, transfer_id: TransferId) -> Transfer:
        """Send a fresh one-time code for a transfer still awaiting confirmation (the old code stops working)."""
        fin.require_login(self, token)
        transfer = self._transfer(transfer_id)
        if transfer["status"] != "pending_confirmation":
            raise AppError("conflict", f"transfer {transfer_id} is {transfer['status']}: no code is needed")
        self._send_code(transfer_id)
        return self._transfer_view(transfer_id)

    @tool(read_only=False, destructive=True, idempotent=True)
    def cancel_transfer(self, token: Token, transfer_id: TransferId) -> Transfer:
        """Cancel a transfer that is still awaiting confirmation; its held money becomes available again."""
        fin.require_login(self, token)
        transfer = self._transfer(transfer_id)
        if transfer["status"] == "completed":
            raise AppError("conflict", f"transfer {transfer_id} completed at {transfer['completed_at']} and cannot be "
                                       "cancelled: send the money back with a new transfer if needed")
        if transfer["status"] == "pending_confirmation":
            transfer["status"] = "cancelled"
            self.state["codes"].pop(transfer_id, None)
        return self._transfer_view(transfer_id)

    @tool(read_only=True)
    def list_transfers(
        self,
        token: Token,
        status: Annotated[Literal["pending_confirmation", "completed", "cancelled"] | None,
                          Field(description="only transfers in this status")] = None,
        page: Page = 1,
        page_size: PageSize = 20,
    ) -> TransferList:
        """Transfers, newest first, optionally by status (pending ones hold money until confirmed or cancelled),
        20 a page by default."""
        fin.require_login(self, token)
        of_status: dict[str, Any] = {} if status is None else {"status": status}
        ids = self.ordered("transfers", ("created_at", BY_KEY), reverse=True, keys=True,
                           **of_status)
        chunk, meta = paginate(ids, page, page_size)
        return TransferList(transfers=[self._transfer_view(t) for t in chunk], **meta)

    # --- helpers ------------------------------------------------------------------------
    def _destination(self, to_id: str) -> str:
        if to_id in self.state["accounts"]:
            return str(self.state["accounts"][to_id]["name"])
        if to_id in self.state["payees"]:
            return str(self.state["payees"][to_id]["name"])
        raise AppError("not_found", f"no account or payee '{to_id}': to_id must be an id from list_accounts or "
                                    "list_payees")

    def _covered(self, account_id: str, amount: float, exclude: str | None) -> None:
        held = fin.holds(self, account_id)
        if exclude is not None:
            held = money(held - self.state["transfers"][exclude]["amount"])
        free = money(self.state["accounts"][account_id]["balance"] - held)
        if amount > free:
            raise AppError("insufficient_funds", f"{account_id} has {free:,.2f} available ({held:,.2f} held by "
                                                 f"pending transfers and open orders), {amount:,.2f} needed: cancel "
                                                 "stale holds or move money in first")

    def _send_code(self, transfer_id: str) -> None:
        transfer = self.state["transfers"][transfer_id]
        transfer["codes_sent"] += 1
        self.state["codes"][transfer_id] = {
            "code": fin.one_time_code(self, transfer_id, transfer["codes_sent"]),
            "expires_at": iso(self.now + timedelta(minutes=fin.CODE_MINUTES))}

    def _execute(self, transfer_id: str, transfer: dict[str, Any]) -> None:
        source, target = transfer["from_account_id"], transfer["to_id"]
        label = transfer["memo"] or "transfer"
        fin.post(self, source, "transfer", f"To {self._destination(target)}: {label}", -transfer["amount"])
        if target in self.state["accounts"]:
            fin.post(self, target, "transfer", f"From {self._destination(source)}: {label}", transfer["amount"])
        transfer.update(status="completed", completed_at=iso(self.now))
        del self.state["codes"][transfer_id]

    def _transfer(self, transfer_id: str) -> dict[str, Any]:
        return lookup(self.state["transfers"], transfer_id,
                      f"no transfer '{transfer_id}': list_transfers shows transfer ids")

    def _transfer_view(self, transfer_id: str) -> Transfer:
        t = self.state["transfers"][transfer_id]
        steps = {"pending_confirmation": "read the code with read_authenticator, then call confirm_transfer",
                 "completed": "", "cancelled": ""}
        return Transfer(transfer_id=transfer_id, to_name=self._destination(t["to_id"]), next_step=steps[t["status"]],
                        **{k: v for k, v in t.items() if k != "codes_sent"})
