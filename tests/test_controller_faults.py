"""Every fault type fires on a live sandbox call, is logged, and shows the agent what it should."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cworld.controller import (
    GARBLE,
    TRUNCATION_MARKER,
    StateController,
    build_controller,
    similar_tools,
)
from cworld.controller.policy import FaultRule, Policy
from cworld.data_model import Constraint, PlanStep, Task, ToolResult
from cworld.environment import Environment, Workspace
from cworld.registry.tools import sandbox_tools

ENV = Environment.resolve()
TOOLS = sandbox_tools()

# Hand-made sandbox tasks for these tests (their plans use only ids the seeded world has).
MAIL_TASK = Task(
    id="ctl-mail",
    query="Find the newest inbox message and star it.",
    tools=["mail/list_messages", "mail/get_message", "mail/search_messages", "mail/star_message"],
    gold_plan=[
        PlanStep(id="s1", tool="mail/search_messages", arguments={"query": "the"}),
        PlanStep(id="s2", tool="mail/get_message", arguments={"message_id": "{{s1.messages.0.message_id}}"}),
        PlanStep(id="s3", tool="mail/star_message", arguments={"message_id": "{{s1.messages.0.message_id}}"}),
    ],
    constraints=[
        Constraint(id="c-calls", type="efficiency", description="at most 10 tool calls",
                   verification={"kind": "max_calls", "value": 10}),
        Constraint(id="c-due", type="deadline", description="done by the 12th",
                   verification={"kind": "deadline_before", "value": "2026-05-12"}),
    ],
)
SHOP_TASK = Task(
    id="ctl-shop",
    query="Log in to the shop and list my saved addresses.",
    tools=["shop/login", "shop/list_addresses", "shop/search_products"],
    gold_plan=[PlanStep(id="s1", tool="shop/login", arguments={"email": "x", "password": "y"}),
               PlanStep(id="s2", tool="shop/list_addresses", arguments={"token": "{{s1.token}}"})],
)


def only(kind: str, *, turns: tuple[int, int] = (1, 1), **params: Any) -> Policy:
    """A policy holding exactly one fault of `kind`, due at `turns`."""
    return Policy(name=f"only-{kind}", faults={kind: FaultRule(budget=1, turns=turns, params=params)})


async def opened(tmp_path: Path, policy: Policy, task: Task = MAIL_TASK, seed: int = 1) -> StateController:
    controller = build_controller(task, mode="live", policy=policy, seed=seed, agent="tester", env=ENV,
                                  workspace=Workspace(tmp_path / "ws"), tools=TOOLS)
    await controller.open()
    return controller


async def call(c: StateController, tool: str, turn: int, **args: Any):  # noqa: ANN201 - a CallOutcome
    return await c.call(TOOLS[tool], args, turn=turn)


def fired(c: StateController) -> list[tuple[str, str | None]]:
    return [(i.kind, i.params.get("phase")) for i in c.log]


# --- tool level --------------------------------------------------------------------------------------


async def test_timeout_fails_the_call_without_reaching_the_server_then_retry_works(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("timeout", delay_s=45))
    first = await call(c, "mail/list_messages", 1)
    again = await call(c, "mail/list_messages", 2)
    assert first.raw is None and first.observation.error_class == "timeout"
    assert "45s" in first.observation.text and first.observation.meta["latency_ms"] == 45000
    assert [(i.kind, i.level, i.turn, i.tool) for i in first.interventions] == [
        ("timeout", "tool", 1, "mail/list_messages")]
    assert not again.observation.is_error and again.interventions == []
    assert c.fault_report().unfired == []


async def test_timeout_that_reached_the_server_ran_the_write(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("timeout", reaches_server=True))
    out = await call(c, "mail/star_message", 1, message_id="mail_0001")
    state = await c.end_state()
    assert out.observation.error_class == "timeout" and out.raw is not None and not out.raw.is_error
    assert state is not None and state["mail"]["messages"]["mail_0001"]["starred"] is True


async def test_rate_limit_holds_for_its_window_on_the_whole_server(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("rate_limit", retry_after_turns=2, scope="server"))
    first = await call(c, "mail/list_messages", 1)
    same_server = await call(c, "mail/get_message", 2, message_id="mail_0001")
    other_server = await call(c, "calendar/list_calendars", 2)
    after = await call(c, "mail/list_messages", 3)
    assert first.observation.error_class == "rate_limit" and "retry after 40s" in first.observation.text
    assert first.observation.meta["retry_after_turns"] == 2
    assert same_server.observation.error_class == "rate_limit" and same_server.observation.meta["retry_after_turns"] == 1
    assert not other_server.observation.is_error and not after.observation.is_error
    assert fired(c) == [("rate_limit", "fire"), ("rate_limit", "persist")]


async def test_unavailable_answers_503_for_its_calls(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("unavailable", calls=2))
    outs = [await call(c, "mail/list_messages", t) for t in (1, 2, 3)]
    assert [o.observation.error_class for o in outs] == ["unavailable", "unavailable", None]
    assert "503" in outs[0].observation.text and outs[0].raw is None
    assert fired(c) == [("unavailable", "fire"), ("unavailable", "persist")]


async def test_deprecated_tool_is_gone_for_the_episode_and_an_alternative_works(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("deprecated"))
    [planned] = c.plan
    assert planned.target == "mail/search_messages"  # the only plan tool with an alternative
    before = await call(c, "mail/get_message", 1, message_id="mail_0001")
    gone = [await call(c, "mail/search_messages", t, query="the") for t in (2, 9)]
    [alternative] = similar_tools(TOOLS["mail/search_messages"], TOOLS.values(), k=1)
    replaced = await c.call(alternative, {}, turn=10)
    assert before.interventions == [] and not before.observation.is_error
    assert all(o.observation.error_class == "not_found" and "deprecated" in o.observation.text for o in gone)
    assert alternative.id == "mail/list_messages" and not replaced.observation.is_error
    assert fired(c) == [("deprecated", "fire"), ("deprecated", "persist")]


async def test_deprecation_is_dropped_when_no_plan_tool_has_an_alternative(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("deprecated"), task=SHOP_TASK)
    assert c.plan == []


async def test_network_error_is_transient(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("network_error", flavor=0))
    first, second = await call(c, "mail/list_messages", 1), await call(c, "mail/list_messages", 2)
    assert first.observation.error_class == "unavailable" and "ECONNRESET" in first.observation.text
    assert not first.observation.is_infra_error and not second.observation.is_error


# --- state level -------------------------------------------------------------------------------------


async def test_delayed_write_runs_once_and_its_result_comes_on_a_repeat(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("delayed", calls=2))
    args = {"message_id": "mail_0002", "starred": True}
    first = await c.call(TOOLS["mail/star_message"], args, turn=1)
    calls_after_first = c.backend.sandbox.session.calls  # type: ignore[attr-defined]
    early = await c.call(TOOLS["mail/star_message"], args, turn=2)
    ready = await c.call(TOOLS["mail/star_message"], args, turn=3)
    assert first.raw is not None and not first.raw.is_error
    assert first.observation.structured_content["status"] == "pending"
    assert early.observation.structured_content["status"] == "pending" and early.raw is None
    assert ready.observation.structured_content == first.raw.structured_content and ready.raw is None
    assert c.backend.sandbox.session.calls == calls_after_first  # type: ignore[attr-defined]
    assert fired(c) == [("delayed", "fire"), ("delayed", "persist"), ("delayed", "deliver")]


async def test_corrupted_spoils_fields_once(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("corrupted", fields=3, mode="mixed"))
    spoiled = await call(c, "mail/list_messages", 1)
    clean = await call(c, "mail/list_messages", 2)
    raw, seen = spoiled.raw.structured_content, spoiled.observation.structured_content  # type: ignore[union-attr]
    changed = _diff_leaves(raw, seen)
    assert len(changed) == 3 and raw == clean.observation.structured_content
    assert all(v is None or GARBLE in str(v) or type(v) is not type(o) for o, v in changed)
    assert json.loads(spoiled.observation.text) == seen
    [record] = spoiled.interventions
    assert record.level == "state" and len(record.params["paths"]) == 3


async def test_truncated_cuts_with_an_explicit_marker(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("truncated", max_chars=500, keep_fraction=0.5, min_chars=100))
    out = await call(c, "mail/list_messages", 1)
    text = out.observation.text
    assert TRUNCATION_MARKER in text and f"showing 500 of {len(out.raw.text)} characters" in text  # type: ignore[union-attr]
    assert text.startswith(out.raw.text[:500]) and out.observation.structured_content is None  # type: ignore[union-attr]


async def test_truncation_waits_for_a_payload_worth_cutting(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("truncated", max_chars=500, min_chars=400))
    short = await call(c, "mail/get_contact", 1, contact_id="ct_0001")
    long = await call(c, "mail/list_messages", 2)
    assert short.interventions == [] and TRUNCATION_MARKER in long.observation.text


async def test_stale_serves_the_earlier_answer_to_the_same_call(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("stale", turns=(3, 3)))
    before = await call(c, "mail/list_messages", 1)
    target = before.observation.structured_content["messages"][0]
    await call(c, "mail/star_message", 2, message_id=target["message_id"], starred=not target["starred"])
    stale = await call(c, "mail/list_messages", 3)
    fresh = await call(c, "mail/list_messages", 4)
    assert stale.observation.structured_content == before.observation.structured_content
    assert stale.raw.structured_content == fresh.observation.structured_content  # type: ignore[union-attr]
    assert stale.observation.structured_content != fresh.observation.structured_content
    assert stale.interventions[0].params["view"] == "call"


async def test_stale_serves_earlier_entity_versions_in_another_listing(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("stale", turns=(3, 3)))
    before = await call(c, "mail/list_messages", 1, page_size=5)
    target = before.observation.structured_content["messages"][0]
    await call(c, "mail/star_message", 2, message_id=target["message_id"], starred=not target["starred"])
    stale = await call(c, "mail/list_messages", 3, page_size=10)
    shown = stale.observation.structured_content["messages"][0]
    assert shown == target and stale.raw.structured_content["messages"][0]["starred"] != target["starred"]  # type: ignore[union-attr]
    assert stale.interventions[0].params["view"] == "entity"


async def test_session_expired_until_login(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("session_expired", turns=(2, 2)), task=SHOP_TASK)
    account = c.backend.sandbox.session.state["shop"]["account"]  # type: ignore[attr-defined]
    login = {"email": account["email"], "password": account["password"]}
    token = (await call(c, "shop/login", 1, **login)).observation.structured_content["token"]
    denied = await call(c, "shop/list_addresses", 2, token=token)
    browsing = await call(c, "shop/search_products", 3, query="pen")
    still = await call(c, "shop/list_addresses", 4, token=token)
    new_token = (await call(c, "shop/login", 5, **login)).observation.structured_content["token"]
    allowed = await call(c, "shop/list_addresses", 6, token=new_token)
    assert c.plan[0].target == "shop"
    assert denied.observation.error_class == "auth" and "401" in denied.observation.text
    assert not browsing.observation.is_error and still.observation.error_class == "auth"
    assert not allowed.observation.is_error
    assert fired(c) == [("session_expired", "fire"), ("session_expired", "persist"), ("session_expired", "resolve")]


# --- constraint level --------------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "replaces", "check"), [
    ("budget", "c-calls", {"kind": "max_calls", "value": 7}),
    ("deadline", "c-due", {"kind": "deadline_before", "value": "2026-05-11"}),
    ("deliverable", None, None),
    ("preference", None, None),
])
async def test_new_constraint_arrives_once_as_a_user_message(tmp_path: Path, variant: str, replaces: str | None,
                                                              check: dict[str, Any] | None) -> None:
    c = await opened(tmp_path, only("new_constraint", turns=(3, 3), variant=variant, tighten=0.75, shift_days=-1))
    assert c.due_user_messages(2) == []
    [(text, constraint, record)] = c.due_user_messages(3)
    assert c.due_user_messages(3) == [] and c.due_user_messages(9) == []
    assert text and record.level == "constraint" and record.turn == 3 and record.params["change"] == variant
    assert constraint.added_at_turn == 3 and constraint.replaces == replaces
    ids = [x.id for x in c.constraints]
    assert constraint.id in ids and (replaces is None or replaces not in ids)
    assert len(ids) == len(MAIL_TASK.constraints) + (0 if replaces else 1)
    if check is not None:
        assert constraint.verification == check
    assert [x.id for x in MAIL_TASK.constraints] == ["c-calls", "c-due"]  # the task itself is untouched


async def test_new_constraint_ignores_the_tasks_metadata(tmp_path: Path) -> None:
    """Changes come from the public task: updates written into the task's metadata are never read."""
    update = {"variant": "deliverable", "message": "Also email Ana the summary.",
              "constraint": {"id": "own-1", "type": "deliverable", "description": "email Ana"}}
    task = MAIL_TASK.model_copy(update={"id": "ctl-own", "metadata": {"constraint_updates": [update]}})
    c = await opened(tmp_path, only("new_constraint", turns=(1, 1), variant="deliverable"), task=task)
    [(text, constraint, _)] = c.due_user_messages(1)
    assert text != "Also email Ana the summary." and constraint.id != "own-1"


