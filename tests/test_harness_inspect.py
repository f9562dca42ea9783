"""The Inspect AI task (`cworld[inspect]`): 5 cworld tasks evaluated with Inspect's mockllm write an Inspect
log with cworld scores and a cworld run folder; the same actions through the gym API and through Inspect
give the same trajectory; the `inspect eval` CLI runs the task file."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rollout_helpers import without_timings

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from cworld.cli.judge import command as judge_command  # noqa: E402
from cworld.cli.report import command as report_command  # noqa: E402
from cworld.data_model import Task, Trajectory, read_jsonl  # noqa: E402
from cworld.environment import Workspace  # noqa: E402
from cworld.gym import make  # noqa: E402
from cworld.harness.inspect_bridge import ToolNames, cworld_task, task_text  # noqa: E402
from cworld.rollout import read_trajectories  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "tasks_sandbox.jsonl"
TASKS = read_jsonl(FIXTURE, Task)
MODEL = "mockllm/model"
AGENT = f"inspect:{MODEL}"


def scripted(output: ModelOutput) -> ModelOutput:
    """Scripted outputs carry their usage: mockllm would otherwise count tokens with tiktoken's o200k_base,
    which tiktoken downloads on first use (the tests stay offline)."""
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def call(name: str, arguments: dict[str, Any]) -> ModelOutput:
    return scripted(ModelOutput.for_tool_call(MODEL, name, arguments))


def one_search_then_submit(messages: list[Any], tools: list[Any], *_: Any) -> ModelOutput:
    """Per sample: call the first offered tool, then search, then submit (decided from the sample's own chat,
    so concurrent samples do not share a script)."""
    turns = sum(1 for m in messages if m.role == "tool")
    if turns == 0:
        return call(tools[0].name, {"query": "audit"})
    if turns == 1:
        return call("search_tools", {"query": "send a message", "k": 3})
    return call("submit", {"answer": "Done."})


def trajectories(run: Path) -> list[Trajectory]:
    return list(read_trajectories(run))


@pytest.fixture(scope="module")
def five(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("inspect")
    tasks = root / "tasks.jsonl"
    tasks.write_text("".join(line for line in FIXTURE.read_text().splitlines(keepends=True)[:5]))
    ws = root / "ws"
    os.environ["CWORLD_WORKSPACE"] = str(ws)
    try:
        model = get_model(MODEL, custom_outputs=one_search_then_submit)
        [log] = inspect_eval(cworld_task(str(tasks), mode="synthesized", policy="stress"), model=model,
                             log_dir=str(root / "logs"), display="none")
    finally:
        os.environ.pop("CWORLD_WORKSPACE", None)
    return {"log": log, "ws": ws, "root": root}


def test_five_tasks_write_an_inspect_log_with_cworld_scores(five):
    log = read_eval_log(five["log"].location)
    assert log.status == "success" and Path(log.location).is_file() and log.location.endswith(".eval")
    assert sorted(s.id for s in log.samples) == sorted(t.id for t in TASKS[:5])
    for sample in log.samples:
        assert sample.metadata["task_id"] == sample.id
        assert sample.input == task_text(next(t for t in TASKS if t.id == sample.id))
        score = sample.scores["cworld_judges"]
        assert set(score.value) == {"state_success", "constraints", "overall", "success"}
        assert 0.0 <= score.value["overall"] <= 10.0 and score.answer == "Done."
        assert score.metadata["status"] == "completed" and score.metadata["metrics"]["tool_calls"] == 1.0
        assert [m.role for m in sample.messages][:4] == ["system", "user", "assistant", "tool"]
    names = {s.name for s in log.results.scores}
    assert names == {"state_success", "constraints", "overall", "success"}
    assert all("mean" in s.metrics for s in log.results.scores)


def test_the_trajectories_land_in_a_run_folder_that_judge_and_report_read(five):
    ws = Workspace.resolve(five["ws"])
    run = ws.latest("run")
    assert run.name.startswith("inspect-") and str(run) == five["log"].eval.metadata["cworld_run"]
    stored = trajectories(run)
    assert sorted(t.task_id for t in stored) == sorted(t.id for t in TASKS[:5])
    assert {(t.agent, t.mode, t.policy, t.status) for t in stored} == {(AGENT, "synthesized", "stress", "completed")}
    assert all([s.kind for s in t.steps if s.kind != "user"] == ["tool", "search", "final"] for t in stored)
    episode_ids = {s.scores["cworld_judges"].metadata["episode_id"] for s in five["log"].samples}
    assert episode_ids == {t.episode_id for t in stored}
    obj = {"env_dir": None, "workspace": str(five["ws"])}
    judged = CliRunner().invoke(judge_command, [str(run)], obj=obj, catch_exceptions=False)
    assert judged.exit_code == 0, judged.output
    assert len((run / "scores.jsonl").read_text().splitlines()) == 5
    report = CliRunner().invoke(report_command, [str(run), "--out", str(five["root"] / "rep")], obj=obj,
                                catch_exceptions=False)
    assert report.exit_code == 0 and AGENT in report.output, report.output


ACTIONS: list[dict[str, Any]] = [
    {"tool": "mail/search_messages", "arguments": {"query": "Security audit findings"}},
    {"tool": "mail/search_messages", "arguments": {}},                    # a schema error reaches the episode
    {"search": "find a contact by name", "k": 3},
    {"tool": "mail/search_contacts", "arguments": {"query": "Deborah Kapoor"}},
    {"tool": "nope/nothing", "arguments": {}},
    {"tool": "mail/search_messages", "arguments": {"query": "audit"}},
]
FINAL = "Found the audit message and Deborah's contact."


async def gym_trajectory(task: Task, ws: Path, mode: str, policy: str) -> Trajectory:
    env = make(task, mode, policy, workspace=Workspace.resolve(ws), agent=AGENT)
    await env.areset(seed=0)
    for action in ACTIONS:
        *_, info = await env.astep(action)
        assert "trajectory" not in info
    *_, info = await env.astep({"final": FINAL})
    return info["trajectory"]


def inspect_outputs() -> list[ModelOutput]:
    names = ToolNames()
    outputs = [call("search_tools", {"query": a["search"], "k": a["k"]}) if "search" in a
               else call(names.name(a["tool"]), a["arguments"]) for a in ACTIONS]
    return [*outputs, call("submit", {"answer": FINAL})]


@pytest.mark.parametrize(("mode", "policy"), [("synthesized", "stress"), ("live", "default")])
def test_gym_and_inspect_give_the_same_trajectory_for_the_same_actions(tmp_path, monkeypatch, mode, policy):
    task = TASKS[0]
    tasks = tmp_path / "one.jsonl"
    tasks.write_text(task.model_dump_json() + "\n")

    through_gym = asyncio.run(gym_trajectory(task, tmp_path / "ws-gym", mode, policy))
    monkeypatch.setenv("CWORLD_WORKSPACE", str(tmp_path / "ws-inspect"))
    model = get_model(MODEL, custom_outputs=inspect_outputs())
    [log] = inspect_eval(cworld_task(str(tasks), mode=mode, policy=policy), model=model,
                         log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    [through_inspect] = trajectories(Workspace.resolve(tmp_path / "ws-inspect").latest("run"))
    assert [s.kind for s in through_gym.steps] == ["tool", "tool", "search", "tool", "tool", "tool", "final"]
    assert through_gym.interventions or policy != "stress"                 # the stress policy injected faults
    assert without_timings(through_inspect) == without_timings(through_gym)


def test_tool_names_map_back_to_tool_ids():
    names = ToolNames()
    long_id = "server/" + "x" * 80
    assert names.name("mail/send_message") == "mail__send_message"
    assert len(names.name(long_id)) <= 64 and names.tool_id(names.name(long_id)) == long_id
    clash = names.name("mail/send.message")
    assert clash != "mail__send_message" and names.tool_id(clash) == "mail/send.message"
    assert names.tool_id("mail__send_message") == "mail/send_message"
    assert names.name("x/submit") != "submit"


def documented_command(tasks: Path) -> list[str]:
    """The `inspect eval ... mockllm/model ... mode=synthesized` command as docs/harnesses.md prints it, with
    the tasks file it names standing for `tasks`."""
    lines = (ROOT / "docs" / "harnesses.md").read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("inspect eval") and "mockllm/model" in line)
    text = lines[first].rstrip("\\") + " " + lines[first + 1].split("#")[0]
    words = shlex.split(text)
    [placeholder] = [w for w in words if w.startswith("tasks=")]
    return [f"tasks={tasks}" if w == placeholder else w for w in words]


def offline_env(tmp_path: Path) -> dict[str, str]:
    """No way out: every proxy variable points at a closed local port, no tiktoken cache is named, and the
    default cache folder (under TMPDIR) is empty."""
    closed = "http://127.0.0.1:9"
    keep = {k: v for k, v in os.environ.items() if k.upper() not in
            {"NO_PROXY", "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "TMPDIR"}}
    (tmp_path / "tmp").mkdir()
    return {**keep, **{name: closed for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy",
                                                 "https_proxy", "all_proxy")},
            "TMPDIR": str(tmp_path / "tmp"), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "CWORLD_WORKSPACE": str(tmp_path / "ws"), "PYTHONPATH": str(ROOT),
            "INSPECT_LOG_DIR": str(tmp_path / "logs"), "INSPECT_DISPLAY": "none"}


def test_the_documented_inspect_command_runs_offline(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(FIXTURE.read_text().splitlines(keepends=True)[5:7]))
    env = offline_env(tmp_path)
    probe = "import tiktoken; tiktoken.get_encoding('o200k_base')"
    blocked = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert blocked.returncode != 0, "this environment can download o200k_base: the test would prove nothing"
    command = documented_command(tasks)
    assert command[:4] == ["inspect", "eval", "cworld/harness/inspect_task.py@cworld", "--model"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, (done.stdout + done.stderr)[-3000:]
    [path] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and len(log.samples) == 2, log.error
    assert all(s.scores["cworld_judges"].metadata["status"] == "completed" for s in log.samples)
    assert all(s.scores["cworld_judges"].answer == "Default output from mockllm/model" for s in log.samples)
    assert all(s.model_usage[MODEL].input_tokens > 0 for s in log.samples)  # counted with o200k_base
    assert len(trajectories(Workspace.resolve(tmp_path / "ws").latest("run"))) == 2


def test_the_inspect_entry_point_names_the_task_module():
    """`inspect eval cworld/cworld` imports the module pyproject.toml registers under `inspect_ai`."""
    import importlib
    import tomllib

    from inspect_ai._util.registry import registry_info

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["inspect_ai"]
    module = importlib.import_module(declared["cworld"])
    assert registry_info(module.cworld).type == "task" and registry_info(module.cworld).name.endswith("cworld")


def test_cworld_imports_no_inspect_and_a_missing_extra_is_one_line():
    probe = (
        "import sys\n"
        "import cworld, cworld.harness, cworld.gym\n"
        "assert 'inspect_ai' not in sys.modules, 'cworld imported inspect_ai'\n"
        "sys.modules['inspect_ai'] = None\n"
        "from cworld.errors import UsageError\n"
        "try:\n"
        "    import cworld.harness.inspect_bridge\n"
        "except UsageError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "Inspect AI is not installed; install the extra: pip install 'cworld[inspect]'"
