"""Each verifiable metric on hand-made trajectories whose answers are worked out by hand."""

from __future__ import annotations

import pytest
from judges_helpers import TrajectoryBuilder

from cworld.data_model import Constraint, PlanStep, SubGoal, Task, ToolAnnotations, ToolSpec
from cworld.judges import classify_calls, schema_errors, verifiable_scores
from cworld.judges import metrics as m
from cworld.judges.personas import personas

SEARCH = ToolSpec(server="mail", name="search_messages", annotations=ToolAnnotations(read_only_hint=True),
                  input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})
CONTACTS = ToolSpec(server="people", name="search_contacts", annotations=ToolAnnotations(read_only_hint=True),
                    input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})
FORWARD = ToolSpec(server="mail", name="forward_message",
                   input_schema={"type": "object", "required": ["message_id", "to"],
                                 "properties": {"message_id": {"type": "string"},
                                                "to": {"type": "array", "items": {"type": "string"}}}})
DELETE = ToolSpec(server="mail", name="delete_message", annotations=ToolAnnotations(destructive_hint=True),
                  input_schema={"type": "object", "properties": {"message_id": {"type": "string"}}})
TOOLS = {t.id: t for t in (SEARCH, CONTACTS, FORWARD, DELETE)}


def make_task(constraints: list[Constraint] | None = None) -> Task:
    return Task(
        id="t1", query="Forward the audit email to Deborah.", constraints=constraints or [],
        tools=["mail/search_messages", "people/search_contacts", "mail/forward_message"],
        subgoals=[SubGoal(id="g1", description="find mail", tools=["mail/search_messages"]),
                  SubGoal(id="g2", description="find Deborah", tools=["people/search_contacts"]),
                  SubGoal(id="g3", description="forward", depends_on=["g1", "g2"], tools=["mail/forward_message"])],
        gold_plan=[PlanStep(id="a", tool="mail/search_messages", arguments={"query": "audit"}),
                   PlanStep(id="b", tool="people/search_contacts", arguments={"query": "Deborah"}),
                   PlanStep(id="c", tool="mail/forward_message",
                            arguments={"message_id": "{{a.messages[0].id}}", "to": ["{{b.contacts[0].id}}"]})],
    )


def good_run() -> TrajectoryBuilder:
    return (TrajectoryBuilder(make_task())
            .call("mail/search_messages", {"query": "audit"}, result={"messages": [{"id": "m1"}]})
            .call("people/search_contacts", {"query": "Deborah"}, result={"contacts": [{"id": "p1"}]})
            .call("mail/forward_message", {"message_id": "m1", "to": ["p1"]}, result={"ok": True}))


def test_call_statistics_follow_complexmcp_classes():
    t = (TrajectoryBuilder(make_task())
         .call("mail/search_messages", {"query": "audit"})                      # valid
         .call("mail/search_messages", {"query": 42})                           # syntactic: wrong type
         .call("mail/search_messages", {"query": "x", "folder": "inbox"})       # syntactic: unknown argument
         .call("mail/sendd", {"a": 1}, not_callable=True)                        # syntactic: no such tool
         .call("mail/forward_message", {"message_id": "m9", "to": ["p1"]}, error="not_found")  # execution failure
         .call("mail/forward_message", {"message_id": "m1", "to": ["p1"]}, injected="timeout")  # injected
         .call("people/search_contacts", {"query": "D"}, infra=True)             # infra
         .build())
    stats = m.call_statistics(classify_calls(t, TOOLS))
    assert stats == {"calls_valid": 1.0, "calls_execution_failure": 1.0, "calls_syntactic_error": 3.0,
                     "calls_injected": 1.0, "calls_infra": 1.0}


def test_schema_compliance_counts_unknown_tools_and_skips_unknown_schemas():
    t = (TrajectoryBuilder(make_task())
         .call("mail/search_messages", {"query": "audit"})
         .call("mail/forward_message", {"message_id": "m1"})          # missing required `to`
         .call("other/unlisted_tool", {"x": 1})                       # backend answered, schema unknown: skipped
         .call("mail/invented", {}, not_callable=True)                # no such tool: non-compliant
         .build())
    calls = classify_calls(t, TOOLS)
    assert [c.schema_ok for c in calls] == [True, False, None, False]
    assert m.schema_compliance(calls) == pytest.approx(1 / 3)
    assert "'to' is a required property" in calls[1].schema_errors[0]


def test_schema_errors_respects_explicit_additional_properties():
    open_schema = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True}
    assert schema_errors({"a": "x", "b": 1}, open_schema) == []
    assert schema_errors({"a": "x", "b": 1}, {"type": "object", "properties": {"a": {}}}) == ["unknown argument 'b'"]
    assert schema_errors({}, {"type": "nonsense-type"}) is None


