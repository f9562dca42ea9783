"""`cworld run`: roll out one agent over a task file, in live, synthesized or hybrid mode."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cworld.cli.common import environment, preflight, read_tasks, workspace

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cworld.data_model import Task, ToolSpec
    from cworld.environment import Workspace
    from cworld.rollout import RunReport

MODES = ("live", "synthesized", "hybrid")


@click.command("run")
@click.option("--tasks", "tasks_file", type=click.Path(dir_okay=False), help="Tasks JSONL (default: the workspace's latest).")
@click.option("--mode", type=click.Choice(MODES), default="live", show_default=True)
@click.option("--agent", required=True, help="scripted:oracle|no-retry|no-look|no-replan|noisy-P (privileged: they follow the gold plan), "
              "heuristic:basic|careful|thorough|dense|hybrid|explorer|frugal|hasty (plan from the request alone), "
              "or a model string.")
@click.option("--policy", default="default", show_default=True, help="Fault policy in controller/policies/.")
@click.option("--seeds", type=int, default=1, show_default=True, help="Episodes per task, seeds 0..N-1.")
@click.option("--concurrency", type=int, default=4, show_default=True, help="Episodes at once.")
@click.option("--out", type=click.Path(file_okay=False), help="Run folder (default: a new one in the workspace).")
@click.option("--resume", is_flag=True, help="Continue the run in --out (default: the latest run), skipping finished "
              "episodes; those recorded as infra_error run again.")
@click.option("--no-retry-infra", is_flag=True, help="With --resume: keep infra_error episodes as they are.")
@click.option("--access", help="Tool access: search, full or rag-K (default: search for LLM agents, full for scripted).")
@click.option("--style", type=click.Choice(["planner", "react"]), help="LLM agent loop (default: planner).")
@click.option("--max-turns", type=int, default=None,
              help="Turn limit per episode (default: max(30, 3 x the task's candidate tools + 10, a stated call limit + 10)).")
@click.option("--timeout", "timeout_s", type=float, default=600.0, show_default=True, help="Seconds per episode.")
@click.option("--infra-retries", type=int, default=2, show_default=True, help="Restarts of an episode whose infrastructure failed.")
@click.option("--limit", type=int, help="Only the first N tasks.")
@click.option("--on-model-failure", type=click.Choice(["stop", "infra", "fallback"]), default=None,
              help="A model that fails past its retries mid-run: stop the run, record the episode as infra_error "
              "(resume runs it again), or let the engine fall back (default: on_model_failure in the workspace "
              "config, else infra).")
@click.option("--registry-search", is_flag=True, help="search_tools uses the built registry index, not in-process BM25.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where episodes run: this process, or a Ray cluster (needs the ray extra).")
@click.option("--ray-address", help="Ray cluster to join (HOST:PORT, or auto: the one started on this machine with "
              "`ray start`); default: start a local one.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def command(ctx: click.Context, tasks_file: str | None, mode: str, agent: str, policy: str, seeds: int,
            concurrency: int, out: str | None, resume: bool, no_retry_infra: bool, access: str | None, style: str | None,
            max_turns: int | None, timeout_s: float, infra_retries: int, limit: int | None, on_model_failure: str | None,
            registry_search: bool, executor: str, ray_address: str | None, no_progress: bool, as_json: bool) -> None:
    """Run AGENT on every task (x seeds); trajectories go to OUT/trajectories.jsonl as episodes end."""
    from cworld.agents import agent_label, check_agent_name, is_privileged
    from cworld.agents.search import registry_index_folder
    from cworld.config import load_model_failure_policy
    from cworld.errors import UsageError
    from cworld.registry.tools import environment_tools
    from cworld.rollout import RolloutContext, RunConfig, Runner, render

    env, ws = environment(ctx), workspace(ctx)
    config = RunConfig(agent=agent, mode=mode, policy=policy, seeds=seeds, concurrency=concurrency, access=access,
                       style=style, max_turns=max_turns, timeout_s=timeout_s, infra_retries=infra_retries,
                       resume=resume, retry_infra=not no_retry_infra, progress=not no_progress and not as_json,
                       executor=executor, ray_address=ray_address,
                       on_model_failure=load_model_failure_policy(ws.root, on_model_failure))
    check_agent_name(agent)
    agent_label(agent, access, style)
    tasks = read_tasks(ws, tasks_file, limit)
    if registry_search and registry_index_folder(ws) is None:
        raise UsageError("no registry index in the workspace; run `cworld registry build` or drop --registry-search")
    preflight(ws, agents=[agent], roles=["engine"] if mode != "live" else [])
    rollout = RolloutContext(env, ws, environment_tools(env, ws).tasks_tools(tasks), registry_search=registry_search)
    if mode == "live":
        _note_schema_only(tasks, rollout.tools)
    rollout.policy(policy)
    folder = _run_folder(ws, out, resume)
    report = asyncio.run(Runner(tasks, config, rollout, folder).run())
    if report.fatal is not None:  # e.g. the local model server died: every further episode would fail too
        raise type(report.fatal)(f"{report.fatal} ({report.statuses['infra_error']} episode(s) recorded as "
                                 f"infra_error in {folder / 'trajectories.jsonl'})")
    if as_json:
        click.echo(json.dumps({**_report_json(report), "privileged": is_privileged(agent)}, indent=2))
        return
    render(report.rows)
    if is_privileged(agent):
        click.echo(f"{config.label} is privileged: it follows the task's gold plan and hints (an upper reference, "
                   "not a fair competitor); heuristic:* and LLM agents see only the request, tools and observations")
    else:
        click.echo(f"{config.label} is not privileged: it sees only the request, the tools and the observations")
    if report.statuses["agent_error"]:
        click.echo(f"{report.statuses['agent_error']} episode(s) failed as the agent's own (its model answered "
                   "out of protocol or was refused): see agent_error in the trajectories")
    fallbacks = sum(row.fallbacks for row in report.rows)
    if fallbacks:
        click.echo(f"{fallbacks} engine answer(s) were made without the engine's model (fallbacks): see the "
                   "fallbacks column")
    rerun = f" ({report.rerun} re-run after an infra_error)" if report.rerun else ""
    click.echo(f"{report.ran} episode(s) run{rerun}, {report.skipped} already done; trajectories in "
               f"{folder / 'trajectories.jsonl'}")


def _note_schema_only(tasks: list[Task], tools: Mapping[str, ToolSpec]) -> None:
    """One line when live mode cannot run some tasks' tools (a catalog's, with no server): every call to
    one answers `unavailable`, so those episodes cannot succeed live."""
    cannot = [t.id for t in tasks if any(tools[n].availability == "schema-only" for n in t.public().tools if n in tools)]
    if cannot:
        click.echo(f"note: {len(cannot)} of {len(tasks)} task(s) name schema-only tools, which live mode answers "
                   "`unavailable` (no server runs them); run those with --mode synthesized or hybrid", err=True)


def _run_folder(ws: Workspace, out: str | None, resume: bool) -> Path:
    """--out, else the latest run when resuming, else a new run folder; marked as the latest run."""
    if out:
        folder = Path(out).expanduser().resolve()
        ws.mark_latest("run", folder)
        return folder
    if resume:
        return ws.latest("run")
    return ws.new_run_dir()


def _latency(latency: tuple[float, float] | None) -> dict[str, float] | None:
    return None if latency is None else {"p50": round(latency[0], 3), "max": round(latency[1], 3)}


def _report_json(report: RunReport) -> dict[str, Any]:
    rows = [{"agent": r.agent, "mode": r.mode, "policy": r.policy, "episodes": r.episodes,
             "statuses": dict(r.statuses), "tool_calls": r.tool_calls, "faults": r.faults,
             "state_matched": r.state_matched, "state_checked": r.state_checked, "fallbacks": r.fallbacks,
             "reasons": r.reasons, "agent_latency_s": _latency(r.agent_latency), "agent_cut": r.agent_cut,
             "engine_origins": dict(r.origins)}
            for r in report.rows]
    return {"out": str(report.out), "planned": report.planned, "skipped": report.skipped,
            "ran": report.ran, "rerun": report.rerun, "statuses": dict(report.statuses), "rows": rows}
