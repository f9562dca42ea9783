"""Schema-only (catalog) tools reach an episode, and a session expiry is only planned where the task can log in."""

from __future__ import annotations

from pathlib import Path

from cworld.controller import build_controller, plan_faults
from cworld.controller.policy import FaultRule, Policy
from cworld.data_model import PlanStep, Task
from cworld.environment import Environment, Workspace
from cworld.registry.tools import environment_tools, sandbox_tools

ENV = Environment.resolve()

CRM_TASK = Task(
    id="crm-lookup",
    query="Find Jessica Hernandez in the CRM.",
    tools=["helio-crm/search_contacts"],
    gold_plan=[PlanStep(id="s1", tool="helio-crm/search_contacts", arguments={"query": "Jessica Hernandez"})],
)


def test_an_unbuilt_episode_lists_the_catalogs_tools_as_schema_only(tmp_path: Path) -> None:
    tools = environment_tools(ENV, Workspace(tmp_path / "ws")).episode()
    crm = [t for t in tools.values() if t.server == "helio-crm"]
    assert crm and all(t.availability == "schema-only" for t in crm)
    assert set(sandbox_tools()) <= set(tools)



def test_tasks_over_the_harvested_pool_get_its_tools_without_a_registry_build(tmp_path: Path) -> None:
    """`cworld synth --pool harvested` reads the harvested catalog when no build holds it; a run of its tasks
    (`tasks_tools`) gets that whole pool too, not `not_found` for every harvested call. Tasks over the
    sandbox alone get the sandbox and the catalogs, as before."""
    listing = environment_tools(ENV, Workspace(tmp_path / "ws"))
    harvested = listing.harvested[0]
    task = Task(id="harvested", query="q", tools=[harvested.id, "mail/list_messages"])
    tools = listing.tasks_tools([task])
    assert harvested.id in tools and len(tools) >= len(listing.episode()) + len(listing.harvested)
    assert set(listing.tasks_tools([CRM_TASK])) == set(listing.episode())


async def test_the_engine_serves_a_catalog_tool_that_live_mode_refuses(tmp_path: Path) -> None:
    tools = environment_tools(ENV, Workspace(tmp_path / "ws")).episode()
    results = {}
    for mode in ("synthesized", "live", "hybrid"):
        c = build_controller(CRM_TASK, mode=mode, policy=Policy(name="none", faults={}), seed=1, agent="tester",
                             env=ENV, workspace=Workspace(tmp_path / mode), tools=tools)
        await c.open()
        results[mode] = (await c.call(tools["helio-crm/search_contacts"], {"query": "Jessica"}, turn=1)).observation
        await c.close()
    assert not results["synthesized"].is_error and "contacts" in (results["synthesized"].structured_content or {})
    assert not results["hybrid"].is_error
    assert results["live"].is_error and results["live"].error_class == "unavailable"


def _expiry_targets(tools: list[str]) -> set[str | None]:
    task = Task(id="expiry", query="q", tools=tools, gold_plan=[PlanStep(id="s1", tool=tools[0], arguments={})])
    policy = Policy(name="expiry", faults={"session_expired": FaultRule(budget=1, turns=(1, 5))})
    return {p.target for seed in range(12) for p in plan_faults(task.public(), policy, seed, sandbox_tools())}


def test_session_expiry_targets_only_servers_whose_login_the_task_offers() -> None:
    # taskboard has a login-like tool (confirm_identity) in the environment, but not among these tools
    assert _expiry_targets(["taskboard/list_boards", "taskboard/create_card", "chat/login", "chat/search_users"]) \
        == {"chat"}
    assert _expiry_targets(["taskboard/list_boards", "taskboard/create_card"]) == set()
    assert _expiry_targets(["shop/login", "shop/list_addresses", "chat/login", "chat/post_message"]) \
        == {"shop", "chat"}


def test_a_live_run_says_up_front_which_tasks_it_cannot_run(tmp_path: Path) -> None:
    """`cworld run --mode live` over a task naming a schema-only tool: one note before the episodes (each call
    to such a tool is `unavailable`); over sandbox tasks, none."""
    from click.testing import CliRunner

    from cworld.cli.main import cli
    from cworld.data_model import write_jsonl_atomic

    tasks = tmp_path / "t.jsonl"
    write_jsonl_atomic(tasks, [CRM_TASK])
    args = ["--workspace", str(tmp_path / "ws"), "run", "--tasks", str(tasks), "--agent", "scripted:oracle",
            "--policy", "none", "--no-progress", "--max-turns", "4", "--out", str(tmp_path / "run")]
    live = CliRunner().invoke(cli, [*args, "--mode", "live"])
    assert live.exit_code == 0, live.output
    assert "note: 1 of 1 task(s) name schema-only tools" in live.stderr
    synthesized = CliRunner().invoke(cli, [*args, "--mode", "synthesized", "--out", str(tmp_path / "run2")])
    assert synthesized.exit_code == 0 and "schema-only" not in synthesized.stderr


def test_judge_and_export_read_the_tools_a_harvested_run_used(tmp_path: Path) -> None:
    """The commands that read a run folder take the tools its tasks name as the run got them: a harvested
    task's tools with their full specs (read-only hints, categories), not only what searches returned."""
    import json

    from cworld.cli.common import run_tools
    from cworld.rollout import run_tasks

    listing = environment_tools(ENV, Workspace(tmp_path / "ws"))
    harvested = listing.harvested[0]
    task = Task(id="harvested", query="q", tools=[harvested.id])
    run = tmp_path / "run"
    run.mkdir()
    (run / "tasks.jsonl").write_text(json.dumps({"sha256": "a" * 64, "task": task.model_dump(mode="json")}) + "\n")
    assert [t.id for t in run_tasks(run)] == ["harvested"]
    tools = run_tools(ENV, Workspace(tmp_path / "ws"), [run])
    assert tools[harvested.id] == harvested