def test_recovery_rate_is_success_after_failure():
    t = (TrajectoryBuilder(make_task())
         .call("mail/search_messages", {"query": "a"}, error="not_found")       # fail -> next ok: recovered
         .call("mail/search_messages", {"query": "audit"})
         .call("mail/forward_message", {"message_id": "x", "to": ["p"]}, error="business")  # fail -> next fail
         .call("mail/forward_message", {"message_id": "y", "to": ["p"]}, error="business")  # fail -> stops: not
         .final("gave up", status="gave_up")
         .build())
    assert m.recovery_rate(classify_calls(t, TOOLS)) == pytest.approx(1 / 3)
    assert m.recovery_rate(classify_calls(good_run().build(), TOOLS)) is None  # no failure, no rate


def test_recovery_ignores_infrastructure_failures():
    t = (TrajectoryBuilder(make_task())
         .call("mail/search_messages", {"query": "a"}, infra=True)
         .call("mail/search_messages", {"query": "a"}, error="not_found")
         .call("mail/search_messages", {"query": "audit"})
         .build())
    assert m.recovery_rate(classify_calls(t, TOOLS)) == 1.0


def test_flexibility_needs_a_different_action_after_an_injected_error():
    t = (TrajectoryBuilder(make_task())
         .call("mail/forward_message", {"message_id": "m1", "to": ["p1"]}, injected="timeout")
         .call("mail/forward_message", {"message_id": "m1", "to": ["p1"]}, injected="deprecated")  # same call: no
         .say("thinking")                                                                            # skipped
         .search("forward email")                                                                   # adapts: yes
         .call("mail/search_messages", {"query": "a"}, error="not_found")   # not injected: not counted
         .call("mail/forward_message", {"message_id": "m1", "to": ["p1"]}, injected="unavailable")
         .final("could not")                                                                         # ends: no
         .build())
    assert m.flexibility(t, classify_calls(t, TOOLS)) == pytest.approx(1 / 3)


def test_state_level_fault_without_error_is_not_an_injected_error():
    t = (TrajectoryBuilder(make_task())
         .call("mail/search_messages", {"query": "audit"}, result={"messages": [{"id": "m1"}]}, injected="truncated")
         .build())
    calls = classify_calls(t, TOOLS)
    assert calls[0].outcome == "valid" and calls[0].injected and not calls[0].failed
    assert m.flexibility(t, calls) is None


def test_order_constraints_from_the_subgoal_graph():
    assert m.order_constraints(good_run().task, classify_calls(good_run().build(), TOOLS)).rate == 1.0
    t = (TrajectoryBuilder(make_task())
         .call("mail/search_messages", {"query": "audit"})
         .call("mail/forward_message", {"message_id": "m1", "to": ["p1"]})   # before g2's contact search
         .call("people/search_contacts", {"query": "Deborah"})
         .build())
    result = m.order_constraints(t.task, classify_calls(t, TOOLS))
    assert (result.satisfied, result.assessable, result.violations) == (1, 2, ["g2->g3"])


def test_order_constraints_fall_back_to_gold_plan_references():
    task = make_task().model_copy(update={"subgoals": []})
    edges = {label for _, _, label in m.dependency_edges(task)}
    assert edges == {"a->c", "b->c"}
    t = TrajectoryBuilder(task).call("mail/forward_message", {"message_id": "m1", "to": ["p1"]}).build()
    assert m.order_constraints(task, classify_calls(t, TOOLS)).rate == 0.0


def test_information_diversity_counts_successful_servers():
    t = (TrajectoryBuilder(make_task())
         .call("mail/search_messages", {"query": "audit"})
         .call("people/search_contacts", {"query": "D"}, error="not_found")
         .build())
    assert m.information_diversity(t.task, classify_calls(t, TOOLS)) == (1, 0.5)
    assert m.information_diversity(t.task, classify_calls(good_run().build(), TOOLS)) == (2, 1.0)


def test_efficiency_counts_turns_calls_and_conciseness():
    t = (good_run().search("contacts").call("mail/search_messages", {"query": "audit"}).final("done").build())
    eff = m.efficiency(t, classify_calls(t, TOOLS))
    assert eff == {"turns": 6.0, "tool_calls": 4.0, "searches": 1.0, "efficiency": 0.75}


def test_constraints_verified_including_mid_episode_ones():
    budget = Constraint(id="c-budget", type="efficiency", description="at most 3 calls",
                        verification={"kind": "max_calls", "value": 3})
    words = Constraint(id="c-words", type="format", description="at most 5 words",
                       verification={"kind": "final_answer_max_words", "value": 5})
    safe = Constraint(id="c-safe", type="safety", description="no deletes from now on",
                      verification={"kind": "no_destructive_calls"})
    judged = Constraint(id="c-tone", type="style", description="be polite")
    tighter = Constraint(id="c-budget2", type="efficiency", description="at most 2 calls", replaces="c-budget",
                         verification={"kind": "max_calls", "value": 2})
    t = (TrajectoryBuilder(make_task([budget, words, judged]))
         .call("mail/delete_message", {"message_id": "m0"})     # before the safety rule: allowed
         .user("From now on, no deletions.", safe)
         .call("mail/search_messages", {"query": "audit"})
         .user("Tighter budget: 2 calls.", tighter)
         .call("mail/forward_message", {"message_id": "m1", "to": ["p1"]})
         .final("Forwarded the audit email.")
         .build())
    result = verifiable_scores(t, TOOLS)
    assert result.constraints == {"c-words": True, "c-tone": None, "c-safe": True, "c-budget2": False}
    assert result.metrics["constraints"] == pytest.approx(2 / 3)


