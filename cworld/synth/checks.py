"""Rule checks on a draft (C-World §2.2 "check"): tool coverage, constraint quality, structure, leaks,
and on the harvested pool whether the request is one a person would make (`request_checks.py`).

Each failed rule is an `Issue` whose message says what to change, so the list doubles as the targeted
feedback of the next revision. The LLM critic (when a model is configured) runs after these pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from cworld.agents.references import referenced_steps
from cworld.synth.draft import Draft
from cworld.synth.leak import LeakChecker, scenario_leaks
from cworld.synth.options import SynthOptions
from cworld.synth.request_checks import check_request
from cworld.synth.taxonomy import Taxonomy, form_problems, verifiable
from cworld.synth.toolset import ToolUniverse

STOPWORDS = frozenset(
    """a an the and or of to for in on at by with from into is are be it its this that these those my
me i you your we our us as so if then than not no do does did can could should would will please
all any each their them they he she his her was were been has have had get make use tool tools
""".split()  # noqa: SIM905
)


@dataclass(frozen=True)
class Issue:
    check: str
    code: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"check": self.check, "code": self.code, "message": self.message}


@dataclass
class CheckReport:
    issues: list[Issue] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.issues

    def add(self, check: str, code: str, message: str) -> None:
        self.issues.append(Issue(check, code, message))

    def feedback(self) -> str:
        return "\n".join(f"- [{i.check}] {i.message}" for i in self.issues)

    def as_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "issues": [i.as_dict() for i in self.issues], "metrics": self.metrics}


def stem(word: str) -> str:
    """A light suffix strip, enough to match "posting" with "post" and "booked" with "book"."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {stem(w) for w in words if len(w) > 2 and w not in STOPWORDS}


def run_checks(
    draft: Draft,
    candidates: list[str],
    universe: ToolUniverse,
    taxonomy: Taxonomy,
    options: SynthOptions,
    leaks: LeakChecker,
    *,
    require_scenario: bool = False,
) -> CheckReport:
    """`require_scenario`: the drafter must state a scenario (the LLM drafter; the offline one has its
    scenario written from the verified run)."""
    report = CheckReport()
    check_coverage(draft, candidates, universe, options, report)
    check_constraints(draft, taxonomy, options, report)
    check_structure(draft, universe, report)
    check_leaks(draft, leaks, report)
    check_scenario(draft, leaks, report, require=require_scenario)
    if options.pool == "harvested":
        check_request(draft, universe, report)
    return report


# --- coverage -----------------------------------------------------------------------------------------
def check_coverage(
    draft: Draft, candidates: list[str], universe: ToolUniverse, options: SynthOptions, report: CheckReport
) -> None:
    declared = list(dict.fromkeys(draft.tools))
    unknown = [t for t in declared if t not in universe.tools]
    if unknown:
        report.add(
            "coverage", "unknown_tool", f"tools {unknown} do not exist; use only ids from the candidate list"
        )
    used = set(draft.plan_tools()) | {t for g in draft.subgoals for t in g.tools}
    undeclared = sorted(used - set(declared))
    if undeclared:
        report.add(
            "coverage", "undeclared_tool", f"the plan or sub-goals use {undeclared}; list them in tools"
        )
    needed = [t for t in declared if t in used]
    share = len(needed) / len(declared) if declared else 0.0
    kept = len(set(declared) & set(candidates)) / len(candidates) if candidates else 1.0
    report.metrics.update(
        needed_share=round(share, 3),
        candidate_share=round(kept, 3),
        tools=len(declared),
        servers=len(draft.servers()),
    )
    idle = [t for t in declared if t not in used]
    missing = [t for t in candidates if t not in declared]
    for short, code, message in (
        (
            share < options.min_needed_share,
            "unneeded_tools",
            f"tools {idle} appear in no plan step or sub-goal: use them or drop them",
        ),
        (
            kept < options.min_candidate_share,
            "candidates_unused",
            f"only {kept:.0%} of the candidate tools are used; motivate more of {missing} in the request",
        ),
    ):
        if short:
            report.add("coverage", code, message)
    _size(declared, draft, options, report)
    _rationales(declared, draft, report)


def _size(declared: list[str], draft: Draft, options: SynthOptions, report: CheckReport) -> None:
    if len(declared) < options.min_tools:
        report.add(
            "coverage",
            "too_few_tools",
            f"the task needs {len(declared)} tools; make it need at least {options.min_tools}",
        )
    if len(draft.servers()) < options.min_servers:
        report.add(
            "coverage",
            "too_few_servers",
            f"the task spans {len(draft.servers())} servers; make it need at least {options.min_servers}",
        )