async def test_a_stated_money_limit_is_tightened_and_keeps_the_tasks_form(tmp_path: Path) -> None:
    spend = Constraint(id="c-spend", type="budget", description="Keep the order under 1,200.00 in total.",
                       verification={"kind": "budget", "tool": "shop/checkout", "field": "total", "value": 1200.0})
    task = MAIL_TASK.model_copy(update={"id": "ctl-spend", "constraints": [spend]})
    c = await opened(tmp_path, only("new_constraint", turns=(1, 1), variant="budget", tighten=0.75), task=task)
    [(text, constraint, _)] = c.due_user_messages(1)
    assert "900.00 instead of 1,200.00" in text
    assert constraint.replaces == "c-spend" and constraint.type == "budget"
    assert constraint.verification == {"kind": "budget", "tool": "shop/checkout", "field": "total", "value": 900.0}
    assert [x.id for x in c.constraints] == [constraint.id]


# --- the chain ---------------------------------------------------------------------------------------


async def test_extra_middleware_sees_the_call_and_the_faulted_observation(tmp_path: Path) -> None:
    seen: list[tuple[str, str | None]] = []

    async def spy(ctx: Any, call_next: Any) -> ToolResult:
        result = await call_next(ctx)
        seen.append((ctx.tool_id, result.error_class))
        return result

    controller = build_controller(MAIL_TASK, mode="live", policy=only("unavailable"), seed=1, agent="t", env=ENV,
                                  workspace=Workspace(tmp_path), tools=TOOLS, middlewares=[spy])
    await controller.open()
    await call(controller, "mail/list_messages", 1)
    await call(controller, "mail/list_messages", 2)
    assert seen == [("mail/list_messages", "unavailable"), ("mail/list_messages", None)]


async def test_unknown_tool_id_is_a_not_found_result(tmp_path: Path) -> None:
    c = await opened(tmp_path, only("timeout", turns=(5, 5)))
    out = await c.call_tool("mail/nope", {}, turn=1)
    assert out.observation.error_class == "not_found" and out.raw is None


def _diff_leaves(a: Any, b: Any) -> list[tuple[Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in a for d in _diff_leaves(a[k], b.get(k))]
    if isinstance(a, list) and isinstance(b, list):
        return [d for x, y in zip(a, b, strict=True) for d in _diff_leaves(x, y)]
    return [] if a == b else [(a, b)]
