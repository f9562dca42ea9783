"""`make demo`'s readable output: the closing block (`cworld demo-summary`) holds the headline figures in at
most 15 lines, read from run folders' JSON; and tables printed to a pipe or a log are 100 columns wide, no
header cut ("succe…") and no column lost (a run summary's fallbacks and state)."""

from __future__ import annotations

import io
import json
import os
import sys
from collections import Counter
from pathlib import Path

import click
from click.testing import CliRunner
from rich.console import Console

from cworld.cli.demo_summary import MAX_LINES, DemoOutputs, closing_block
from cworld.cli.main import PIPED_COLUMNS, cli, fit_piped_output
from cworld.data_model import Score
from cworld.fidelity.text import render_fidelity
from cworld.rollout.summary import SummaryRow, render

FIDELITY = {
    "measured": {"tasks": 2, "agents": [{}] * 8, "spearman": {"value": 0.19, "low": -0.571, "high": 0.707}},
    "ranking": {"tasks": 2, "agents": [{}] * 14, "spearman": {"value": 0.82, "low": 0.556, "high": 0.911}},
    "goals": {"rho_measured": {"value": 0.19, "goal": 0.9, "met": False},
              "kappa_state_success": {"value": 0.0, "goal": 0.8, "met": False},
              "verdict_flips": {"value": 0.25, "goal": 0.05, "met": False}, "all_met": False},
    "origins": {"synthesized": {"inferred": 80, "simulated": 11, "computed": 2, "input": 7}},
}


def write_run(root: Path, agent: str, mode: str, successes: list[float | None]) -> Path:
    """A run folder as `cworld run` + `cworld judge` leave it: one score per task."""
    run = root / "runs" / f"demo-1-{mode}-{agent.replace(':', '-')}"
    run.mkdir(parents=True)
    (run / "trajectories.jsonl").write_text("")
    scores = [Score(episode_id=f"{agent}-{mode}-{i}", task_id=f"t{i}", agent=agent, mode=mode,
                    metrics={"state_success": s}) for i, s in enumerate(successes)]
    (run / "scores.jsonl").write_text("".join(s.model_dump_json() + "\n" for s in scores))
    return run


def demo_outputs(root: Path, agents: list[str]) -> DemoOutputs:
    runs = [write_run(root, a, mode, [1.0, 0.0, None] if mode == "live" else [0.0, 0.0, None])
            for a in agents for mode in ("live", "synthesized")]
    (root / "fidelity").mkdir()
    (root / "fidelity" / "fidelity.json").write_text(json.dumps(FIDELITY))
    sft = root / "sft"
    sft.mkdir()
    for fmt, n in (("openai", 3), ("sharegpt", 1)):
        (sft / f"x.{fmt}.jsonl.summary.json").write_text(json.dumps({"format": fmt, "examples": n}))
    return DemoOutputs(runs=runs, tasks=root / "tasks.jsonl", fidelity=root / "fidelity", report=root / "report",
                       sft=sft)


def test_the_closing_block_holds_the_headline_figures_in_at_most_15_lines(tmp_path):
    lines = closing_block(demo_outputs(tmp_path, ["scripted:oracle", "heuristic:careful"]))
    text = "\n".join(lines)
    assert len(lines) <= MAX_LINES, text
    assert max(len(line) for line in lines[1:-3]) <= PIPED_COLUMNS  # the lines of figures (not of paths)
    assert "3 tasks" in lines[0]
    oracle = next(line for line in lines if "scripted:oracle*" in line)  # * marks a privileged agent
    assert "1/2" in oracle and "0/2" in oracle  # live, then synthesized; the task without a ground truth not counted
    assert any(line.strip().startswith("heuristic:careful ") for line in lines)
    for figure in ("ρ 0.190 [-0.571, 0.707] over 8 non-privileged agents", "all 14: 0.820", "κ 0.000",
                   "flips 25%", "inferred 80% · simulated 11% · computed 2% · input 7% (100 answers)",
                   "report/report.html", "demo-1-*/trajectories.jsonl", "openai 3", "sharegpt 1"):
        assert figure in text, figure


def test_many_agents_share_lines_and_the_block_stays_within_15(tmp_path):
    agents = [f"heuristic:{name}" for name in ("basic", "careful", "thorough", "dense", "hybrid", "explorer",
                                               "frugal", "hasty")] + ["scripted:oracle", "scripted:no-retry"]
    lines = closing_block(demo_outputs(tmp_path, agents))
    assert len(lines) <= MAX_LINES
    assert all(agent in "\n".join(lines) for agent in agents)


def test_the_command_prints_the_block(tmp_path):
    outputs = demo_outputs(tmp_path, ["scripted:oracle"])
    args = ["demo-summary", *map(str, outputs.runs), "--fidelity", str(outputs.fidelity), "--sft", str(outputs.sft)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "ρ 0.190" in result.output and "report:       not written" in result.output


def _interval(value: float) -> dict[str, float]:
    return {"value": value, "low": value - 0.05, "high": value + 0.05}


EPISODES = {"level": 0.95, "categories": [], "groups": {"all": {
    "name": "non-privileged", "episodes": 96, "tasks": 12,
    "state_success": {"pairs": 96, "live_rate": 0.25, "synthesized_rate": 0.0, "accuracy": _interval(0.75),
                      "kappa": _interval(-0.01)},
    "r_c": {"pearson": _interval(0.73)}, "overall": {"pearson": _interval(-0.37)},
    "verdict_flips": {"share": _interval(0.25)}}}}


def piped_tables() -> str:
    """A run summary and the fidelity episode table, as a command prints them to a pipe."""
    out = io.StringIO()
    row = SummaryRow("heuristic:thorough", "synthesized", "default", episodes=20, state_checked=19,
                     statuses=Counter(completed=7, gave_up=8, turn_limit=5))
    render([row], Console(file=out))
    render_fidelity({"episodes": EPISODES}, Console(file=out))
    return out.getvalue()


def test_a_command_piped_draws_its_tables_100_wide_and_cuts_no_header(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # not a terminal
    with click.Context(cli) as ctx:
        fit_piped_output(ctx)
        text = piped_tables()
    assert "COLUMNS" not in os.environ  # taken back when the command ends
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= PIPED_COLUMNS
    assert "…" not in text
    for header in ("fallbacks", "state", "success", "accuracy", "flips", "overall"):
        assert header in text, header
    assert "0/19" in text  # the state column is there, with its value
    assert all(line.rstrip()[-1] in "┓┃┩│┘" for line in lines if line[:1] in "┏┃┡│└")  # no table cut at the edge


def test_columns_set_by_the_user_win(monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    with click.Context(cli) as ctx:
        fit_piped_output(ctx)
        assert os.environ["COLUMNS"] == "120"


def test_a_terminal_keeps_its_own_width(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    terminal = io.StringIO()
    monkeypatch.setattr(terminal, "isatty", lambda: True)
    monkeypatch.setattr(sys, "stdout", terminal)
    with click.Context(cli) as ctx:
        fit_piped_output(ctx)
        assert "COLUMNS" not in os.environ
