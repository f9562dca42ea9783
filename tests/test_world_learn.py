"""Learning a service's rules from its traffic (`cworld world learn`, docs/world-engine.md "Learning rules"):
a refusal learned from calls, an effect from a state diff, a page size from list answers, a corrected file
kept on a second run, the model's draft path (mock provider), and learning that reads no app code."""

from __future__ import annotations

import ast
import copy
from pathlib import Path
from typing import Any

import yaml

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.learn.files import document, write
from cworld.engine.learn.learner import ServerLearning, induce, learn_tool
from cworld.engine.learn.replay import run_on
from cworld.engine.learn.traffic import Observation

NOW = "2026-08-21T09:45:20Z"


def _tool(name: str, props: dict[str, Any], required: list[str], read_only: bool = False) -> ToolSpec:
    return ToolSpec.model_validate({"server": "shop", "name": name, "description": f"{name} (test)",
                                    "input_schema": {"type": "object", "properties": props, "required": required},
                                    "annotations": {"read_only_hint": read_only}})


def _obs(tool: ToolSpec, args: dict[str, Any], before: dict[str, Any], after: dict[str, Any] | None = None,
         error: tuple[str, str] | None = None, answer: dict[str, Any] | None = None) -> Observation:
    result = ToolResult.error(error[0], error[1]) if error else ToolResult.ok(answer or {"ok": True})  # type: ignore[arg-type]
    return Observation(tool, args, result, NOW, before, after if after is not None else copy.deepcopy(before))


PAY = _tool("pay", {"card_id": {"type": "string"}, "amount": {"type": "number"}}, ["card_id", "amount"])


def _cards(n: int) -> dict[str, Any]:
    """Cards `pm_0001..`: odd ones expired last year, even ones valid next year."""
    return {"cards": {f"pm_{i:04d}": {"expires": "2025-03" if i % 2 else "2027-11", "brand": "Visa"}
                      for i in range(1, n + 1)}}


def _pay_calls() -> list[Observation]:
    state = _cards(12)
    calls = []
    for i in range(1, 13):
        key = f"pm_{i:04d}"
        expired = state["cards"][key]["expires"] < NOW[:7]
        calls.append(_obs(PAY, {"card_id": key, "amount": 10.0}, state,
                          error=("business", f"conflict: card {key} expired") if expired else None))
    for wrong in ("pm_0404", "pm_0777", "pm_0999"):
        calls.append(_obs(PAY, {"card_id": wrong, "amount": 5.0}, state, error=("not_found", f"no card {wrong}")))
    return calls


def test_an_expired_card_is_refused_by_a_condition_learned_from_calls() -> None:
    rule, support = induce(PAY, _pay_calls())
    finds = [s for s in rule.check if s.find]
    fails = [s for s in rule.check if s.fail]
    assert finds and finds[0].in_ == "cards" and finds[0].error == "not_found"
    assert any("now" in (s.fail or "") and "expires" in (s.fail or "") for s in fails), rule.check
    fresh = {"cards": {"pm_0050": {"expires": "2026-07", "brand": "Visa"}, "pm_0051": {"expires": "2026-09"}}}
    assert run_on(rule, _obs(PAY, {"card_id": "pm_0050", "amount": 1.0}, fresh))[0] == "business"  # expired last month
    assert run_on(rule, _obs(PAY, {"card_id": "pm_0051", "amount": 1.0}, fresh))[0] == "ok"
    assert run_on(rule, _obs(PAY, {"card_id": "pm_9999", "amount": 1.0}, fresh))[0] == "not_found"
    assert any(n >= 3 for n in support.values())


RESTOCK = _tool("restock", {"product_id": {"type": "string"}, "quantity": {"type": "integer"}},
                ["product_id", "quantity"])


def test_an_effect_is_learned_from_a_state_diff() -> None:
    calls = []
    for i, qty in enumerate((3, 5, 2, 7, 1, 4), start=1):
        before = {"catalog": {f"SKU-10{j}": {"stock": 10 * j, "name": f"item {j}"} for j in range(1, 8)}}
        after = copy.deepcopy(before)
        after["catalog"][f"SKU-10{i}"]["stock"] += qty
        after["catalog"][f"SKU-10{i}"]["restocked_at"] = NOW
        calls.append(_obs(RESTOCK, {"product_id": f"SKU-10{i}", "quantity": qty}, before, after))
    rule, _ = induce(RESTOCK, calls)
    adds = [e for e in rule.do if e.add]
    assert adds and adds[0].to == {"stock": "args['quantity']"}, rule.do
    assert any(e.set and (e.to or {}).get("restocked_at") == "now" for e in rule.do), rule.do
    state = {"catalog": {"SKU-200": {"stock": 1, "name": "new"}}}
    verdict, after = run_on(rule, _obs(RESTOCK, {"product_id": "SKU-200", "quantity": 9}, state))
    assert verdict == "ok" and after["catalog"]["SKU-200"]["stock"] == 10


LIST = _tool("list_orders", {"page": {"type": "integer"}}, [], read_only=True)


def test_a_page_size_is_learned_from_list_answers() -> None:
    orders = {f"ord_{i:04d}": {"status": "open", "placed_at": f"2026-08-{i:02d}T00:00:00Z"} for i in range(1, 15)}
    state = {"orders": orders}
    keys = sorted(orders, reverse=True)
    pages = {1: keys[:6], 2: keys[6:12], 3: keys[12:]}
    calls = [_obs(LIST, {"page": p}, state, answer={"orders": [{"order_id": k, **orders[k]} for k in shown],
                                                     "has_more": p < 3})
             for p, shown in pages.items() for _ in range(2)]
    rule, _ = induce(LIST, calls)
    assert rule.list_ is not None and rule.list_.from_ == "orders" and rule.list_.page_size == 6
    assert rule.list_.desc is True


REMIND = _tool("remind", {"text": {"type": "string"}, "at": {"type": "string"}}, ["text", "at"])