def _rationales(declared: list[str], draft: Draft, report: CheckReport) -> None:
    query_words = content_words(draft.query)
    missing = [t for t in declared if len(draft.rationales.get(t, "").split()) < 4]
    if missing:
        report.add("coverage", "missing_rationale", f"give each of {missing} a rationale of a sentence")
    untied = [
        t for t in declared if t not in missing and not (content_words(draft.rationales[t]) & query_words)
    ]
    if untied:
        report.add(
            "coverage",
            "untied_rationale",
            f"the rationales of {untied} do not refer to anything in the "
            "request: say which part of the request needs the tool",
        )


# --- constraints ----------------------------------------------------------------------------------------
def check_constraints(draft: Draft, taxonomy: Taxonomy, options: SynthOptions, report: CheckReport) -> None:
    constraints = draft.constraints
    types = {c.type for c in constraints}
    report.metrics.update(constraint_types=len(types), constraints=len(constraints))
    if len(types) < options.min_constraint_types:
        unused = sorted(set(taxonomy.types) - types)
        report.add(
            "constraints",
            "too_few_types",
            f"{len(types)} constraint types; use at least "
            f"{options.min_constraint_types} distinct ones (unused: {unused})",
        )
    ids = [c.id for c in constraints]
    if len(set(ids)) != len(ids):
        report.add("constraints", "duplicate_id", "constraint ids must be unique")
    tool_ids = set(draft.tools)
    for constraint in constraints:
        for problem in form_problems(constraint, taxonomy, tool_ids):
            report.add("constraints", "bad_form", problem)
    _triviality(draft, report)
    if not any(set(c.interacts_with) & (set(ids) - {c.id}) for c in constraints):
        report.add(
            "constraints",
            "no_interaction",
            "no two constraints interact: make one depend on another "
            "(e.g. a budget that limits which option the trade-off may pick) and say so in interacts_with",
        )
    share = sum(verifiable(c) for c in constraints) / len(constraints) if constraints else 0.0
    report.metrics["verifiable_constraint_share"] = round(share, 3)
    if share < options.min_verifiable_share:
        report.add(
            "constraints",
            "unverifiable",
            f"only {share:.0%} of the constraints have a verification form; "
            "give machine-checkable forms where the taxonomy has one",
        )


def _triviality(draft: Draft, report: CheckReport) -> None:
    texts = [c.description.strip().lower() for c in draft.constraints]
    if len(set(texts)) != len(texts):
        report.add("constraints", "duplicate_text", "two constraints say the same thing")
    for c in draft.constraints:
        if len(c.description.split()) < 5:
            report.add("constraints", "vague", f"{c.id}: say in a full sentence what is required")
        v = c.verification or {}
        plan_len = len(draft.gold_plan)
        if (
            v.get("kind") == "max_calls"
            and plan_len
            and isinstance(v.get("value"), int)
            and v["value"] > 3 * plan_len
        ):
            report.add(
                "constraints",
                "trivial",
                f"{c.id}: a limit of {v['value']} calls binds nothing for a {plan_len}-step task",
            )
        if v.get("kind") == "min_servers" and isinstance(v.get("value"), int) and v["value"] < 2:
            report.add("constraints", "trivial", f"{c.id}: at least one server is no constraint")


# --- structure ----------------------------------------------------------------------------------------------
def check_structure(draft: Draft, universe: ToolUniverse, report: CheckReport) -> None:
    goals = {g.id: g for g in draft.subgoals}
    if len(goals) != len(draft.subgoals):
        report.add("structure", "duplicate_subgoal", "sub-goal ids must be unique")
    dag = nx.DiGraph()
    dag.add_nodes_from(goals)
    for goal in draft.subgoals:
        for dep in goal.depends_on:
            if dep not in goals:
                report.add(
                    "structure", "unknown_dependency", f"sub-goal {goal.id} depends on unknown {dep!r}"
                )
            else:
                dag.add_edge(dep, goal.id)
    if not nx.is_directed_acyclic_graph(dag):
        report.add("structure", "cycle", f"the sub-goal graph has a cycle: {nx.find_cycle(dag)}")
        return
    if not draft.subgoals:
        report.add("structure", "no_subgoals", "decompose the task into sub-goals")
    _plan_structure(draft, goals, dag, report)
    _graph_agreement(draft, universe, goals, dag, report)


def _plan_structure(draft: Draft, goals: dict[str, Any], dag: nx.DiGraph, report: CheckReport) -> None:
    seen: dict[str, str | None] = {}
    for step in draft.gold_plan:
        if step.id in seen:
            report.add("structure", "duplicate_step", f"plan step id {step.id!r} is used twice")
        if step.subgoal is not None and step.subgoal not in goals:
            report.add(
                "structure", "unknown_subgoal", f"step {step.id} names unknown sub-goal {step.subgoal!r}"
            )
        for ref in referenced_steps(step.arguments):
            if ref not in seen:
                report.add(
                    "structure", "forward_reference", f"step {step.id} refers to {ref!r}, not an earlier step"
                )
            elif not _precedes(seen[ref], step.subgoal, dag):
                report.add(
                    "structure",
                    "subgoal_order",
                    f"step {step.id} (sub-goal {step.subgoal}) uses step {ref} "
                    f"(sub-goal {seen[ref]}): make {step.subgoal} depend on {seen[ref]}",
                )
        seen[step.id] = step.subgoal


