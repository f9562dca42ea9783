"""The overlay that turns a synthesized episode's change set into the state it ended in, and the state
diff's id alignment on the new records it adds."""

from __future__ import annotations

from typing import Any

from cworld.sandbox.statediff import actual_state, apply_changes, diff_states, is_change_set

INITIAL: dict[str, Any] = {
    "mail": {
        "account": {"email": "me@example.com"},
        "messages": {
            "mail_0001": {"id": "mail_0001", "folder": "inbox", "subject": "Budget", "starred": False},
            "mail_0002": {"id": "mail_0002", "folder": "inbox", "subject": "Offsite", "starred": False},
        },
    },
    "shop": {"cart": {"items": {"ci_0001": {"product_id": "SKU-1", "quantity": 1}}, "coupon": "FLASH15"}},
    "clock": {"reminders": {}},
}


def changes(**apps: Any) -> dict[str, Any]:
    return {"_changes": True, **apps}


def test_updates_merge_the_written_fields_that_the_collection_uses() -> None:
    end = changes(mail={"messages": {"mail_0001": {"id": "mail_0001", "folder": "archive", "starred": True,
                                                    "snippet": "engine-only", "subject": "Shown, not written"}}},
                  _written={"mail": {"messages": {"mail_0001": ["folder", "snippet"]}}})
    state = actual_state(INITIAL, end)
    assert state["mail"]["messages"]["mail_0001"] == {"id": "mail_0001", "folder": "archive", "subject": "Budget",
                                                      "starred": False}
    assert "_written" not in state and "_changes" not in state
    assert INITIAL["mail"]["messages"]["mail_0001"]["folder"] == "inbox"  # the input is not modified


def test_new_records_keep_known_fields_and_colliding_ids_move_to_the_next_free_one() -> None:
    made = {"id": "mail_0002", "folder": "sent", "subject": "Hello", "snippet": "engine-only"}
    state = apply_changes(INITIAL, changes(mail={"messages": {"mail_0002": made}}))
    messages = state["mail"]["messages"]
    assert messages["mail_0002"] == INITIAL["mail"]["messages"]["mail_0002"]  # the existing one is untouched
    assert messages["mail_0003"] == {"id": "mail_0003", "folder": "sent", "subject": "Hello"}


def test_deletes_carts_and_empty_collections() -> None:
    end = changes(mail={"messages": {"mail_0002": None}},
                  shop={"cart": {"ci_0009": {"product_id": "SKU-2", "quantity": 2}}},
                  clock={"reminders": {"rem_0001": {"id": "rem_0001", "text": "call Ana"}}})
    state = actual_state(INITIAL, end)
    assert set(state["mail"]["messages"]) == {"mail_0001"}
    assert state["shop"]["cart"]["items"]["ci_0009"] == {"product_id": "SKU-2", "quantity": 2}
    assert state["shop"]["cart"]["coupon"] == "FLASH15"
    assert state["clock"]["reminders"] == {"rem_0001": {"id": "rem_0001", "text": "call Ana"}}  # all fields kept


def test_a_live_end_state_is_taken_as_it_is() -> None:
    live = {**INITIAL, "_clock": "2026-03-01"}
    assert not is_change_set(live) and actual_state(INITIAL, live) == INITIAL


def test_a_new_record_whose_id_differs_from_the_expected_one_is_aligned_by_content() -> None:
    expected = apply_changes(INITIAL, changes(mail={"messages": {
        "mail_0003": {"id": "mail_0003", "folder": "sent", "subject": "Quarterly numbers", "starred": False}}}))
    end = changes(mail={"messages": {
        "mail_0001": {"id": "mail_0001", "folder": "sent", "subject": "Quarterly numbers", "starred": False}}})
    actual = actual_state(INITIAL, end)
    assert "mail_0004" not in actual["mail"]["messages"] and actual["mail"]["messages"]["mail_0003"]["subject"]
    result = diff_states(INITIAL, expected, actual)
    assert result.success and result.R_c == 1.0 and result.R_b == 0.0
    moved = actual_state(INITIAL, changes(mail={"messages": {
        "mail_0007": {"id": "mail_0007", "folder": "sent", "subject": "Quarterly numbers", "starred": False}}}))
    result = diff_states(INITIAL, expected, moved)
    assert result.success and result.renamed_ids == {"mail_0007": "mail_0003"}
