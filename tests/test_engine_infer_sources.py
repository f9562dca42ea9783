"""Records a call names beside the one its name makes or lists (`engine/rules/sources.py`), on an invoicing
service written for the test: a send acts on an invoice that must exist and makes none, a duplicate makes one
from an invoice that must exist, and a list read under a contact's bare id refuses an unknown contact."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR = {"type": "string"}


def tool(name: str, props: dict[str, Any], required: list[str] | None = None) -> ToolSpec:
    return ToolSpec(server="ledger-desk", name=name, description=name,
                    input_schema={"type": "object", "properties": props,
                                  "required": list(props) if required is None else required})


TOOLS = [tool("sendInvoice", {"invoiceId": STR}),
         tool("createInvoicePublicLink", {"invoiceId": STR}),
         tool("duplicateInvoice", {"invoiceId": STR}),
         tool("createInvoice", {"contact_id": STR, "total": {"type": "number"}}),
         tool("listInvoices", {}),
         tool("listContactInvoices", {"id": STR, "limit": {"type": "integer"}}, required=["id"])]


def ledger() -> Any:
    state: dict[str, Any] = {
        "contacts": {"ct_0001": {"id": "ct_0001", "name": "Ada Byrne"}},
        "invoices": {"inv_0001": {"id": "inv_0001", "contact_id": "ct_0001", "total": 120.0, "status": "draft"}}}
    return rules_caller("ledger-desk", "accounting", state, {"contact": "contacts", "invoice": "invoices"}, TOOLS)


def invoice_ids(call: Any) -> set[str]:
    listed = json.loads(call("listInvoices").text)
    items = next(v for v in listed.values() if isinstance(v, list)) if isinstance(listed, dict) else listed
    return {str(i.get("id")) for i in items}


def test_a_send_acts_on_an_invoice_that_must_exist_and_makes_none() -> None:
    call = ledger()
    assert call("sendInvoice", invoiceId="inv_0999").error_class == "not_found"
    assert call("createInvoicePublicLink", invoiceId="inv_0999").error_class == "not_found"
    assert not call("sendInvoice", invoiceId="inv_0001").is_error
    assert not call("createInvoicePublicLink", invoiceId="inv_0001").is_error
    assert invoice_ids(call) == {"inv_0001"}


def test_a_duplicate_makes_an_invoice_from_one_that_must_exist() -> None:
    call = ledger()
    assert call("duplicateInvoice", invoiceId="inv_0999").error_class == "not_found"
    assert invoice_ids(call) == {"inv_0001"}
    assert not call("duplicateInvoice", invoiceId="inv_0001").is_error
    assert len(invoice_ids(call)) == 2


def test_a_create_naming_its_contact_still_makes_an_invoice() -> None:
    call = ledger()
    assert not call("createInvoice", contact_id="ct_0001", total=80.0).is_error
    assert len(invoice_ids(call)) == 2


def test_a_list_under_a_bare_parent_id_refuses_an_unknown_parent() -> None:
    call = ledger()
    assert call("listContactInvoices", id="ct_0999").error_class == "not_found"
    assert not call("listContactInvoices", id="ct_0001").is_error


def test_a_collection_named_as_a_function_does_not_hide_it() -> None:
    """A sports feed's world holds `matches`; its post search still calls the `matches` of the rule language,
    on the post the session wrote as on the seed's."""
    tools = [ToolSpec(server="match-feed", name=name, description=name,
                      input_schema={"type": "object", "properties": {arg: STR}, "required": [arg]})
             for name, arg in (("search_posts", "query"), ("create_post", "text"))]
    state: dict[str, Any] = {"matches": {"m_0001": {"id": "m_0001", "name": "Porto v Ajax"}},
                             "posts": {"po_0001": {"id": "po_0001", "text": "Porto win at home"}}}
    call = rules_caller("match-feed", "social_media", state, {"match": "matches", "post": "posts"}, tools)
    assert not call("create_post", text="Porto top the table").is_error
    found = call("search_posts", query="porto")
    assert not found.is_error, found.text
    assert "po_0001" in found.text and "top the table" in found.text