def test_no_destructive_calls_after_the_rule_breaks_it():
    safe = Constraint(id="c-safe", type="safety", description="no deletes", verification={"kind": "no_destructive_calls"})
    t = (TrajectoryBuilder(make_task())
         .user("No deletions please.", safe)
         .call("mail/delete_message", {"message_id": "m0"}, error="not_found")   # an attempt counts
         .final("ok").build())
    assert verifiable_scores(t, TOOLS).constraints == {"c-safe": False}


def test_personas_on_a_known_trajectory():
    t = (TrajectoryBuilder(make_task())
         .call("mail/search_messages", {"query": "audit"})
         .call("mail/forward_message", {"message_id": "bad", "to": ["p1"]}, error="not_found")
         .call("mail/forward_message", {"message_id": "m1", "to": ["p1"]})
         .call("mail/search_messages", {"query": "audit"})          # exact repeat of a successful call
         .call("mail/delete_message", {"message_id": "m1"})          # destructive, not asked for
         .final("done").build())
    calls = classify_calls(t, TOOLS)
    order = m.order_constraints(t.task, calls)
    traits = personas(t, calls, TOOLS, order=order, efficiency=m.efficiency(t, calls)["efficiency"], state=None)
    # diligence: coverage 2/3 of the task's tools; writes (3: two forwards and the delete) all after a read on mail
    assert traits["diligence"] == pytest.approx((2 / 3 + 1.0) / 2)
    # prudence: no syntactic error (1.0), one reckless delete of five calls (0.8)
    assert traits["prudence"] == pytest.approx((1.0 + 0.8) / 2)
    assert traits["grit"] == 1.0                                      # kept on after the one failure
    # introspection: the failed call was changed (1.0); one of five calls repeats a success (0.8)
    assert traits["introspection"] == pytest.approx((1.0 + 0.8) / 2)
    # strategic: order g1->g3 ok, g2->g3 violated (0.5); efficiency 3 gold / 5 calls
    assert traits["strategic"] == pytest.approx((0.5 + 0.6) / 2)


def test_infra_error_metrics_never_blame_the_agent():
    t = TrajectoryBuilder(make_task()).call("mail/search_messages", {"query": "a"}, infra=True).build()
    result = verifiable_scores(t, TOOLS)
    assert result.metrics["tool_calls"] == 0.0 and result.metrics["recovery"] is None
    assert result.metrics["schema_compliance"] is None and result.metrics["calls_infra"] == 1.0


def test_order_ignores_tools_a_step_shares_with_its_prerequisite():
    task = make_task().model_copy(update={"subgoals": [
        SubGoal(id="g1", description="find", tools=["mail/search_messages"]),
        SubGoal(id="g2", description="forward then verify", depends_on=["g1"],
                tools=["mail/forward_message", "mail/search_messages"])]})
    t = (TrajectoryBuilder(task)
         .call("mail/search_messages", {"query": "audit"})
         .call("mail/forward_message", {"message_id": "m1", "to": ["p1"]})
         .call("mail/search_messages", {"query": "audit"})
         .build())
    assert m.order_constraints(task, classify_calls(t, TOOLS)).rate == 1.0


def test_state_diff_scores_episodes_of_tasks_with_a_ground_truth():
    from pathlib import Path

    from cworld.data_model import read_jsonl
    from cworld.sandbox.statediff import sandbox_initial_state as initial_state

    task = next(t for t in read_jsonl(Path(__file__).parent / "fixtures" / "tasks_sandbox.jsonl", Task)
                if t.ground_truth is not None)
    done = TrajectoryBuilder(task).with_end_state(task.ground_truth).final("done").build()
    result = verifiable_scores(done, TOOLS)
    assert (result.metrics["R_c"], result.metrics["R_b"], result.metrics["state_success"]) == (1.0, 0.0, 1.0)
    idle = TrajectoryBuilder(task).with_end_state(initial_state(task.initial_state_seed)).final("nothing").build()
    result = verifiable_scores(idle, TOOLS)
    assert result.metrics["R_c"] == 0.0 and result.metrics["state_success"] == 0.0
    assert result.state is not None and result.state.T > 0
    unchanged = TrajectoryBuilder(task, mode="synthesized").with_end_state({"_changes": True}).final("done").build()
    result = verifiable_scores(unchanged, TOOLS)   # a synthesized episode: its change set on the initial state
    assert result.metrics["R_c"] == 0.0 and result.metrics["state_success"] == 0.0
    unknown = TrajectoryBuilder(task, mode="synthesized").final("done").build()
    assert "R_c" not in verifiable_scores(unknown, TOOLS).metrics           # an engine that tracks no changes