def test_a_time_argument_in_a_form_never_accepted_is_refused() -> None:
    state: dict[str, Any] = {"reminders": {}}
    calls = [_obs(REMIND, {"text": "t", "at": f"2026-09-0{d}T10:00"}, state) for d in range(1, 7)]
    calls += [_obs(REMIND, {"text": "t", "at": at}, state, error=("invalid_args", f"at '{at}' is not a time"))
              for at in ("soon", "later", "2026-09-01T10:00:00+02:00", "2026-09-02T08:00:00+00:00")]
    rule, _ = induce(REMIND, calls)
    assert [run_on(rule, o)[0] for o in calls] == [o.verdict for o in calls], rule.check
    assert run_on(rule, _obs(REMIND, {"text": "t", "at": "2026-12-24T18:30"}, state))[0] == "ok"
    assert run_on(rule, _obs(REMIND, {"text": "t", "at": "2026-12-24T18:30+01:00"}, state))[0] == "invalid_args"


def test_a_created_record_holds_its_own_key_and_a_time_read_from_an_argument() -> None:
    calls = []
    for n in range(1, 6):
        before = {"reminders": {f"rem_{i:04d}": {"id": f"rem_{i:04d}"} for i in range(1, n)}}
        after = copy.deepcopy(before)
        key = f"rem_{n:04d}"
        after["reminders"][key] = {"id": key, "due": f"2026-09-0{n}T08:00:00Z", "status": "pending"}
        calls.append(Observation(REMIND, {"text": "t", "at": f"2026-09-0{n}T10:00"}, ToolResult.ok({"ok": True}), NOW,
                                 before, after, {"rem": n - 1}))
    rule, _ = induce(REMIND, calls)
    state = {"reminders": {"rem_0007": {"id": "rem_0007"}}}
    fresh = Observation(REMIND, {"text": "t", "at": "2026-12-24T18:30"}, ToolResult.ok({}), NOW, state, None, {"rem": 7})
    verdict, after = run_on(rule, fresh)
    assert verdict == "ok" and after["reminders"]["rem_0008"] == {"id": "rem_0008", "due": "2026-12-24T16:30:00Z",
                                                                  "status": "pending"}, rule.do


LEAVE = _tool("leave", {"channel_id": {"type": "string"}}, ["channel_id"])
CANCEL = _tool("cancel", {"channel_id": {"type": "string"}}, ["channel_id"])


def test_a_member_leaving_is_learned_as_a_removal_and_a_refused_tool_still_finds_its_records() -> None:
    from cworld.engine.learn.atoms import server_hints

    def state() -> dict[str, Any]:
        return {"me": "U_1", "channels": {f"C_{i}": {"members": ["U_7", "U_1", f"U_{i}"]} for i in range(2, 8)}}

    calls = []
    for i in range(2, 8):
        after = state()
        after["channels"][f"C_{i}"]["members"].remove("U_1")
        calls.append(_obs(LEAVE, {"channel_id": f"C_{i}"}, state(), after))
    refused = [_obs(CANCEL, {"channel_id": c}, state(), error=("not_found", f"no channel {c}")) for c in ("C_90", "C_91")]
    refused += [_obs(CANCEL, {"channel_id": f"C_{i}"}, state(), error=("business", "general cannot go"))
                for i in range(2, 6)]
    rule, _ = induce(LEAVE, calls)
    other = {"me": "U_1", "channels": {"C_50": {"members": ["U_1", "U_3", "U_4"]}}}
    assert run_on(rule, _obs(LEAVE, {"channel_id": "C_50"}, other))[1]["channels"]["C_50"]["members"] == ["U_3", "U_4"]
    never, _ = induce(CANCEL, refused, server_hints(calls + refused))  # no call accepted: the name's collection
    assert [s.find for s in never.check if s.find] and run_on(never, refused[0])[0] == "not_found", never.check


ADD_LIST = _tool("add_list", {"card_id": {"type": "string"}, "name": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                              "title": {"type": "string"}}, ["card_id"])
SET_ROLE = _tool("set_role", {"board_id": {"type": "string"}, "member_id": {"type": "string"},
                              "role": {"type": "string"}}, ["board_id", "member_id", "role"])