def _precedes(before: str | None, after: str | None, dag: nx.DiGraph) -> bool:
    if before is None or after is None or before == after or before not in dag or after not in dag:
        return True
    return nx.has_path(dag, before, after)


def _graph_agreement(
    draft: Draft, universe: ToolUniverse, goals: dict[str, Any], dag: nx.DiGraph, report: CheckReport
) -> None:
    """Tool-graph edges `a -> b` (a runs before b) must not be contradicted by the plan or the sub-goals."""
    first: dict[str, int] = {}
    for i, step in enumerate(draft.gold_plan):
        first.setdefault(step.tool, i)
    owners: dict[str, set[str]] = {}
    for goal in draft.subgoals:
        for tool in goal.tools:
            owners.setdefault(tool, set()).add(goal.id)
    home = {t: next(iter(g)) for t, g in owners.items() if len(g) == 1}
    tools = set(draft.tools)
    for a, b, data in universe.graph.edges(data=True):
        if a not in tools or b not in tools:
            continue
        if data.get("kind") == "requires" and a in first and b in first and first[b] < first[a]:
            report.add("structure", "graph_order", f"{a} must run before {b} (tool dependency graph)")
        ga, gb = home.get(a), home.get(b)
        if (
            data.get("kind") == "requires"
            and ga
            and gb
            and ga != gb
            and ga in dag
            and gb in dag
            and nx.has_path(dag, gb, ga)
        ):
            report.add(
                "structure",
                "graph_subgoals",
                f"sub-goal {gb} (uses {b}) comes before {ga} (uses {a}), "
                f"but {a} runs before {b} in the tool dependency graph",
            )


# --- leaks --------------------------------------------------------------------------------------------------
def check_leaks(draft: Draft, leaks: LeakChecker, report: CheckReport) -> None:
    found = leaks.leaks(draft.query)
    if found:
        report.add(
            "leak",
            "query_leak",
            f"the request names {', '.join(map(str, found))}: say what the user "
            'wants done instead ("send the summary to the team", not a tool or server name)',
        )
    for c in draft.constraints:
        hits = leaks.leaks(c.description)
        if hits:
            report.add(
                "leak",
                "constraint_leak",
                f"{c.id} names {', '.join(map(str, hits))}: describe it in plain words",
            )


# --- scenario -----------------------------------------------------------------------------------------------
def check_scenario(draft: Draft, leaks: LeakChecker, report: CheckReport, *, require: bool = False) -> None:
    """The scenario is well formed, about the task's own services, consistent, and facts only."""
    scenario = draft.scenario
    report.metrics.update(
        scenario_entities=len(scenario.entities), scenario_relations=len(scenario.relations)
    )
    if draft.scenario_problem:
        report.add(
            "scenario",
            "malformed",
            f"the scenario could not be read ({draft.scenario_problem}): give entities with app, kind, id "
            "and attributes, and relations with subject, relation and object handles",
        )
        return
    if require and not scenario.entities:
        report.add(
            "scenario",
            "no_scenario",
            "state the scenario: the entities the task relies on (the people, records and items it names, "
            "with their attributes as they are before the task) and the relations between them",
        )
    servers = set(draft.servers())
    strangers = sorted({e.app for e in scenario.entities if e.app not in servers})
    if strangers:
        report.add(
            "scenario",
            "scenario_app",
            f"scenario entities of {strangers}: use the task's services {sorted(servers)}",
        )
    handles = [e.handle for e in scenario.entities]
    twice = sorted({h for h in handles if handles.count(h) > 1})
    if twice:
        report.add("scenario", "duplicate_entity", f"entities {twice} are listed twice: merge them")
    dangling = sorted({h for r in scenario.relations for h in (r.subject, r.object) if h not in set(handles)})
    if dangling:
        report.add(
            "scenario", "dangling_relation", f"relations name {dangling}, which are not scenario entities"
        )
    if scenario.today is not None and not _iso(scenario.today):
        report.add("scenario", "bad_today", f"today {scenario.today!r} is not an ISO 8601 date-time")
    found = scenario_leaks(
        leaks, scenario, step_ids=[s.id for s in draft.gold_plan], hints=draft.final_answer_hints
    )
    if found:
        report.add("scenario", "scenario_leak", "the scenario must state facts only: " + "; ".join(found[:5]))


def _iso(text: str) -> bool:
    from datetime import datetime

    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True