def test_an_add_to_another_record_puts_it_there_or_makes_one_there() -> None:
    """`addPaymentToInvoice(paymentId, invoiceId)` files an existing payment under the invoice (both must exist);
    `add_payment_to_invoice(invoice_id, amount)`, naming no payment, makes one there."""
    tools = [tool("addPaymentToInvoice", {"paymentId": STR, "invoiceId": STR}),
             tool("add_payment_to_invoice", {"invoice_id": STR, "amount": {"type": "number"}}),
             tool("getPayment", {"paymentId": STR}), tool("listPayments", {})]
    state: dict[str, Any] = {
        "invoices": {"inv_0001": {"id": "inv_0001", "total": 120.0}, "inv_0002": {"id": "inv_0002", "total": 9.0}},
        "payments": {"pay_0001": {"id": "pay_0001", "invoice_id": "inv_0001", "amount": 20.0}}}
    call = rules_caller("ledger-desk", "accounting", state, {"invoice": "invoices", "payment": "payments"}, tools)
    assert call("addPaymentToInvoice", paymentId="pay_0001", invoiceId="inv_0999").error_class == "not_found"
    assert call("addPaymentToInvoice", paymentId="pay_0999", invoiceId="inv_0002").error_class == "not_found"
    assert not call("addPaymentToInvoice", paymentId="pay_0001", invoiceId="inv_0002").is_error
    assert json.loads(call("getPayment", paymentId="pay_0001").text)["invoice_id"] == "inv_0002"
    assert call("add_payment_to_invoice", invoice_id="inv_0999", amount=5.0).error_class == "not_found"
    assert not call("add_payment_to_invoice", invoice_id="inv_0002", amount=5.0).is_error
    listed = json.loads(call("listPayments").text)
    assert len(next(v for v in listed.values() if isinstance(v, list))) == 2


def test_a_create_naming_no_kind_the_world_holds_makes_none_of_another() -> None:
    """`create_change_request(title)` on a ledger makes no account (the card's first kind, which it was filed
    under by default); its arguments are still checked."""
    tools = [tool("create_change_request", {"title": STR}), tool("list_accounts", {})]
    state: dict[str, Any] = {"accounts": {"acc_0001": {"id": "acc_0001", "name": "Operating"}}}
    call = rules_caller("ledger-desk", "accounting", state, {"account": "accounts"}, tools)
    assert call("create_change_request", title="  ").error_class == "invalid_args"
    call("create_change_request", title="Raise the card limit")
    listed = json.loads(call("list_accounts").text)
    assert len(next(v for v in listed.values() if isinstance(v, list))) == 1


def test_a_delete_of_a_part_keeps_the_record_and_a_plain_delete_removes_it() -> None:
    """`deleteInvoicePublicLink(invoiceId)` takes the invoice's link away (the invoice must exist and stays);
    `deleteForever(invoiceId)` names no part: the invoice goes."""
    tools = [tool("deleteInvoicePublicLink", {"invoiceId": STR}), tool("deleteForever", {"invoiceId": STR}),
             tool("listInvoices", {})]
    call = rules_caller("ledger-desk", "accounting",
                        {"invoices": {"inv_0001": {"id": "inv_0001", "total": 120.0, "status": "draft"}}},
                        {"invoice": "invoices"}, tools)
    assert call("deleteInvoicePublicLink", invoiceId="inv_0999").error_class == "not_found"
    assert not call("deleteInvoicePublicLink", invoiceId="inv_0001").is_error
    assert invoice_ids(call) == {"inv_0001"}
    assert not call("deleteForever", invoiceId="inv_0001").is_error
    assert invoice_ids(call) == set()
