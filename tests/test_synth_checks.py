"""Task synthesis building blocks: taxonomy, leak check and rewrite, rule checks, constraint evaluation,
candidate sampling, near-duplicate guard and plan execution."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cworld.data_model import Constraint, PlanStep, SubGoal
from cworld.environment import Environment, Workspace
from cworld.registry.index.embedder import HashEmbedder
from cworld.synth.checks import run_checks
from cworld.synth.constraint_eval import evaluate
from cworld.synth.dedupe import DuplicateGuard
from cworld.synth.draft import Draft
from cworld.synth.leak import LeakChecker
from cworld.synth.offline import OfflineDrafter, Revision
from cworld.synth.options import SynthOptions
from cworld.synth.plan_exec import CallRecord, execute_plan
from cworld.synth.sampling import Candidates, sample_candidates
from cworld.synth.taxonomy import form_problems, load_taxonomy
from cworld.synth.toolset import load_universe
from cworld.synth.verify import verify_draft

ENV = Environment.resolve()
PAPER_TYPES = {
    "tool_count",
    "server_diversity",
    "server_restriction",
    "data_coverage",
    "response_content",
    "no_redundancy",
    "tool_type_priority",
    "sequence_order",
    "trade_off",
}


@pytest.fixture(scope="module")
def universe(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    mp.setenv("CWORLD_EMBED_MODEL", "hash")
    try:
        yield load_universe(ENV, Workspace.resolve(tmp_path_factory.mktemp("ws")))
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def taxonomy():
    return load_taxonomy(ENV.task_synth)


@pytest.fixture(scope="module")
def good(universe) -> tuple[Draft, list[str], int]:
    """A draft the offline drafter composed (it passed its probe), with the candidates it was made for."""
    drafter = OfflineDrafter(universe, SynthOptions(), LeakChecker(universe))
    candidates = Candidates(
        seeds=[],
        query="",
        tools=["travel/book_flight", "mail/send_email", "chat/post_message", "calendar/create_event"],
    )
    rng = random.Random(5)
    revision = Revision(everything=True)
    for seed in range(40, 60):
        draft, blocks = drafter.draft(candidates, seed, rng, revision, schema_only=False)
        if "flight" in blocks:
            return draft, candidates.tools, seed
    raise AssertionError("no flight task composed")


def test_the_taxonomy_has_the_papers_nine_types_and_ours(taxonomy) -> None:
    assert PAPER_TYPES | {"deadline", "budget", "exclusion"} <= set(taxonomy.types)
    assert all(t.verification for t in taxonomy.types.values())
    assert "max_calls" in taxonomy.prompt_text()


def test_form_problems_name_what_is_wrong(taxonomy) -> None:
    tools = {"shop/checkout"}
    ok = Constraint(
        id="c1",
        type="budget",
        description="x",
        verification={"kind": "budget", "tool": "shop/checkout", "field": "total", "value": 50},
    )
    assert form_problems(ok, taxonomy, tools) == []
    assert (
        "unknown constraint type"
        in form_problems(ok.model_copy(update={"type": "vibes"}), taxonomy, tools)[0]
    )
    wrong_kind = ok.model_copy(update={"verification": {"kind": "max_calls", "value": 3}})
    assert "has no verification kind" in form_problems(wrong_kind, taxonomy, tools)[0]
    missing = ok.model_copy(update={"verification": {"kind": "budget", "tool": "shop/checkout", "value": 50}})
    assert "needs field 'field'" in form_problems(missing, taxonomy, tools)[0]
    elsewhere = ok.model_copy(update={"verification": {**ok.verification, "tool": "mail/send_email"}})
    assert "does not use" in form_problems(elsewhere, taxonomy, tools)[0]


@pytest.mark.parametrize(
    "text",
    [
        "Use chat/post_message to tell the team.",
        "Call send_email for me.",
        "Please sendEmail to Omar.",
        "Open the travel server and book it.",
        "Put it on the taskboard.",
        "Log it in Helio CRM.",
        "Run `checkout` when ready.",
        "Update event evt_0011 to 3pm.",
    ],
)
def test_leaks_are_found(universe, text: str) -> None:
    checker = LeakChecker(universe)
    assert checker.leaks(text), text
    assert not checker.leaks(checker.rewrite(text)), checker.rewrite(text)


@pytest.mark.parametrize(
    "text",
    [
        "Send the summary to the team.",
        "Put the flight in my calendar and email Omar the details.",
        "Book a flight with my travel account, then check out the cart in the online store.",
        "Log this in our CRM and remind me at 18:00 my time.",
    ],
)
def test_intent_level_requests_do_not_leak(universe, text: str) -> None:
    assert LeakChecker(universe).leaks(text) == []


def test_a_composed_draft_passes_every_rule_and_verifies(universe, taxonomy, good) -> None:
    draft, candidates, seed = good
    report = run_checks(draft, candidates, universe, taxonomy, SynthOptions(), LeakChecker(universe))
    assert report.passed, report.feedback()
    verification = verify_draft(draft, universe, seed)
    assert verification.ok and verification.verifiable, verification.reason
    assert verification.ground_truth is not None and verification.ground_truth != verification.trace.results


def _issues(draft: Draft, candidates: list[str], universe, taxonomy) -> set[str]:
    report = run_checks(draft, candidates, universe, taxonomy, SynthOptions(), LeakChecker(universe))
    return {i.code for i in report.issues}


def test_rule_checks_catch_each_kind_of_flaw(universe, taxonomy, good) -> None:
    draft, candidates, _ = good
    extra = [t for t in sorted(universe.tools) if t not in draft.tools and universe.executable(t)][
        : len(draft.tools) // 2
    ]
    idle = draft.model_copy(
        update={
            "tools": [*draft.tools, *extra],
            "rationales": {**draft.rationales, **{t: "needed for the flight" for t in extra}},
        }
    )
    assert "unneeded_tools" in _issues(idle, candidates, universe, taxonomy)
    first = draft.tools[0]
    assert "missing_rationale" in _issues(
        draft.model_copy(update={"rationales": {**draft.rationales, first: ""}}),
        candidates,
        universe,
        taxonomy,
    )
    assert "candidates_unused" in _issues(draft, [*candidates, *extra], universe, taxonomy)
    few = draft.model_copy(update={"constraints": draft.constraints[:1]})
    assert {"too_few_types", "no_interaction"} <= _issues(few, candidates, universe, taxonomy)
    goals = [
        g.model_copy(update={"depends_on": [draft.subgoals[-1].id]}) if i == 0 else g
        for i, g in enumerate(draft.subgoals)
    ]
    assert "cycle" in _issues(draft.model_copy(update={"subgoals": goals}), candidates, universe, taxonomy)
    backwards = list(reversed(draft.gold_plan))
    assert "forward_reference" in _issues(
        draft.model_copy(update={"gold_plan": backwards}), candidates, universe, taxonomy
    )
    leaky = draft.model_copy(update={"query": draft.query + " Use travel/book_flight for it."})
    assert "query_leak" in _issues(leaky, candidates, universe, taxonomy)


def test_verification_catches_a_broken_plan_and_a_broken_constraint(universe, good) -> None:
    draft, _, seed = good
    steps = [
        s.model_copy(update={"arguments": {**s.arguments, "flight_id": "ZZ999-20260101"}})
        if s.tool == "travel/book_flight"
        else s
        for s in draft.gold_plan
    ]
    failed = verify_draft(draft.model_copy(update={"gold_plan": steps}), universe, seed)
    assert not failed.ok and "travel/book_flight" in failed.reason and failed.ground_truth is None
    budget = next(c for c in draft.constraints if c.type == "budget")
    tight = [
        c.model_copy(update={"verification": {**c.verification, "value": 1.0}}) if c is budget else c
        for c in draft.constraints
    ]
    broken = verify_draft(draft.model_copy(update={"constraints": tight}), universe, seed)
    assert not broken.ok and "breaks its own constraints" in broken.reason and budget.id in broken.reason


def _call(tool: str, ok: bool = True, **arguments) -> CallRecord:
    return CallRecord("s", tool, arguments, ok, result={"total": 40.0})


@pytest.mark.parametrize(
    ("verification", "calls", "answer", "expected"),
    [
        ({"kind": "max_calls", "value": 2}, [_call("a/x"), _call("a/y")], "", True),
        ({"kind": "max_calls", "value": 1}, [_call("a/x"), _call("a/y")], "", False),
        ({"kind": "min_servers", "value": 2}, [_call("a/x"), _call("b/y")], "", True),
        ({"kind": "allowed_servers", "value": ["a"]}, [_call("a/x"), _call("b/y")], "", False),
        (
            {"kind": "final_answer_mentions", "value": ["GH502", "663.44"]},
            [],
            "flight gh502 for 663.44",
            True,
        ),
        ({"kind": "final_answer_format", "value": "bullets"}, [], "- one\n- two", True),
        ({"kind": "final_answer_max_words", "value": 3}, [], "far too many words here", False),
        ({"kind": "no_repeated_calls"}, [_call("a/x", q=1), _call("a/x", q=1)], "", False),
        ({"kind": "call_order", "before": "a/x", "after": "b/y"}, [_call("b/y"), _call("a/x")], "", False),
        (
            {"kind": "argument_equals", "tool": "a/x", "argument": "id", "value": "K"},
            [_call("a/x", id="k")],
            "",
            True,
        ),
        (
            {"kind": "deadline", "tool": "a/x", "argument": "due", "value": "2026-05-01T12:00:00Z"},
            [_call("a/x", due="2026-05-01T13:00")],
            "",
            False,
        ),
        ({"kind": "budget", "tool": "a/x", "field": "total", "value": 50}, [_call("a/x")], "", True),
        (
            {"kind": "argument_excludes", "tool": "a/x", "argument": "to", "value": ["p2"]},
            [_call("a/x", to=["p1", "p2"])],
            "",
            False,
        ),
    ],
)
def test_constraint_forms_evaluate(verification, calls, answer, expected) -> None:
    constraint = Constraint(id="c1", type="t", description="d", verification=verification)
    assert evaluate(constraint, calls, answer, {})[0] is expected


def test_reads_before_writes_uses_the_tools_hints(universe) -> None:
    constraint = Constraint(
        id="c", type="t", description="d", verification={"kind": "reads_before_writes", "value": ["shop"]}
    )
    assert (
        evaluate(constraint, [_call("shop/view_cart"), _call("shop/checkout")], "", universe.tools)[0] is True
    )
    assert evaluate(constraint, [_call("shop/checkout")], "", universe.tools)[0] is False


def test_sampling_is_seeded_round_robin_and_spans_servers(universe) -> None:
    bundles = [
        sample_candidates(universe, random.Random(3), min_tools=6, max_tools=9, min_servers=3)
        for _ in range(2)
    ]
    assert bundles[0] == bundles[1]
    for seed in range(8):
        bundle = sample_candidates(universe, random.Random(seed), min_tools=6, max_tools=9, min_servers=3)
        assert 6 <= len(bundle.tools) <= 9 and len(bundle.servers) >= 3
        assert bundle.seeds[0] in bundle.tools and bundle.query
        counts = [sum(t.startswith(s + "/") for t in bundle.tools) for s in bundle.servers]
        assert max(counts) - min(counts) <= 2, bundle.tools


def test_duplicate_guard_by_embedding_and_by_words() -> None:
    for guard in (DuplicateGuard(HashEmbedder(128), cosine=0.95), DuplicateGuard(None, jaccard=0.8)):
        guard.add("t1", "Book a flight from Lagos to Rome on Monday and email Omar the details.")
        assert (
            guard.check("Book a flight from Lagos to Rome on Monday and email Omar the details.")[0] == "t1"
        )
        assert (
            guard.check("Order a kettle from the online store under 60 and tell the team in chat.")[0] is None
        )


def test_plan_execution_resolves_references_and_stops_at_a_failure() -> None:
    plan = [
        PlanStep(id="me", tool="chat/get_my_profile"),
        PlanStep(id="login", tool="chat/login", arguments={"handle": "{{me.handle}}"}),
        PlanStep(
            id="bad",
            tool="chat/post_message",
            arguments={"token": "{{login.token}}", "channel_id": "C_9999", "text": "hi"},
        ),
        PlanStep(id="never", tool="chat/list_channels"),
    ]
    trace = execute_plan(plan, seed=3)
    assert [c.ok for c in trace.calls] == [True, True, False]
    assert trace.calls[1].arguments["handle"] == trace.results["me"]["handle"]
    assert "bad" in trace.failure and trace.end_state is None
    unresolved = execute_plan(
        [PlanStep(id="x", tool="chat/login", arguments={"handle": "{{nope.handle}}"})], seed=3
    )
    assert not unresolved.ok and "unresolved" in unresolved.failure


def test_subgoal_graph_must_agree_with_data_flow(universe, taxonomy, good) -> None:
    draft, candidates, _ = good
    flat = [SubGoal(id=g.id, description=g.description, tools=g.tools) for g in draft.subgoals]
    assert "subgoal_order" in _issues(
        draft.model_copy(update={"subgoals": flat}), candidates, universe, taxonomy
    )


def test_taxonomy_file_errors_are_one_line(tmp_path: Path) -> None:
    from cworld.errors import ContentError

    (tmp_path / "constraints.yaml").write_text("types: [1, 2\n")
    with pytest.raises(ContentError, match="not a valid constraint taxonomy"):
        load_taxonomy(tmp_path)


def test_a_tool_name_said_in_prose_before_a_bracket_keeps_the_bracket(universe) -> None:
    checker = LeakChecker(universe)
    word = next(n for n in checker.word_names if n.isalpha() and n.islower())  # a one-word tool name
    text = f"Look up the {word} (status: open) in our CRM."
    assert checker.rewrite(text) == text  # a bracket after a word is prose, not a call
    assert checker.leaks(f"Then call {word}(id) for me.")  # `name(` is code
