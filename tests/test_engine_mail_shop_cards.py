"""Two card families written for their category (issue 33), checked on services written for the test: the email
card's permanent delete takes only what is in the trash; the e-commerce card's coupon is applied only while it
holds (one not in the wallet is not found, a used or expired one is refused)."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR = {"type": "string"}


def tool(server: str, name: str, props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(server=server, name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": list(props)})


def test_a_permanent_delete_takes_only_what_is_in_the_trash() -> None:
    tools = [tool("home-mail", "delete_forever", {"message_id": STR}), tool("home-mail", "get_message", {"message_id": STR})]
    state = {"messages": {"mail_1": {"subject": "Hi", "folder": "inbox", "thread_id": "t1"},
                          "mail_2": {"subject": "Old", "folder": "trash", "thread_id": "t2"}}}
    call = rules_caller("home-mail", "email", state, {"message": "messages"}, tools)
    refused = call("delete_forever", message_id="mail_1")
    assert refused.error_class == "business" and "trash" in refused.text
    assert not call("get_message", message_id="mail_1").is_error  # still there
    assert not call("delete_forever", message_id="mail_2").is_error
    assert call("get_message", message_id="mail_2").error_class == "not_found"


def test_a_coupon_applies_only_while_it_holds() -> None:
    tools = [tool("corner-shop", "apply_coupon", {"code": STR})]
    state = {"coupons": {"SPRING15": {"code": "SPRING15", "expires_at": "2026-09-01T00:00:00Z", "used": False},
                         "WELCOME": {"code": "WELCOME", "expires_at": "2026-09-01T00:00:00Z", "used": True},
                         "WINTER": {"code": "WINTER", "expires_at": "2026-02-01T00:00:00Z", "used": False}},
             "catalog": {"SKU-1": {"name": "Kettle", "price": 40.0}}}
    call = rules_caller("corner-shop", "ecommerce", state, {"coupon": "coupons", "product": "catalog"}, tools)
    assert not call("apply_coupon", code="SPRING15").is_error
    assert call("apply_coupon", code="NOPE").error_class == "not_found"
    assert call("apply_coupon", code="WELCOME").error_class == "business"
    assert call("apply_coupon", code="WINTER").error_class == "business"  # expired before the world's now


def test_a_reply_flags_the_message_answered_and_a_made_record_keeps_its_key_as_the_world_does() -> None:
    tools = [tool("home-mail", "reply_to_message", {"message_id": STR, "body": STR}),
             tool("home-mail", "get_message", {"message_id": STR}),
             tool("home-mail", "create_contact", {"full_name": STR, "email": STR})]
    state = {"messages": {"mail_1": {"id": "mail_1", "subject": "Hi", "folder": "inbox", "thread_id": "t1",
                                     "sender": "ana@example.com", "replied": False}},
             "contacts": {"contact_1": {"id": "contact_1", "name": "Ana", "email": "ana@example.com"}}}
    call = rules_caller("home-mail", "email", state, {"message": "messages", "contact": "contacts"}, tools)
    assert not call("reply_to_message", message_id="mail_1", body="Thanks!").is_error
    assert '"replied": true' in call("get_message", message_id="mail_1").text
    made = call("create_contact", full_name="Ben", email="ben@example.com")
    assert not made.is_error and json.loads(made.text)["id"] == json.loads(made.text)["contact_id"] == "contact_0001"