def _boards() -> dict[str, Any]:
    """Cards on boards; the user (`p_1`) is an observer on brd_2, a member elsewhere."""
    roles = {"brd_1": {"p_1": "normal", "p_2": "admin"}, "brd_2": {"p_1": "observer", "p_2": "admin"},
             "brd_3": {"p_1": "admin", "p_3": "normal"}}
    return {"me": "p_1", "boards": {b: {"name": f"Board {b[-1]}", "roles": r} for b, r in roles.items()},
            "cards": {f"crd_{i}": {"board_id": f"brd_{i % 3 + 1}"} for i in range(1, 10)},
            "lists": {f"lst_{i}": {"board_id": f"brd_{i % 3 + 1}", "position": i // 3 + 1} for i in range(1, 7)}}


def test_a_condition_on_a_record_another_names_and_a_position_counted_from_its_siblings() -> None:
    """A card's board (named by the card) refuses an observer; a new list's position counts its board's lists;
    a name or a title must be given."""
    calls = []
    for i in range(1, 10):
        named = {"name": "x"} if i % 2 else {"title": "x"}
        before = _boards()
        board = before["cards"][f"crd_{i}"]["board_id"]
        if before["boards"][board]["roles"]["p_1"] == "observer":
            calls.append(_obs(ADD_LIST, {"card_id": f"crd_{i}", **named}, before,
                              error=("business", "permission_denied: you are an observer")))
            continue
        after = copy.deepcopy(before)
        n = sum(1 for x in before["lists"].values() if x["board_id"] == board)
        after["lists"]["lst_7"] = {"board_id": board, "position": n + 1}
        calls.append(Observation(ADD_LIST, {"card_id": f"crd_{i}", **named}, ToolResult.ok({}), NOW, before,
                                 after, {"lst": 6}))
    calls += [_obs(ADD_LIST, {"card_id": f"crd_{i}"}, _boards(), error=("invalid_args", "give a name or a title"))
              for i in (1, 3, 4)]
    rule, _ = induce(ADD_LIST, calls)
    assert [run_on(rule, o)[0] for o in calls] == [o.verdict for o in calls], rule.check
    state = _boards()
    state["boards"]["brd_3"]["roles"]["p_1"] = "observer"  # a world the rule never saw: brd_3 is now read-only
    state["cards"]["crd_50"] = {"board_id": "brd_1"}
    assert run_on(rule, _obs(ADD_LIST, {"card_id": "crd_2", "name": "y"}, state))[0] == "business"
    fresh = Observation(ADD_LIST, {"card_id": "crd_50", "name": "y"}, ToolResult.ok({}), NOW, state, None, {"lst": 6})
    verdict, after = run_on(rule, fresh)
    assert verdict == "ok" and after["lists"]["lst_0007"]["position"] == 3, rule.do


def test_an_entry_of_a_map_keyed_by_ids_is_set_alone() -> None:
    calls = []
    for member, role in (("p_2", "normal"), ("p_3", "admin"), ("p_4", "observer"), ("p_2", "observer")):
        before = _boards()
        after = copy.deepcopy(before)
        after["boards"]["brd_3"]["roles"][member] = role
        calls.append(_obs(SET_ROLE, {"board_id": "brd_3", "member_id": member, "role": role}, before, after))
    rule, _ = induce(SET_ROLE, calls)
    verdict, after = run_on(rule, _obs(SET_ROLE, {"board_id": "brd_1", "member_id": "p_9", "role": "admin"}, _boards()))
    assert verdict == "ok" and after["boards"]["brd_1"]["roles"] == {"p_1": "normal", "p_2": "admin", "p_9": "admin"}


ADD = _tool("add_to_cart", {"product_id": {"type": "string"}, "quantity": {"type": "integer"}}, ["product_id"])


def test_a_field_takes_the_argument_or_the_services_default() -> None:
    calls = []
    for n, qty in enumerate((3, None, 2, None, None, 5), start=1):
        before: dict[str, Any] = {"cart": {"items": {f"ci_{i:04d}": {"quantity": 1} for i in range(1, n)}}}
        after = copy.deepcopy(before)
        after["cart"]["items"][f"ci_{n:04d}"] = {"quantity": qty or 1}
        calls.append(Observation(ADD, {"product_id": "SKU-1", **({"quantity": qty} if qty else {})},
                                 ToolResult.ok({}), NOW, before, after, {"ci": n - 1}))
    rule, _ = induce(ADD, calls)
    assert [run_on(rule, o)[1] for o in calls] == [o.after for o in calls], rule.do


PASSPORT = _tool("add_traveller", {"name": {"type": "string"}, "number": {"type": "string"},
                                   "expires": {"type": "string"}}, ["name"])


def test_two_arguments_given_together_or_not_at_all() -> None:
    given = [{}, {"number": "X1", "expires": "2030-01-01"}, {}, {"number": "X2", "expires": "2031-05-01"},
             {"number": "X3"}, {"expires": "2030-01-01"}, {"number": "X4"}]
    calls = [_obs(PASSPORT, {"name": "a", **g}, {"travellers": {}},
                  error=("invalid_args", "give number and expires together") if len(g) == 1 else None) for g in given]
    rule, _ = induce(PASSPORT, calls)
    assert [run_on(rule, o)[0] for o in calls] == [o.verdict for o in calls], rule.check
    assert run_on(rule, _obs(PASSPORT, {"name": "b", "expires": "2029-02-02"}, {"travellers": {}}))[0] == "invalid_args"


TRANSFER = _tool("create_transfer", {"amount": {"type": "number"}}, ["amount"])


def test_two_records_made_from_one_counter_share_its_key_and_the_answer_names_the_first() -> None:
    calls = []
    for n in range(1, 6):
        before: dict[str, Any] = {"transfers": {f"trf_{i:04d}": {"amount": 1.0} for i in range(1, n)},
                                  "codes": {f"trf_{i:04d}": {"sent": 1} for i in range(1, n)}}
        after = copy.deepcopy(before)
        key = f"trf_{n:04d}"
        after["transfers"][key], after["codes"][key] = {"amount": float(n)}, {"sent": 1}
        calls.append(Observation(TRANSFER, {"amount": float(n)}, ToolResult.ok({"transfer_id": key, "amount": float(n)}),
                                 NOW, before, after, {"trf": n - 1}))
    rule, _ = induce(TRANSFER, calls)
    state = {"transfers": {"trf_0009": {"amount": 2.0}}, "codes": {"trf_0009": {"sent": 1}}}
    fresh = Observation(TRANSFER, {"amount": 7.0}, ToolResult.ok({}), NOW, state, None, {"trf": 9})
    verdict, after = run_on(rule, fresh)
    assert verdict == "ok" and set(after["transfers"]) == set(after["codes"]) == {"trf_0009", "trf_0010"}, rule.do
    assert rule.answer and "transfer_id" in rule.answer and "made_key" in rule.answer


REPLY = _tool("reply", {"message_id": {"type": "string"}, "body": {"type": "string"}}, ["message_id", "body"])


def test_a_reply_is_made_from_the_account_and_the_message_it_answers() -> None:
    account = {"name": "Jo Ann", "email": "jo@x.example"}
    inbox = {f"mail_{i:04d}": {"from": {"name": f"P{i}", "email": f"p{i}@y.example"}, "subject": f"Plan {i}"}
             for i in range(1, 6)}
    calls = []
    for i in range(1, 6):
        before = {"account": account, "messages": copy.deepcopy(inbox)}
        after = copy.deepcopy(before)
        after["messages"][f"mail_{5 + i:04d}"] = {"from": account, "to": [inbox[f"mail_{i:04d}"]["from"]],
                                                  "subject": f"Re: Plan {i}"}
        calls.append(Observation(REPLY, {"message_id": f"mail_{i:04d}", "body": "ok"}, ToolResult.ok({}), NOW,
                                 before, after, {"mail": 4 + i}))
        inbox.update({k: v for k, v in after["messages"].items() if k not in inbox})
    rule, _ = induce(REPLY, calls)
    state = {"account": {"name": "Al", "email": "al@z.example"},
             "messages": {"mail_0100": {"from": {"name": "Bo", "email": "bo@z.example"}, "subject": "Lunch"}}}
    fresh = Observation(REPLY, {"message_id": "mail_0100", "body": "yes"}, ToolResult.ok({}), NOW, state, None, {"mail": 100})
    made = run_on(rule, fresh)[1]["messages"]["mail_0101"]
    assert made == {"from": state["account"], "to": [{"name": "Bo", "email": "bo@z.example"}], "subject": "Re: Lunch"}


EVENTS = _tool("list_events", {"start_date": {"type": "string"}, "end_date": {"type": "string"}}, [], read_only=True)


def test_an_end_before_its_start_is_refused() -> None:
    spans = [("2026-03-01", "2026-03-09"), ("2026-04-02", "2026-04-01"), ("2026-02-10", "2026-02-11"),
             ("2026-05-20", "2026-05-02"), ("2026-01-05", "2026-01-25"), ("2026-06-30", "2026-06-01")]
    calls = [_obs(EVENTS, {"start_date": a, "end_date": b}, {"events": {}},
                  error=("invalid_args", "end_date must be on or after start_date") if b < a else None,
                  answer={"events": []}) for a, b in spans]
    rule, _ = induce(EVENTS, calls)
    assert run_on(rule, _obs(EVENTS, {"start_date": "2026-09-09", "end_date": "2026-09-01"}, {"events": {}}))[0] \
        == "invalid_args", rule.check
    assert run_on(rule, _obs(EVENTS, {"start_date": "2026-09-01", "end_date": "2026-09-03"}, {"events": {}}))[0] == "ok"


DM = _tool("send_dm", {"text": {"type": "string"}}, ["text"])


def test_each_of_two_records_made_holds_its_own_key() -> None:
    calls = []
    for n in range(1, 5):
        before: dict[str, Any] = {"dms": {f"D_{i:04d}": {"id": f"D_{i:04d}"} for i in range(1, n)},
                                  "messages": {f"chat_{i:04d}": {"id": f"chat_{i:04d}"} for i in range(1, 2 * n - 1)}}
        after = copy.deepcopy(before)
        after["dms"][f"D_{n:04d}"] = {"id": f"D_{n:04d}"}
        after["messages"][f"chat_{2 * n - 1:04d}"] = {"id": f"chat_{2 * n - 1:04d}"}
        calls.append(Observation(DM, {"text": "hi"}, ToolResult.ok({}), NOW, before, after,
                                 {"D": n - 1, "chat": 2 * n - 2}))
    rule, _ = induce(DM, calls)
    assert [run_on(rule, o)[1] for o in calls] == [o.after for o in calls], rule.do


SEND = _tool("send", {"to": {"type": "array", "items": {"type": "string"}}}, ["to"])


def test_recipients_are_the_records_the_ids_given_name() -> None:
    contacts = {f"c_{i}": {"name": f"N{i}", "email": f"n{i}@x.example", "phone": str(i)} for i in range(1, 7)}
    calls = []
    for n, to in enumerate((["c_1"], ["c_2", "c_3"], ["c_4"], ["c_5", "c_1", "c_6"]), start=1):
        before: dict[str, Any] = {"contacts": contacts, "sent": {f"m_{i:04d}": {"to": []} for i in range(1, n)}}
        after = copy.deepcopy(before)
        after["sent"][f"m_{n:04d}"] = {"to": [{"name": contacts[c]["name"], "email": contacts[c]["email"]} for c in to]}
        calls.append(Observation(SEND, {"to": to}, ToolResult.ok({}), NOW, before, after, {"m": n - 1}))
    rule, _ = induce(SEND, calls)
    state = {"contacts": {"c_9": {"name": "Z", "email": "z@y.example", "phone": "0"}}, "sent": {}}
    fresh = Observation(SEND, {"to": ["c_9"]}, ToolResult.ok({}), NOW, state, None, {"m": 0})
    assert run_on(rule, fresh)[1]["sent"]["m_0001"] == {"to": [{"name": "Z", "email": "z@y.example"}]}, rule.do


def test_a_write_answers_its_records_after_the_change_under_the_answers_key_name() -> None:
    """add_to_cart answers the cart's lines (the new one too) with each line's own id, not its product's."""
    calls = []
    catalog = {f"SKU-{i}": {"name": f"P{i}"} for i in range(1, 6)}
    for n in range(1, 6):
        lines = {f"ci_{i:04d}": {"product_id": f"SKU-{i}", "quantity": 1} for i in range(1, n)}
        before: dict[str, Any] = {"catalog": catalog, "cart": {"items": lines, "coupon": None}}
        after = copy.deepcopy(before)
        after["cart"]["items"][f"ci_{n:04d}"] = {"product_id": f"SKU-{n}", "quantity": 1}
        shown = [{"cart_item_id": k, "product_id": v["product_id"]} for k, v in after["cart"]["items"].items()]
        calls.append(Observation(ADD, {"product_id": f"SKU-{n}"}, ToolResult.ok({"items": shown}), NOW, before, after,
                                 {"ci": n - 1}))
    rule, _ = induce(ADD, calls)
    assert rule.list_ is not None and rule.list_.from_ == "cart['items']", rule.list_
    state = {"catalog": catalog, "cart": {"items": {"ci_0040": {"product_id": "SKU-2", "quantity": 1}}, "coupon": None}}
    from cworld.engine.rules.run import CallContext, run_rule

    outcome = run_rule(rule, CallContext(state, {"product_id": "SKU-3", "quantity": None}, NOW, ids={"ci": 40}))
    assert [i["cart_item_id"] for i in outcome.payload["items"]] == ["ci_0040", "ci_0041"], outcome.payload


def _learning(rule_calls: list[Observation]) -> ServerLearning:
    return ServerLearning("shop", [learn_tool(PAY, rule_calls, None)], len(rule_calls))


def test_a_corrected_file_is_kept_and_a_change_is_proposed(tmp_path: Path) -> None:
    path = tmp_path / "shop.learned.yaml"
    first = write(document(_learning(_pay_calls()), "test calls"), path)
    assert first.proposed is None and path.exists()
    again = write(document(_learning(_pay_calls()), "test calls"), path)  # not corrected: replaced
    assert again.proposed is None
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["tools"]["pay"]["check"][0]["message"] = "no such card: {args.card_id} (corrected by hand)"
    corrected = "# corrected by hand\n" + yaml.safe_dump(data, sort_keys=False)
    path.write_text(corrected, encoding="utf-8")
    third = write(document(_learning(_pay_calls()), "test calls"), path)
    assert path.read_text(encoding="utf-8") == corrected
    assert third.proposed is not None and third.proposed.exists() and "corrected by hand" in third.diff


def test_the_model_drafts_a_rule_that_the_replay_keeps(tmp_path: Path) -> None:
    from cworld.config import ModelsConfig
    from cworld.engine.learn.draft import model_drafter
    from cworld.llm import mock
    from cworld.llm.gateway import Gateway

    draft = ("```yaml\ncheck:\n- find: card\n  in: cards\n  key: args['card_id']\n  error: not_found\n"
             "- fail: \"card['expires'] < now[:7]\"\n  error: business\n  message: card {args.card_id} expired\n```")
    seen: list[Any] = []

    def reply(messages: list[Any], tools: Any) -> str:
        seen.append(messages)
        return draft

    from cworld.engine.learn.replay import agreement

    calls = _pay_calls()
    with mock.script("learn-draft", reply):
        gateway = Gateway(ModelsConfig.model_validate({"synth": {"model": "mock/learn-draft"}}))
        drafter = model_drafter(gateway, lambda tool: None)
        drafted = drafter(PAY, None, calls)
        learned = learn_tool(PAY, calls, None, drafter=drafter)
    assert seen and "pay" in seen[0][-1]["content"] and "<calls>" in seen[0][-1]["content"]
    assert drafted is not None and agreement(drafted, calls).agree == len(calls)  # replayed: every call agrees
    assert learned.source in ("traffic", "model") and learned.final.agree == len(calls)


def test_learning_reads_no_app_code() -> None:
    """The learner's modules import no sandbox app: it sees a service through its tools, answers and state."""
    folder = Path(__file__).resolve().parents[1] / "cworld" / "engine" / "learn"
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("cworld.sandbox.apps"), f"{path.name} imports {node.module}"
            if isinstance(node, ast.Import):
                assert all(not a.name.startswith("cworld.sandbox.apps") for a in node.names), path.name


def test_the_learning_explorer_gives_a_value_an_error_listed() -> None:
    import random

    from cworld.engine.learn.explorer import Explorer, Rates

    search = _tool("search_hotels", {"city": {"type": "string"}}, ["city"], read_only=True)
    listed = "no hotels listed in '{}'. Cities with hotels: Auckland, Bangkok, Berlin"
    for hints, expected in ((True, True), (False, False)):
        explorer = Explorer([search], random.Random(5), rates=Rates(hints=hints, seen=1.0))
        _, args = explorer.next_call()
        explorer.observe(search, ToolResult.error("not_found", listed.format(args["city"])))  # type: ignore[arg-type]
        _, again = explorer.next_call()
        assert (again["city"] in ("Auckland", "Bangkok", "Berlin")) is expected, (hints, again)


BOOK = _tool("book_flight", {"flight_id": {"type": "string"}, "traveller_ids": {"type": "array", "items": {"type": "string"}}},
             ["flight_id", "traveller_ids"])


def _travel_state() -> dict[str, Any]:
    people = {f"trv_{i:04d}": {"name": f"p{i}", "passport_number": None if i % 3 == 0 else f"X{i}"} for i in range(1, 13)}
    bookings = {f"bk_000{i}": {"flight_id": "AB123-20260101", "travellers": [f"trv_000{i}"], "status": "confirmed"}
                for i in (1, 4, 7)}
    bookings["bk_0002"] = {"flight_id": "AB123-20260101", "travellers": ["trv_0002"], "status": "cancelled"}
    return {"travellers": people, "bookings": bookings}


def test_a_refusal_over_the_records_a_list_argument_names_and_a_record_that_shares_an_item() -> None:
    state = _travel_state()
    calls = []
    for i in range(1, 13):
        for flight in ("AB123-20260101", "CD456-20260202"):
            mine = state["travellers"][f"trv_{i:04d}"]
            taken = flight == "AB123-20260101" and i in (1, 4, 7)
            error = ("business", "already flying") if taken else \
                ("business", "no passport on file") if mine["passport_number"] is None else None
            calls.append(_obs(BOOK, {"flight_id": flight, "traveller_ids": [f"trv_{i:04d}"]}, state, error=error))
    rule, _ = induce(BOOK, calls)
    fails = " | ".join(s.fail or "" for s in rule.check)
    assert "passport_number" in fails and "for v in" in fails, rule.check
    fresh = copy.deepcopy(state)
    fresh["travellers"]["trv_0050"] = {"name": "new", "passport_number": None}
    fresh["bookings"]["bk_0009"] = {"flight_id": "EF789-20260303", "travellers": ["trv_0004"], "status": "confirmed"}
    assert run_on(rule, _obs(BOOK, {"flight_id": "CD456-20260202", "traveller_ids": ["trv_0002", "trv_0050"]}, fresh))[0] == "business"
    assert run_on(rule, _obs(BOOK, {"flight_id": "EF789-20260303", "traveller_ids": ["trv_0004"]}, fresh))[0] == "business"
    assert run_on(rule, _obs(BOOK, {"flight_id": "AB123-20260101", "traveller_ids": ["trv_0002"]}, fresh))[0] == "ok"  # cancelled
    assert run_on(rule, _obs(BOOK, {"flight_id": "EF789-20260303", "traveller_ids": ["trv_0005"]}, fresh))[0] == "ok"


def test_an_id_of_another_form_than_every_accepted_one_is_refused() -> None:
    hotel = _tool("book_hotel", {"hotel_id": {"type": "string"}}, ["hotel_id"])
    state: dict[str, Any] = {"bookings": {}}
    calls = [_obs(hotel, {"hotel_id": h}, state) for h in ("htl_029", "htl_112", "htl_007", "htl_300")]
    calls += [_obs(hotel, {"hotel_id": h}, state, error=("not_found", f"no hotel '{h}'"))
              for h in ("hotel_4618", "hotel_0090", "hotel_1235")]
    rule, _ = induce(hotel, calls)
    assert run_on(rule, _obs(hotel, {"hotel_id": "hotel_5555"}, state))[0] == "not_found", rule.check
    assert run_on(rule, _obs(hotel, {"hotel_id": "htl_555"}, state))[0] == "ok"


def test_seats_sold_move_by_the_travellers_in_the_cabin_named_and_a_number_is_stored_upper_cased() -> None:
    book = _tool("book", {"flight_id": {"type": "string"}, "cabin": {"type": "string"},
                          "traveller_ids": {"type": "array", "items": {"type": "string"}},
                          "passport": {"type": "string"}}, ["flight_id", "cabin", "traveller_ids", "passport"])
    calls = []
    for i, (cabin, people) in enumerate((("economy", 1), ("business", 2), ("economy", 3), ("premium", 1),
                                         ("business", 1), ("economy", 2))):
        before = {"sold": {f"NL86{j}-20260310": {"economy": j, "business": 0, "premium": 1} for j in range(6)},
                  "account": {"passport": None, "name": "me"}}
        after = copy.deepcopy(before)
        after["sold"][f"NL86{i}-20260310"][cabin] += people
        after["account"]["passport"] = f"ab{i}x".upper()
        args = {"flight_id": f"NL86{i}-20260310", "cabin": cabin, "traveller_ids": [f"trv_{k:04d}" for k in range(people)],
                "passport": f"ab{i}x"}
        calls.append(_obs(book, args, before, after))
    rule, _ = induce(book, calls)
    state = {"sold": {"AB999-20260310": {"economy": 0, "business": 4}}, "account": {"passport": None, "name": "me"}}
    verdict, after = run_on(rule, _obs(book, {"flight_id": "AB999-20260310", "cabin": "business",
                                              "traveller_ids": ["a", "b", "c"], "passport": "zz9"}, state))
    assert verdict == "ok" and after["sold"]["AB999-20260310"] == {"economy": 0, "business": 7}, rule.do
    assert after["account"]["passport"] == "ZZ9", rule.do


def test_an_event_overlapping_one_of_the_users_is_refused_unless_the_overlap_is_allowed() -> None:
    create = _tool("create_event", {"start": {"type": "string"}, "end": {"type": "string"},
                                    "allow_overlap": {"type": "boolean"}}, ["start", "end"])

    def event(day: int, hour: int, status: str = "confirmed", organizer: str = "me_1") -> dict[str, Any]:
        return {"start": f"2026-05-{day:02d}T{hour:02d}:00:00Z", "end": f"2026-05-{day:02d}T{hour + 1:02d}:00:00Z",
                "organizer": organizer, "status": status}

    state = {"me": "me_1", "events": {"evt_0001": event(1, 9), "evt_0002": event(2, 9, "cancelled"),
                                      "evt_0003": event(3, 9), "evt_0004": event(4, 14)}}
    calls = []
    for day in range(1, 6):
        for hour, allow in ((9, None), (9, True), (12, None), (14, False)):
            busy = any(e["status"] != "cancelled" and e["start"] == f"2026-05-{day:02d}T{hour:02d}:00:00Z"
                       for e in state["events"].values())
            args = {"start": f"2026-05-{day:02d}T{hour:02d}:00", "end": f"2026-05-{day:02d}T{hour:02d}:30",
                    **({} if allow is None else {"allow_overlap": allow})}
            calls.append(_obs(create, args, state, error=("business", "conflict: you are already in it")
                              if busy and not allow else None))
    rule, _ = induce(create, calls)
    fresh = {"me": "me_1", "events": {"evt_0009": event(20, 16)}}

    def at(hour: int, allow: bool | None = None) -> str:
        args = {"start": f"2026-05-20T{hour}:15", "end": f"2026-05-20T{hour}:45",
                **({} if allow is None else {"allow_overlap": allow})}
        return run_on(rule, _obs(create, args, fresh))[0]

    assert at(16) == "business" and at(16, True) == "ok" and at(10) == "ok" and at(10, False) == "ok", rule.check


def test_a_file_is_keyed_by_its_path_under_the_allowed_folder_and_a_path_outside_it_is_refused() -> None:
    write_file = _tool("write_file", {"path": {"type": "string"}, "content": {"type": "string"}}, ["path", "content"])
    root = "/scratch/fs"
    state: dict[str, Any] = {"root": root, "files": {"a.txt": {"parent": "", "content": "old", "size": 3}},
                             "directories": {"docs": {"parent": ""}}}
    calls = []
    for i, where in enumerate(("docs/n1.md", "b.txt", "docs/n2.md", "a.txt", "c.txt", "docs/n3.md")):
        after = copy.deepcopy(state)
        text = "x" * (i + 2)
        after["files"][where] = {"parent": where.rpartition("/")[0], "content": text, "size": len(text)}
        calls.append(_obs(write_file, {"path": f"{root}/{where}", "content": text}, state, after))
    for outside in ("/etc/passwd", "/home/me/x.txt", "/tmp/y"):
        calls.append(_obs(write_file, {"path": outside, "content": "z"}, state,
                          error=("business", f"Access denied - path outside allowed directories: {outside}")))
    rule, _ = induce(write_file, calls)
    fresh = {"root": root, "files": {}, "directories": {"d": {"parent": ""}}}
    verdict, after = run_on(rule, _obs(write_file, {"path": f"{root}/d/new.txt", "content": "hello"}, fresh))
    assert verdict == "ok" and after["files"]["d/new.txt"] == {"parent": "d", "content": "hello", "size": 5}, rule.do
    assert run_on(rule, _obs(write_file, {"path": "/var/z.txt", "content": "z"}, fresh))[0] == "business", rule.check


def test_records_made_and_removed_for_each_item_of_a_list_argument() -> None:
    entity = {"type": "object", "properties": {"name": {"type": "string"}, "entityType": {"type": "string"}}}
    create = _tool("create_entities", {"entities": {"type": "array", "items": entity}}, ["entities"])
    delete = _tool("delete_entities", {"names": {"type": "array", "items": {"type": "string"}}}, ["names"])
    base: dict[str, Any] = {"entities": {"Ada": {"name": "Ada", "entityType": "person"}},
                            "relations": {"Ada|knows|Bob": {"from": "Ada", "to": "Bob"}}}
    calls = []
    for batch in (["Bob", "Cy"], ["Dee"], ["Eve", "Fay", "Gus"]):
        after = copy.deepcopy(base)
        items = [{"name": n, "entityType": "person"} for n in batch]
        after["entities"].update({n: {"name": n, "entityType": "person"} for n in batch})
        calls.append(_obs(create, {"entities": items}, base, after))
    rule, _ = induce(create, calls)
    verdict, after = run_on(rule, _obs(create, {"entities": [{"name": "Zed", "entityType": "org"},
                                                             {"name": "Ada", "entityType": "org"}]}, base))
    assert after["entities"]["Zed"] == {"name": "Zed", "entityType": "org"}, rule.do
    assert after["entities"]["Ada"]["entityType"] == "person", rule.do  # one that was there is kept
    removals = []
    for names in (["Ada"], ["Ada", "Nope"]):
        after = copy.deepcopy(base)
        del after["entities"]["Ada"], after["relations"]["Ada|knows|Bob"]
        removals.append(_obs(delete, {"names": names}, base, after))
    rule, _ = induce(delete, removals)
    verdict, after = run_on(rule, _obs(delete, {"names": ["Ada"]}, base))
    assert verdict == "ok" and after == {"entities": {}, "relations": {}}, rule.do


def test_a_table_is_keyed_by_the_name_its_statement_gives() -> None:
    create = _tool("create_table", {"query": {"type": "string"}}, ["query"])
    base: dict[str, Any] = {"tables": {"items": {"sql": "CREATE TABLE items (id INTEGER)", "rows": {}}}}
    calls = []
    for name in ("notes_1", "plan_22", "log_9"):
        query = f"CREATE TABLE {name} (id INTEGER PRIMARY KEY, name TEXT)"
        after = copy.deepcopy(base)
        after["tables"][name] = {"sql": query, "rows": {}}
        calls.append(_obs(create, {"query": query}, base, after))
    rule, _ = induce(create, calls)
    verdict, after = run_on(rule, _obs(create, {"query": "CREATE TABLE todo_5 (x TEXT)"}, base))
    assert after["tables"]["todo_5"] == {"sql": "CREATE TABLE todo_5 (x TEXT)", "rows": {}}, rule.do


def test_a_write_answers_the_record_it_made_under_the_key_its_answers_named_it() -> None:
    create = _tool("create_event", {"title": {"type": "string"}}, ["title"])
    base: dict[str, Any] = {"events": {"evt_0001": {"title": "old"}},
                            "calendars": {"cal_mine": {"id": "cal_mine", "owner": "person_1"}}}
    calls = []
    for i, title in enumerate(("a", "b", "c"), start=2):
        after = copy.deepcopy(base)
        after["events"][f"evt_{i:04d}"] = {"title": title}
        obs = _obs(create, {"title": title}, base, after,
                   answer={"event_id": f"evt_{i:04d}", "calendar_id": "cal_mine", "title": title})
        obs.ids = {"evt": i - 1}
        calls.append(obs)
    rule, _ = induce(create, calls)
    assert rule.answer == "{'event_id': made_key, **made}", rule.answer


def test_an_argument_that_must_be_the_folder_the_state_names() -> None:
    add = _tool("git_add", {"repo_path": {"type": "string"}, "files": {"type": "array", "items": {"type": "string"}}},
                ["repo_path", "files"])
    state: dict[str, Any] = {"repo": "/scratch/git/repo", "index": {}}
    calls = [_obs(add, {"repo_path": "/scratch/git/repo", "files": [f]}, state) for f in ("a", "b", "c")]
    calls += [_obs(add, {"repo_path": p, "files": ["a"]}, state, error=("business", f"{p} is outside the repository"))
              for p in ("/tmp/q3", "/home/x", "/scratch/git")]
    rule, _ = induce(add, calls)
    moved = {"repo": "/elsewhere/repo", "index": {}}
    assert run_on(rule, _obs(add, {"repo_path": "/elsewhere/repo", "files": ["z"]}, moved))[0] == "ok", rule.check
    assert run_on(rule, _obs(add, {"repo_path": "/scratch/git/repo", "files": ["z"]}, moved))[0] == "business"


def test_an_edit_whose_text_the_file_does_not_hold_is_refused() -> None:
    edit = _tool("edit_file", {"path": {"type": "string"}, "edits": {"type": "array", "items": {"type": "object"}}},
                 ["path", "edits"])
    state: dict[str, Any] = {"root": "/r", "files": {f"f{i}.txt": {"content": f"line one {i}\nline two"} for i in range(6)}}
    calls = [_obs(edit, {"path": f"/r/f{i}.txt", "edits": [{"oldText": "line two ", "newText": "x"}]}, state)
             for i in range(4)]
    calls += [_obs(edit, {"path": f"/r/f{i}.txt", "edits": [{"oldText": w, "newText": "y"}]}, state,
                   error=("business", f"Could not find exact match for edit:\n{w}")) for i, w in ((4, "zzz"), (5, "qq"), (1, "nope"))]
    rule, _ = induce(edit, calls)
    fresh = {"root": "/r", "files": {"g.txt": {"content": "alpha beta"}}}
    assert run_on(rule, _obs(edit, {"path": "/r/g.txt", "edits": [{"oldText": "gamma", "newText": ""}]}, fresh))[0] == "business"
    assert run_on(rule, _obs(edit, {"path": "/r/g.txt", "edits": [{"oldText": " beta", "newText": ""}]}, fresh))[0] == "ok"


def test_a_check_on_an_argument_is_shared_with_the_servers_other_tools() -> None:
    from cworld.engine.learn.learner import learn_server
    from cworld.engine.learn.traffic import Traffic

    write = _tool("write_file", {"path": {"type": "string"}}, ["path"])
    mkdir = _tool("create_directory", {"path": {"type": "string"}}, ["path"])
    state: dict[str, Any] = {"root": "/r", "files": {}}
    calls = [_obs(write, {"path": f"/r/a{i}.txt"}, state) for i in range(3)]
    calls += [_obs(write, {"path": p}, state, error=("business", "Access denied")) for p in ("/etc/x", "/home/y", "/z")]
    calls += [_obs(mkdir, {"path": f"/r/d{i}"}, state) for i in range(3)]
    learned = learn_server(Traffic("fs", [write, mkdir], calls), lambda tool: None)
    made = next(t for t in learned.tools if t.tool == "create_directory").rule
    assert made is not None and run_on(made, _obs(mkdir, {"path": "/etc/hosts"}, state))[0] == "business", made
    assert run_on(made, _obs(mkdir, {"path": "/r/new"}, state))[0] == "ok"


def test_a_moved_file_keeps_the_content_of_the_one_it_was_when_most_moves_were_of_files() -> None:
    move = _tool("move_file", {"source": {"type": "string"}, "destination": {"type": "string"}}, ["source", "destination"])
    base: dict[str, Any] = {"root": "/r", "files": {f"f{i}.txt": {"content": f"text {i}"} for i in range(5)},
                            "directories": {"d": {"parent": ""}}}
    calls = []
    for i in range(4):
        after = copy.deepcopy(base)
        after["files"][f"g{i}.txt"] = after["files"].pop(f"f{i}.txt")
        calls.append(_obs(move, {"source": f"/r/f{i}.txt", "destination": f"/r/g{i}.txt"}, base, after))
    after = copy.deepcopy(base)
    after["directories"]["e"] = after["directories"].pop("d")
    calls.append(_obs(move, {"source": "/r/d", "destination": "/r/e"}, base, after))
    rule, _ = induce(move, calls)
    state = {"root": "/r", "files": {"x.md": {"content": "moved text"}}, "directories": {}}
    verdict, end = run_on(rule, _obs(move, {"source": "/r/x.md", "destination": "/r/y.md"}, state))
    assert verdict == "ok" and end["files"] == {"y.md": {"content": "moved text"}}, rule.do


def test_a_files_edits_are_replaced_in_order_and_its_size_follows_its_content() -> None:
    edit = _tool("edit_file", {"path": {"type": "string"}, "edits": {"type": "array", "items": {"type": "object"}}},
                 ["path", "edits"])
    base: dict[str, Any] = {"root": "/r", "files": {f"f{i}.txt": {"content": f"one {i}\ntwo\n", "size": 8} for i in range(4)}}
    calls = []
    for i, edits in enumerate(([("two", "2")], [("one 1", "uno"), ("two", "dos")], [("two", "")], [(" two ", "zwei")])):
        after = copy.deepcopy(base)
        text = after["files"][f"f{i}.txt"]["content"]
        for old, new in edits:
            text = text.replace(old, new, 1) if old in text else text.replace(old.strip(), new.strip(), 1)
        after["files"][f"f{i}.txt"].update(content=text, size=len(text))
        calls.append(_obs(edit, {"path": f"/r/f{i}.txt", "edits": [{"oldText": a, "newText": b} for a, b in edits]},
                          base, after))
    rule, _ = induce(edit, calls)
    state = {"root": "/r", "files": {"n.md": {"content": "alpha beta gamma", "size": 16}}}
    verdict, end = run_on(rule, _obs(edit, {"path": "/r/n.md", "edits": [{"oldText": "beta", "newText": "B"},
                                                                         {"oldText": "gamma", "newText": "G!"}]}, state))
    assert verdict == "ok" and end["files"]["n.md"] == {"content": "alpha B G!", "size": 10}, rule.do


def test_observations_added_to_the_records_a_list_arguments_items_name() -> None:
    item = {"type": "object", "properties": {"entityName": {"type": "string"}, "contents": {"type": "array"}}}
    add = _tool("add_observations", {"observations": {"type": "array", "items": item}}, ["observations"])
    base: dict[str, Any] = {"entities": {n: {"name": n, "observations": ["old"]} for n in ("Ada", "Bob", "Cy")}}
    calls = []
    for batch in ((("Ada", ["x", "old"]),), (("Bob", ["y"]), ("Cy", ["z", "w"])), (("Cy", ["q"]),)):
        after = copy.deepcopy(base)
        for name, contents in batch:
            had = after["entities"][name]["observations"]
            after["entities"][name]["observations"] = had + [c for c in contents if c not in had]
        calls.append(_obs(add, {"observations": [{"entityName": n, "contents": c} for n, c in batch]}, base, after))
    rule, _ = induce(add, calls)
    verdict, end = run_on(rule, _obs(add, {"observations": [{"entityName": "Bob", "contents": ["old", "new"]}]}, base))
    assert verdict == "ok" and end["entities"]["Bob"]["observations"] == ["old", "new"], rule.do
