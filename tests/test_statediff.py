"""The state-diff evaluator against examples worked out by hand (ComplexMCP §3.3, docs/state-diff.md).

Every expected number below comes from counting key paths by hand; the comment above each
assertion says which paths they are.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from cworld.errors import ConfigError
from cworld.sandbox.statediff import ABSENT_REPR, StateDiffConfig, StateDiffResult, diff_states


def base_state() -> dict[str, Any]:
    return {
        "mail": {
            "messages": [
                {
                    "id": "msg_0001",
                    "from": "ana@example.com",
                    "subject": "Budget",
                    "read": False,
                    "labels": ["inbox"],
                    "received_at": "2026-03-02T09:00:00Z",
                },
                {
                    "id": "msg_0002",
                    "from": "bo@example.com",
                    "subject": "Lunch",
                    "read": False,
                    "labels": ["inbox", "social"],
                    "received_at": "2026-03-02T09:05:00Z",
                },
            ],
            "drafts": [],
        },
        "calendar": {
            "events": [
                {
                    "id": "evt_0001",
                    "title": "Standup",
                    "starts": "2026-03-03T09:00",
                    "attendees": ["ana", "bo"],
                }
            ]
        },
        "session": {"token": "tok-abc", "user": "me"},
    }


def msg(state: dict[str, Any], msg_id: str) -> dict[str, Any]:
    return next(m for m in state["mail"]["messages"] if m["id"] == msg_id)


def paths(changes: list[Any]) -> list[str]:
    return [c.path for c in changes]


def assert_counts(
    r: StateDiffResult, t: int, m: int, m_b: int, r_c: float, r_b: float, success: bool
) -> None:
    assert (r.T, r.M, r.M_b) == (t, m, m_b), r.model_dump()
    assert r.R_c == pytest.approx(r_c)
    assert r.R_b == pytest.approx(r_b)
    assert r.success is success
    assert len(r.required) == t and len(r.matched) == m and len(r.missed) == t - m and len(r.unwanted) == m_b


# --- one field --------------------------------------------------------------------------------


def test_field_change_done_right() -> None:
    initial = base_state()
    expected = base_state()
    msg(expected, "msg_0001")["read"] = True
    actual = copy.deepcopy(expected)
    r = diff_states(initial, expected, actual)
    # T = {msg_0001.read}; actual has it -> M = 1; nothing else moved -> M_b = 0.
    assert_counts(r, t=1, m=1, m_b=0, r_c=1.0, r_b=0.0, success=True)
    change = r.required[0]
    assert change.path == "mail.messages[msg_0001].read"
    assert (change.kind, change.before, change.expected, change.actual) == ("changed", False, True, True)


def test_field_change_done_wrong() -> None:
    initial, expected, actual = base_state(), base_state(), base_state()
    msg(expected, "msg_0001")["subject"] = "Budget Q3"
    msg(actual, "msg_0001")["subject"] = "Budget Q4"
    r = diff_states(initial, expected, actual)
    # The path is in T, so a wrong value is a miss, not also an unwanted change.
    assert_counts(r, t=1, m=0, m_b=0, r_c=0.0, r_b=0.0, success=False)
    assert r.missed[0].actual == "Budget Q4"


def test_field_change_missing() -> None:
    initial, expected = base_state(), base_state()
    msg(expected, "msg_0001")["read"] = True
    r = diff_states(initial, expected, base_state())
    assert_counts(r, t=1, m=0, m_b=0, r_c=0.0, r_b=0.0, success=False)
    assert paths(r.missed) == ["mail.messages[msg_0001].read"]
    assert r.missed[0].actual is False


def test_extra_unwanted_change() -> None:
    initial, expected = base_state(), base_state()
    msg(expected, "msg_0001")["read"] = True
    actual = copy.deepcopy(expected)
    msg(actual, "msg_0002")["read"] = True
    r = diff_states(initial, expected, actual)
    # T = 1 done; msg_0002.read is outside T and moved -> M_b = 1, R_b = 1/1.
    assert_counts(r, t=1, m=1, m_b=1, r_c=1.0, r_b=1.0, success=False)
    assert paths(r.unwanted) == ["mail.messages[msg_0002].read"]
    assert (r.unwanted[0].before, r.unwanted[0].expected, r.unwanted[0].actual) == (False, False, True)


def test_partial_success_half() -> None:
    initial, expected = base_state(), base_state()
    msg(expected, "msg_0001")["read"] = True
    expected["calendar"]["events"][0]["title"] = "Standup (moved)"
    actual = base_state()
    msg(actual, "msg_0001")["read"] = True
    r = diff_states(initial, expected, actual)
    # T = {read, title}; only read done -> R_c = 1/2.
    assert_counts(r, t=2, m=1, m_b=0, r_c=0.5, r_b=0.0, success=False)
    assert paths(r.missed) == ["calendar.events[evt_0001].title"]
    msg(actual, "msg_0002")["read"] = True
    # One unwanted change over T = 2 -> R_b = 1/2.
    assert_counts(diff_states(initial, expected, actual), t=2, m=1, m_b=1, r_c=0.5, r_b=0.5, success=False)


# --- T = 0 ------------------------------------------------------------------------------------


def test_t_zero_without_unwanted_change() -> None:
    actual = base_state()
    msg(actual, "msg_0001")["received_at"] = "2026-03-02T10:00:00Z"  # volatile
    actual["mail"]["messages"].reverse()  # order does not matter
    r = diff_states(base_state(), base_state(), actual)
    assert_counts(r, t=0, m=0, m_b=0, r_c=1.0, r_b=0.0, success=True)


def test_t_zero_with_unwanted_changes() -> None:
    actual = base_state()
    msg(actual, "msg_0001")["read"] = True
    actual["calendar"]["events"] = []
    r = diff_states(base_state(), base_state(), actual)
    # Two unwanted changes: one field, one deleted record (once, at the record). R_b = M_b / max(T, 1) = 2.
    assert_counts(r, t=0, m=0, m_b=2, r_c=1.0, r_b=2.0, success=False)
    assert paths(r.unwanted) == ["calendar.events[evt_0001]", "mail.messages[msg_0001].read"]
    assert r.unwanted[0].kind == "removed"
    assert r.unwanted[0].actual == ABSENT_REPR


# --- lists that grow, new records with generated ids --------------------------------------------

DRAFT = {"to": "ana@example.com", "subject": "Re: Budget", "body": "Numbers attached."}


def with_drafts(*drafts: dict[str, Any]) -> dict[str, Any]:
    state = base_state()
    state["mail"]["drafts"] = [dict(d) for d in drafts]
    return state


def test_list_grows_with_a_generated_id() -> None:
    expected = with_drafts({"id": "drf_0001", **DRAFT})
    actual = with_drafts({"id": "drf_0003", **DRAFT})  # the agent's run generated another id
    r = diff_states(base_state(), expected, actual)
    # T = the new record's leaves: id, to, subject, body = 4; all match after pairing by content.
    assert_counts(r, t=4, m=4, m_b=0, r_c=1.0, r_b=0.0, success=True)
    assert r.renamed_ids == {"drf_0003": "drf_0001"}
    assert all(c.kind == "added" and c.before == ABSENT_REPR for c in r.required)
    assert "mail.drafts[drf_0001].body" in paths(r.matched)


def test_list_grows_with_an_extra_record_whose_id_collides() -> None:
    expected = with_drafts({"id": "drf_0001", **DRAFT})
    junk = {"id": "drf_0001", "to": "zed@example.com", "subject": "test", "body": "x"}
    actual = with_drafts(junk, {"id": "drf_0002", **DRAFT})
    r = diff_states(base_state(), expected, actual)
    # drf_0002 pairs with the expected draft (3/3 fields equal), the junk draft shares no field (0/3)
    # and its id collides, so it is renamed and counted once as an unwanted new record: R_b = 1/4.
    assert_counts(r, t=4, m=4, m_b=1, r_c=1.0, r_b=0.25, success=False)
    assert paths(r.unwanted) == ["mail.drafts[drf_0001~unmatched]"]
    assert r.unwanted[0].kind == "added"
    assert r.unwanted[0].actual["to"] == "zed@example.com"


def test_references_to_a_generated_id_follow_the_pairing() -> None:
    expected = with_drafts({"id": "drf_0001", **DRAFT})
    expected["mail"]["pinned"] = "drf_0001"
    actual = with_drafts({"id": "drf_0002", **DRAFT})
    actual["mail"]["pinned"] = "drf_0002"
    r = diff_states(base_state(), expected, actual)
    # T = 4 draft leaves + mail.pinned = 5; the reference is rewritten with the id.
    assert_counts(r, t=5, m=5, m_b=0, r_c=1.0, r_b=0.0, success=True)


def test_new_record_partly_right() -> None:
    expected = with_drafts({"id": "drf_0001", **DRAFT})
    actual = with_drafts({"id": "drf_0002", **DRAFT, "body": "Numbers later."})
    r = diff_states(base_state(), expected, actual)
    # 2 of 3 content fields equal (2/3 >= 0.5) -> paired; id, to, subject match, body missed: R_c = 3/4.
    assert_counts(r, t=4, m=3, m_b=0, r_c=0.75, r_b=0.0, success=False)
    assert paths(r.missed) == ["mail.drafts[drf_0001].body"]


def test_new_record_too_different_is_not_paired() -> None:
    expected = with_drafts({"id": "drf_0001", **DRAFT})
    actual = with_drafts(
        {"id": "drf_0002", "to": "zed@example.com", "subject": "Other", "body": "Numbers attached."}
    )
    r = diff_states(base_state(), expected, actual)
    # 1 of 3 fields equal (< 0.5): the expected draft is missed (4), the agent's draft is one unwanted record.
    assert_counts(r, t=4, m=0, m_b=1, r_c=0.0, r_b=0.25, success=False)
    assert paths(r.unwanted) == ["mail.drafts[drf_0002]"]
    assert r.renamed_ids == {}


def test_nested_new_records_pair_through_their_parent() -> None:
    initial = {"chat": {"threads": []}}
    expected = {
        "chat": {
            "threads": [{"id": "thr_0001", "subject": "Trip", "messages": [{"id": "msg_0010", "text": "hi"}]}]
        }
    }
    actual = {
        "chat": {
            "threads": [{"id": "thr_0002", "subject": "Trip", "messages": [{"id": "msg_0011", "text": "hi"}]}]
        }
    }
    r = diff_states(initial, expected, actual)
    # T = thread id, subject, message id, message text = 4.
    assert_counts(r, t=4, m=4, m_b=0, r_c=1.0, r_b=0.0, success=True)
    assert r.renamed_ids == {"msg_0011": "msg_0010", "thr_0002": "thr_0001"}


def test_new_records_in_a_dict_keyed_by_generated_id() -> None:
    initial = {"notes": {"note_0001": {"title": "Old", "body": "x"}}}
    expected = {
        "notes": {"note_0001": {"title": "Old", "body": "x"}, "note_0002": {"title": "Plan", "body": "y"}}
    }
    actual = {
        "notes": {"note_0001": {"title": "Old", "body": "x"}, "note_0007": {"title": "Plan", "body": "y"}}
    }
    r = diff_states(initial, expected, actual)
    # T = note_0002.title, note_0002.body = 2 (no id field in a dict-keyed record).
    assert_counts(r, t=2, m=2, m_b=0, r_c=1.0, r_b=0.0, success=True)


def test_ids_without_digits_are_compared_by_id() -> None:
    initial = {"contacts": [{"id": "ana", "name": "Ana"}]}
    expected = {"contacts": [{"id": "ana", "name": "Ana"}, {"id": "bob", "name": "Bob"}]}
    actual = {"contacts": [{"id": "ana", "name": "Ana"}, {"id": "robert", "name": "Bob"}]}
    r = diff_states(initial, expected, actual)
    # "bob" is not a generated id (no digit): bob.id and bob.name are missed, robert is one unwanted record.
    assert_counts(r, t=2, m=0, m_b=1, r_c=0.0, r_b=0.5, success=False)
    assert paths(r.unwanted) == ["contacts[robert]"]


def mailbox(*messages: tuple[str, str, str]) -> dict[str, Any]:
    """Messages keyed by generated id, as the sandbox mail app keeps them: (id, thread_id, subject)."""
    return {"mail": {"messages": {mid: {"thread_id": tid, "subject": subj} for mid, tid, subj in messages}}}


OLD = ("mail_0001", "thread_0001", "Hi")


def test_new_thread_id_values_are_aligned() -> None:
    expected = mailbox(OLD, ("mail_0002", "thread_0002", "Q3"))
    actual = mailbox(OLD, ("mail_0003", "thread_0004", "Q3"))
    r = diff_states(mailbox(OLD), expected, actual)
    # T = mail_0002.thread_id, mail_0002.subject; both new thread ids stand for the same new thread.
    assert_counts(r, t=2, m=2, m_b=0, r_c=1.0, r_b=0.0, success=True)
    assert r.renamed_ids == {"mail_0003": "mail_0002", "thread_0004": "thread_0002"}


def test_an_existing_thread_is_not_a_new_one() -> None:
    expected = mailbox(OLD, ("mail_0002", "thread_0002", "Q3"))
    actual = mailbox(OLD, ("mail_0003", "thread_0001", "Q3"))  # replied into the old thread instead
    r = diff_states(mailbox(OLD), expected, actual)
    # Paired on the subject (1 of 2 fields); thread_0001 exists initially, so it is not aligned: missed.
    assert_counts(r, t=2, m=1, m_b=0, r_c=0.5, r_b=0.0, success=False)
    assert paths(r.missed) == ["mail.messages.mail_0002.thread_id"]


def test_one_new_thread_split_in_two_misses_the_second() -> None:
    expected = mailbox(OLD, ("mail_0002", "thread_0002", "A"), ("mail_0003", "thread_0002", "B"))
    actual = mailbox(OLD, ("mail_0005", "thread_0005", "A"), ("mail_0006", "thread_0006", "B"))
    r = diff_states(mailbox(OLD), expected, actual)
    # A pairs with A, B with B; thread_0005 -> thread_0002 first, thread_0006 cannot map there too.
    assert_counts(r, t=4, m=3, m_b=0, r_c=0.75, r_b=0.0, success=False)
    assert paths(r.missed) == ["mail.messages.mail_0003.thread_id"]


def test_dates_are_not_generated_ids() -> None:
    initial = {"todo": {"task_0001": {"title": "File taxes", "due": "2026-03-30"}}}
    expected = {"todo": {"task_0001": {"title": "File taxes", "due": "2026-04-01"}}}
    actual = {"todo": {"task_0001": {"title": "File taxes", "due": "2026-04-02"}}}
    assert_counts(diff_states(initial, expected, actual), t=1, m=0, m_b=0, r_c=0.0, r_b=0.0, success=False)


def test_sandbox_mail_session_end_to_end() -> None:
    """Real mail app state: the gold plan sends one email; the agent first leaves a stray draft,
    which shifts every generated id (message and thread) and the clock."""
    from cworld.sandbox.apps.mail import MailApp
    from cworld.sandbox.framework.session import SandboxSession

    session = SandboxSession(seed=3, apps=[MailApp])
    mail = session.app("mail")
    initial = session.snapshot()
    contact = sorted(initial["mail"]["contacts"])[0]
    body = "Hi, the Q3 numbers are attached. Best regards."
    session.tick()
    mail.send_email(to=[contact], subject="Q3 numbers", body=body)
    expected = session.snapshot()
    session.reset()
    session.tick()
    mail.create_draft(to=[contact], subject="scratch", body="x")
    session.tick()
    mail.send_email(to=[contact], subject="Q3 numbers", body=body)
    actual = session.snapshot()
    config = StateDiffConfig(volatile_paths=("mail.messages.*.date",))  # the send time follows the clock
    r = diff_states(initial, expected, actual, config=config)
    assert r.T > 0 and r.M == r.T and r.missed == []
    # The stray draft is the one unwanted change, counted once at its record.
    assert r.M_b == 1 and r.unwanted[0].kind == "added" and r.unwanted[0].actual["subject"] == "scratch"
    assert any(k.startswith("thread_") for k in r.renamed_ids)
    # Without the date rule the new message's send time is a required value the agent cannot match.
    plain = diff_states(initial, expected, actual)
    assert (plain.T, plain.M) == (r.T + 1, r.T)
    assert [p.rsplit(".", 1)[-1] for p in paths(plain.missed)] == ["date"]


# --- order, multisets, records without ids -----------------------------------------------------


def test_reordered_lists_are_not_changes() -> None:
    actual = base_state()
    actual["mail"]["messages"].reverse()
    msg(actual, "msg_0002")["labels"].reverse()
    actual["calendar"]["events"][0]["attendees"].reverse()
    r = diff_states(base_state(), base_state(), actual)
    assert_counts(r, t=0, m=0, m_b=0, r_c=1.0, r_b=0.0, success=True)
    config = StateDiffConfig(ordered_paths=("calendar.events[*].attendees",))
    r = diff_states(base_state(), base_state(), actual, config=config)
    # On an ordered path the list is one value: reversing it is one unwanted change.
    assert_counts(r, t=0, m=0, m_b=1, r_c=1.0, r_b=1.0, success=False)
    assert r.unwanted[0].path == "calendar.events[evt_0001].attendees"
    assert r.unwanted[0].actual == ["bo", "ana"]


def test_scalar_lists_compare_as_multisets() -> None:
    initial, expected = base_state(), base_state()
    msg(expected, "msg_0001")["labels"].append("urgent")
    actual = base_state()
    msg(actual, "msg_0001")["labels"] = ["urgent"]  # added "urgent" but also dropped "inbox"
    r = diff_states(initial, expected, actual)
    assert_counts(r, t=1, m=1, m_b=1, r_c=1.0, r_b=1.0, success=False)
    assert paths(r.required) == ['mail.messages[msg_0001].labels[="urgent"]']
    assert paths(r.unwanted) == ['mail.messages[msg_0001].labels[="inbox"]']
    assert r.unwanted[0].kind == "removed"
    msg(actual, "msg_0001")["labels"] = ["inbox", "urgent", "urgent"]  # the element twice: count 2 != 1
    assert_counts(diff_states(initial, expected, actual), t=1, m=0, m_b=0, r_c=0.0, r_b=0.0, success=False)


def test_records_without_ids_are_multiset_elements() -> None:
    initial = {"shop": {"cart": [{"sku": "p1", "qty": 1}]}}
    expected = {"shop": {"cart": [{"sku": "p1", "qty": 2}]}}
    # Changing an id-less item is two changes: the old element goes, the new one comes.
    right = diff_states(initial, expected, copy.deepcopy(expected))
    assert_counts(right, t=2, m=2, m_b=0, r_c=1.0, r_b=0.0, success=True)
    wrong = diff_states(initial, expected, {"shop": {"cart": [{"sku": "p1", "qty": 3}]}})
    # The removal is done (1), the qty-2 element is missed, the qty-3 element is unwanted.
    assert_counts(wrong, t=2, m=1, m_b=1, r_c=0.5, r_b=0.5, success=False)
    assert paths(wrong.unwanted) == ['shop.cart[={"qty":3,"sku":"p1"}]']


# --- deletions --------------------------------------------------------------------------------


def test_nested_deletion_counts_once() -> None:
    initial, expected = base_state(), base_state()
    expected["mail"]["messages"] = [msg(expected, "msg_0001")]
    r = diff_states(initial, expected, copy.deepcopy(expected))
    # msg_0002 has 6 non-volatile leaves (id, from, subject, read, 2 labels) but is one removal.
    assert_counts(r, t=1, m=1, m_b=0, r_c=1.0, r_b=0.0, success=True)
    change = r.required[0]
    assert (change.path, change.kind, change.actual) == ("mail.messages[msg_0002]", "removed", ABSENT_REPR)
    assert change.before == {
        "id": "msg_0002",
        "from": "bo@example.com",
        "subject": "Lunch",
        "read": False,
        "labels": ["inbox", "social"],
    }
    kept = base_state()
    msg(kept, "msg_0002")["read"] = True  # touched the record instead of deleting it
    r = diff_states(initial, expected, kept)
    # Missed once; the edit inside a record that should be gone is not counted again.
    assert_counts(r, t=1, m=0, m_b=0, r_c=0.0, r_b=0.0, success=False)


def test_emptying_a_list_counts_each_record() -> None:
    expected = base_state()
    expected["mail"]["messages"] = []
    r = diff_states(base_state(), expected, copy.deepcopy(expected))
    assert_counts(r, t=2, m=2, m_b=0, r_c=1.0, r_b=0.0, success=True)
    assert paths(r.required) == ["mail.messages[msg_0001]", "mail.messages[msg_0002]"]


def test_deleting_a_record_that_should_change() -> None:
    initial, expected = base_state(), base_state()
    msg(expected, "msg_0001")["read"] = True
    actual = base_state()
    actual["mail"]["messages"] = [msg(actual, "msg_0002")]
    r = diff_states(initial, expected, actual)
    # The required read flag is missed and the deletion is one unwanted change.
    assert_counts(r, t=1, m=0, m_b=1, r_c=0.0, r_b=1.0, success=False)
    assert paths(r.unwanted) == ["mail.messages[msg_0001]"]


# --- volatile keys ----------------------------------------------------------------------------


def test_volatile_keys_are_ignored() -> None:
    initial, expected = base_state(), base_state()
    msg(expected, "msg_0001")["read"] = True
    actual = copy.deepcopy(expected)
    msg(actual, "msg_0001")["received_at"] = "2026-03-02T11:11:11Z"
    msg(actual, "msg_0001")["updated_at"] = "2026-03-02T11:11:11Z"
    actual["session"]["token"] = "tok-new"
    actual["session"]["expires_in"] = 3600
    actual["session"]["refresh_token"] = "r-1"
    r = diff_states(initial, expected, actual)
    assert_counts(r, t=1, m=1, m_b=0, r_c=1.0, r_b=0.0, success=True)


def test_volatile_paths_and_custom_key_patterns() -> None:
    actual = base_state()
    actual["calendar"]["events"][0]["title"] = "Renamed"
    assert diff_states(base_state(), base_state(), actual).M_b == 1
    by_path = StateDiffConfig(volatile_paths=("calendar.events[*].title",))
    assert_counts(diff_states(base_state(), base_state(), actual, config=by_path), 0, 0, 0, 1.0, 0.0, True)
    by_key = StateDiffConfig(volatile_keys=("ti*",))
    assert diff_states(base_state(), base_state(), actual, config=by_key).M_b == 0
    # Replacing the key list drops the defaults: the timestamp now counts.
    msg(actual, "msg_0001")["received_at"] = "later"
    assert diff_states(base_state(), base_state(), actual, config=by_key).M_b == 1


# --- long text --------------------------------------------------------------------------------

NOTE_BEFORE = "Q3 planning: budget review pending."
NOTE_AFTER = "Q3 planning: budget review done. Ana sends the final figures to Bo by Friday noon."


def notes(body: str) -> dict[str, Any]:
    return {"docs": {"notes": [{"id": "note_0001", "body": body}]}}


def test_long_text_fuzzy_match_accepted() -> None:
    # Same text up to case, a doubled space and the final period: ratio ~ 0.99 >= 0.85.
    sloppy = "q3 planning:  budget review done. ana sends the final figures to Bo by Friday noon"
    r = diff_states(notes(NOTE_BEFORE), notes(NOTE_AFTER), notes(sloppy))
    assert_counts(r, t=1, m=1, m_b=0, r_c=1.0, r_b=0.0, success=True)
    assert r.matched[0].fuzzy is True


def test_long_text_real_change_rejected() -> None:
    # Only the 27-character prefix is shared: the ratio is far below 0.85.
    other = "Q3 planning: budget review postponed; nobody owns the numbers until next month."
    r = diff_states(notes(NOTE_BEFORE), notes(NOTE_AFTER), notes(other))
    assert_counts(r, t=1, m=0, m_b=0, r_c=0.0, r_b=0.0, success=False)


def test_unchanged_text_is_not_a_fuzzy_hit_for_a_small_required_edit() -> None:
    before = "Please book the large conference room for the quarterly review on Thursday afternoon."
    after = before.replace("Thursday", "Friday")
    # The old text resembles the new one (ratio > 0.85) but did not move toward it: still a miss.
    r = diff_states(notes(before), notes(after), notes(before))
    assert_counts(r, t=1, m=0, m_b=0, r_c=0.0, r_b=0.0, success=False)
    done = diff_states(notes(before), notes(after), notes(after.upper()))
    assert_counts(done, t=1, m=1, m_b=0, r_c=1.0, r_b=0.0, success=True)


def test_short_text_needs_exact_equality() -> None:
    initial, expected, actual = base_state(), base_state(), base_state()
    msg(expected, "msg_0001")["subject"] = "Budget Q3"
    msg(actual, "msg_0001")["subject"] = "budget q3"
    assert diff_states(initial, expected, actual).M == 0


def test_long_text_rewording_outside_t_is_not_unwanted() -> None:
    actual = notes(NOTE_AFTER.lower())
    assert diff_states(notes(NOTE_AFTER), notes(NOTE_AFTER), actual).M_b == 0


# --- values and configuration -----------------------------------------------------------------


def test_numbers_with_tolerance_and_bools_are_not_ints() -> None:
    initial = {"bank": {"balance": 100.0, "frozen": False}}
    expected = {"bank": {"balance": 100.3, "frozen": True}}
    actual = {"bank": {"balance": 100.1 + 0.2, "frozen": 1}}
    r = diff_states(initial, expected, actual)
    # 100.1 + 0.2 == 100.30000000000001 matches; 1 is not True.
    assert_counts(r, t=2, m=1, m_b=0, r_c=0.5, r_b=0.0, success=False)
    assert paths(r.missed) == ["bank.frozen"]


def test_inputs_are_not_modified() -> None:
    initial = base_state()
    expected = with_drafts({"id": "drf_0001", **DRAFT})
    actual = with_drafts({"id": "drf_0009", **DRAFT})
    copies = copy.deepcopy((initial, expected, actual))
    diff_states(initial, expected, actual)
    assert (initial, expected, actual) == copies


def test_result_round_trips_as_json() -> None:
    expected = base_state()
    expected["mail"]["messages"] = [msg(expected, "msg_0001")]
    r = diff_states(base_state(), expected, base_state())
    assert StateDiffResult.model_validate_json(r.model_dump_json()) == r
    assert r.summary() == "failure: R_c=0.000 (0/1 required changes), R_b=0.000 (0 unwanted)"


@pytest.mark.parametrize(
    "kwargs", [{"fuzzy_threshold": 1.5}, {"pair_min_similarity": -0.1}, {"generated_id_pattern": "("}]
)
def test_bad_config_raises_config_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="state diff"):
        StateDiffConfig(**kwargs)


def test_apps_declare_their_clock_stamped_paths() -> None:
    from cworld.sandbox.apps.mail import MailApp
    from cworld.sandbox.framework.session import SandboxSession
    from cworld.sandbox.statediff import config_for_apps

    session = SandboxSession(seed=4, apps=[MailApp])
    initial = session.snapshot()
    contact = sorted(initial["mail"]["contacts"])[0]
    session.tick()
    session.app("mail").send_email(to=[contact], subject="Hello", body="See you at ten.")  # type: ignore[attr-defined]
    expected = session.snapshot()
    session.reset()
    for _ in range(3):  # the agent works longer: its send time differs
        session.tick()
    session.app("mail").send_email(to=[contact], subject="Hello", body="See you at ten.")  # type: ignore[attr-defined]
    actual = session.snapshot()
    assert not diff_states(initial, expected, actual).success
    assert diff_states(initial, expected, actual, config=config_for_apps([MailApp])).success


# --- apps the same in all three states are left out of the diff ---------------------------------------

def _full(initial, expected, actual):
    from cworld.sandbox.statediff.diff import _diff, _rules
    from cworld.sandbox.statediff.ids import raw_strings

    return _diff(initial, expected, actual, _rules(StateDiffConfig()), frozenset(raw_strings(initial)), frozenset())


def test_leaving_out_untouched_apps_changes_nothing(monkeypatch) -> None:
    import cworld.sandbox.statediff.diff as diff_module

    initial = {"mail": {"messages": [{"id": "msg_0001", "subject": "Budget", "folder": "inbox"}]},
               "notes": {"pages": [{"id": "note_0001", "text": "Same everywhere", "flag": True}]}}
    expected = {"mail": {"messages": [*initial["mail"]["messages"], {"id": "msg_0002", "subject": "Re: Budget"}]},
                "notes": {"pages": [{"id": "note_0001", "text": "Same everywhere", "flag": True}]}}
    new = {"id": "msg_0007", "subject": "Re: Budget"}
    two = {**expected, "mail": {"messages": [*expected["mail"]["messages"], {"id": "msg_0003", "subject": "Re: Budget"}]}}
    cases = [
        (expected, {"mail": {"messages": [*initial["mail"]["messages"], new]}, "notes": initial["notes"]}, True),
        (two, {"mail": {"messages": [*initial["mail"]["messages"], new, new]}, "notes": initial["notes"]}, True),
        (expected, {"mail": expected["mail"], "notes": {"pages": [{**initial["notes"]["pages"][0], "flag": 1}]}}, False),
    ]
    calls: list[Any] = []
    real = diff_module._diff
    monkeypatch.setattr(diff_module, "_diff", lambda *a: calls.append(a[5]) or real(*a))
    for want, actual, left_out in cases:
        full = _full(initial, want, actual)
        calls.clear()
        assert diff_states(initial, want, actual) == full
        assert len(calls) == 1 and bool(calls[0]) is left_out  # notes left out when the same in all three
    # True and 1 are equal to Python, not to the diff: that app stays in and counts as changed
    assert diff_states(initial, expected, cases[2][1]).M_b == 1
    # renamed ids are new, so never strings of a left-out app; the guard redoes the diff if one were
    with pytest.raises(diff_module._LeftOutRenamed):
        diff_module._checked({"msg_0007": "note_0001"}, frozenset({"note_0001"}))
    with pytest.raises(diff_module._LeftOutRenamed):
        diff_module._checked({"msg_0007#2": "msg_0003"}, frozenset({"note_0001"}))
    assert diff_module._checked({"msg_0007": "msg_0002"}, frozenset({"note_0001"})) == {"msg_0007": "msg_0002"}


def test_leaving_out_what_all_three_share_inside_an_app_changes_nothing(monkeypatch) -> None:
    import cworld.sandbox.statediff.diff as diff_module

    messages = {f"msg_{n:04d}": {"id": f"msg_{n:04d}", "subject": f"Note {n}", "read": False, "tags": ["a"]}
                for n in range(1, 30)}
    initial = {"mail": {"account": {"me": "ana"}, "messages": messages, "drafts": {}},
               "notes": {"pages": {"p1": {"id": "p1", "text": "Same everywhere"}}}}
    gold = {"id": "msg_0040", "subject": "Re: Note 3", "read": False, "tags": ["a"]}

    def state(**changes: dict) -> dict:
        out = copy.deepcopy(initial)
        for key, record in changes.items():
            out["mail"]["messages"][key] = record
        return out

    expected = state(msg_0040=gold, msg_0003={**messages["msg_0003"], "read": True})
    cases = [
        state(msg_0040=gold, msg_0003={**messages["msg_0003"], "read": True}),  # the gold plan's end state
        state(msg_0043={**gold, "id": "msg_0043"}, msg_0003={**messages["msg_0003"], "read": True}),  # renamed
        state(msg_0040=gold, msg_0003={**messages["msg_0003"], "read": 1}),  # 1 is not True to the diff
        state(msg_0040=gold, msg_0007={**messages["msg_0007"], "tags": ["a", "b"]}),  # missed one, broke one
        {**state(msg_0040=gold), "mail": {**state(msg_0040=gold)["mail"], "drafts": {"d1": {"id": "d1"}}}},
    ]
    cuts: list[Any] = []
    real = diff_module._diff
    monkeypatch.setattr(diff_module, "_diff", lambda *a: cuts.append(a[7] if len(a) > 7 else None) or real(*a))
    for actual in cases:
        full = _full(initial, expected, actual)
        cuts.clear()
        assert diff_states(initial, expected, actual) == full
        assert cuts == [frozenset({"mail"})]  # the 27 messages no one touched never reached the diff
    assert [diff_states(initial, expected, a).success for a in cases] == [True, True, False, False, False]
    assert diff_states(initial, expected, cases[1]).renamed_ids == {"msg_0043": "msg_0040"}


def test_a_cached_baseline_is_never_modified() -> None:
    from cworld.sandbox.statediff import sandbox_baseline, sandbox_initial_state, sandbox_state_diff

    baseline = sandbox_baseline(3)
    apps = sorted(baseline.state)
    end = {"_changes": True, apps[0]: {"made": {"x_0001": {"id": "x_0001"}}}}
    sandbox_state_diff(3, {apps[0]: {}}, end)
    assert baseline.state == sandbox_initial_state(3)
