"""SFT export: conversations from trajectories, the three formats, filters, de-duplication, redaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cworld.agents.prompt import system_prompt
from cworld.data_model import (
    Constraint,
    Intervention,
    Score,
    Step,
    Task,
    ToolCall,
    ToolResult,
    ToolSpec,
    Trajectory,
    write_jsonl_atomic,
)
from cworld.data_model.tool_names import FUNCTION_NAME, ToolNames, split_name
from cworld.errors import UsageError
from cworld.export import (
    ExportFilters,
    check_openai_file,
    check_openai_record,
    check_sharegpt_record,
    export_sft,
    summary_path,
)
from cworld.redact import Redactor
from cworld.rollout.user_context import user_context

SECRET = "sk-plantedSECRET0123456789"
ENV_SECRET = "envsecret-value-987654"

TOOLS = {
    "mail/search_messages": ToolSpec(
        server="mail",
        name="search_messages",
        description="Search mail",
        input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    ),
    "mail/forward_message": ToolSpec(
        server="mail",
        name="forward_message",
        description="Forward a message",
        input_schema={
            "type": "object",
            "properties": {"message_id": {"type": "string"}, "to": {"type": "string"}},
            "required": ["message_id", "to"],
            "additionalProperties": False,
        },
    ),
}
TASK = Task(
    id="t1",
    query="Forward the audit email to Deb.",
    tools=list(TOOLS),
    constraints=[Constraint(id="c1", type="efficiency", description="Use at most 5 tool calls.")],
)


SAME = ToolResult()


def step(
    index: int,
    kind: str = "tool",
    *,
    tool: str = "",
    args: dict | None = None,
    result: ToolResult | None = None,
    raw: ToolResult | None = SAME,
    message: str = "",
    faults: tuple[str, ...] = (),
) -> Step:
    """`raw` is what the backend returned: the observation unless given (None: never reached)."""
    call = ToolCall(id=f"call_{index}", tool=tool, arguments=args or {}) if tool else None
    interventions = [Intervention(kind=f, level="tool", turn=index + 1, tool=tool) for f in faults]
    return Step(
        index=index,
        turn=index + 1,
        kind=kind,
        message=message,
        tool_call=call,
        observation=result,
        raw_result=result if raw is SAME else raw,
        interventions=interventions,
    )


def episode(
    agent: str = "scripted:oracle",
    *,
    seed: int = 0,
    status: str = "completed",
    secret: bool = False,
    fault: bool = True,
) -> Trajectory:
    """A search, a call hit by an injected timeout, its retry, a hallucinated tool, a user message, a
    forward and the final answer."""
    found = ToolResult.ok(
        {"query": "mail", "tools": [{"id": "mail/search_messages", "description": "Search mail"}]}
    )
    hit = ToolResult.ok({"messages": [{"message_id": "m1", "subject": "Audit"}]})
    timeout = ToolResult.error("timeout", "timed out after 30s")
    echo = (
        f"sent with Authorization: Bearer abc.def.ghi and key {SECRET} and {ENV_SECRET}" if secret else "sent"
    )
    steps = [
        step(0, "search", tool="search_tools", args={"query": "mail", "k": 5}, result=found),
        step(
            1,
            tool="mail/search_messages",
            args={"query": "audit"},
            result=timeout if fault else hit,
            raw=None if fault else hit,
            faults=("timeout",) if fault else (),
        ),
        step(2, "message", message="Waiting one turn before trying again."),
        step(
            3,
            tool="mail/search_messages",
            args={"query": "audit"},
            result=hit,
            message="Retrying the search.",
        ),
        step(
            4,
            tool="mail/made_up",
            args={"x": 1},
            result=ToolResult.error("not_found", "no tool 'mail/made_up'"),
            raw=None,
        ),
        Step(index=5, turn=5, kind="user", message="Please CC nobody."),
        step(
            6,
            tool="mail/forward_message",
            args={"message_id": "m1", "to": "deb"},
            result=ToolResult.ok({"ok": True}, text=echo),
        ),
        step(7, "final", message="Forwarded the audit email to Deb."),
    ]
    return Trajectory(
        episode_id=f"ep-{agent}-{seed}",
        task_id="t1",
        task=TASK,
        agent=agent,
        mode="live",
        seed=seed,
        status=status,
        steps=steps,
    )  # type: ignore[arg-type]


def write_run(folder: Path, trajectories: list[Trajectory], scores: list[Score] | None = None) -> Path:
    write_jsonl_atomic(folder / "trajectories.jsonl", trajectories)
    if scores is not None:
        write_jsonl_atomic(folder / "scores.jsonl", scores)
    return folder


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return write_run(
        tmp_path / "run",
        [
            episode("scripted:oracle"),
            episode("scripted:oracle", seed=1),
            episode("scripted:no-look", secret=True),
        ],
    )


def test_names_map_tool_ids_reversibly() -> None:
    names = ToolNames()
    ids = [
        "mail/search_messages",
        "search_tools",
        "a__b/c",
        "srv_/x",
        "git.hub/search.repos",
        "x/" + "y" * 80,
    ]
    for tool_id in ids:
        name = names.name(tool_id)
        assert FUNCTION_NAME.match(name), name
        assert names.tool_id(name) == tool_id
    assert names.name("mail/search_messages") == "mail__search_messages"
    assert split_name("mail__search_messages") == "mail/search_messages"
    assert len(set(names.mapping)) == len(ids)
    assert set(names.hashed.values()) == {"a__b/c", "srv_/x", "git.hub/search.repos", "x/" + "y" * 80}


def test_openai_export_passes_the_checker_and_keeps_what_the_agent_saw(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "sft.jsonl"
    summary = export_sft([run], "openai", out, ExportFilters(), TOOLS)
    assert check_openai_file(out) == []
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == summary["examples"] == 2  # the two oracle seeds are one exact duplicate
    assert summary["duplicates_removed"] == 1
    messages = records[0]["messages"]
    assert [m["role"] for m in messages[:2]] == ["system", "user"]
    assert "Constraints:\n- Use at most 5 tool calls." in messages[1]["content"]
    context = user_context(TASK, "live", None)  # the date and the user an LLM agent is told
    assert messages[0]["content"] == system_prompt(True, context) and "\nContext:\n- Now: " in messages[0]["content"]
    assert context.user["name"] in messages[0]["content"]
    calls = {c["id"]: c for m in messages for c in m.get("tool_calls", [])}
    answers = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    assert set(calls) == set(answers)  # every call has its result, ids match
    assert answers["call_1"] == "ERROR (timeout): timed out after 30s"  # the injected fault, as seen
    assert "Found these tools" in answers["call_0"] and "mail__search_messages" in answers["call_0"]
    assert json.loads(calls["call_3"]["function"]["arguments"]) == {"query": "audit"}
    retry = next(m for m in messages if any(c["id"] == "call_3" for c in m.get("tool_calls", [])))
    assert retry["content"].startswith("Waiting one turn")  # the wait is folded into the retry turn
    made_up = next(m for m in messages if any(c["id"] == "call_4" for c in m.get("tool_calls", [])))
    assert made_up["weight"] == 0  # the agent's own syntactic error: context, not a target
    assert {"role": "user", "content": "Please CC nobody."} in messages
    assert messages[-1] == {"role": "assistant", "content": "Forwarded the audit email to Deb."}
    declared = {t["function"]["name"]: t["function"] for t in records[0]["tools"]}
    assert declared["mail__forward_message"]["parameters"] == TOOLS["mail/forward_message"].input_schema
    assert {"search_tools", "mail__search_messages", "mail__made_up"} <= set(declared)


def test_sharegpt_export_alternates_as_llamafactory_needs(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "sg.jsonl"
    export_sft([run], "sharegpt", out, ExportFilters(), TOOLS)
    for line in out.read_text().splitlines():
        record = json.loads(line)
        assert check_sharegpt_record(record) == []
        roles = [t["from"] for t in record["conversations"]]
        assert roles[0] == "human" and roles[-1] == "gpt"
        assert roles.count("function_call") == roles.count("observation") == 5
        assert "[user] Please CC nobody." in record["conversations"][roles.index("observation", 8)]["value"]
        tools = {t["name"]: t for t in json.loads(record["tools"])}
        assert tools["mail__search_messages"]["parameters"]["required"] == ["query"]
    info = json.loads(summary_path(out).read_text())["llamafactory_dataset_info"]
    assert info["sg"]["formatting"] == "sharegpt" and info["sg"]["file_name"] == "sg.jsonl"


def test_hf_export_loads_with_datasets(run: Path, tmp_path: Path) -> None:
    from datasets import load_from_disk

    out = tmp_path / "ds"
    export_sft([run], "hf", out, ExportFilters(), TOOLS)
    ds = load_from_disk(str(out))
    assert len(ds) == 2
    row = ds[0]
    assert row["agent"] in {"scripted:oracle", "scripted:no-look"} and row["faults"] == ["timeout"]
    record = {
        "messages": [{k: v for k, v in m.items() if v not in ("", [])} for m in row["messages"]],
        "tools": json.loads(row["tools"]),
    }
    for m in record["messages"]:
        if m.get("weight") == 1:
            del m["weight"]
    assert check_openai_record(record) == []


@pytest.mark.parametrize("fmt", ["openai", "sharegpt", "hf"])
def test_planted_secrets_never_reach_any_output(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", ENV_SECRET)
    out = tmp_path / f"out-{fmt}"
    summary = export_sft([run], fmt, out, ExportFilters(), TOOLS)
    files = [p for p in ([out] if out.is_file() else out.rglob("*")) if p.is_file()] + [summary_path(out)]
    blob = b"".join(p.read_bytes() for p in files)
    for secret in (SECRET, ENV_SECRET, "abc.def.ghi"):
        assert secret.encode() not in blob
    assert summary["redactions"] >= 3


def test_filters_first_round_and_scores(tmp_path: Path) -> None:
    trajectories = [
        episode("scripted:oracle"),
        episode("scripted:no-retry", status="gave_up"),
        episode("scripted:noisy-0.3", fault=False),
        episode("scripted:no-look", status="infra_error"),
    ]
    scores = [
        Score(episode_id=t.episode_id, task_id="t1", agent=t.agent, mode="live", overall=o, success=s)
        for t, o, s in zip(trajectories, [9.0, 3.0, 7.0, None], [True, False, True, None], strict=True)
    ]
    run = write_run(tmp_path / "run", trajectories, scores)
    out = tmp_path / "x.jsonl"
    s = export_sft([run], "openai", out, ExportFilters(min_score=5.0), TOOLS)
    assert s["examples"] == 2 and s["rejected_by_filter"] == {"infra_error": 1, "min_score": 1}
    s = export_sft([run], "openai", out, ExportFilters(only_success=True, fault_types=("timeout",)), TOOLS)
    assert s["examples"] == 1 and s["rejected_by_filter"]["fault_types"] == 1
    s = export_sft([run], "openai", out, ExportFilters(fault_types=("none",)), TOOLS)
    assert [json.loads(line)["messages"][-1]["content"] for line in out.read_text().splitlines()] == [
        "Forwarded the audit email to Deb."
    ] and s["examples"] == 1


def test_first_round_stops_at_the_first_valid_invocation(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "fr.jsonl"
    summary = export_sft([run], "openai", out, ExportFilters(first_round=True), TOOLS)
    assert check_openai_file(out) == []
    record = json.loads(out.read_text().splitlines()[0])
    roles = [m["role"] for m in record["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert record["messages"][4]["tool_calls"][0]["function"]["name"] == "mail__search_messages"
    assert (
        summary["examples"] == 1 and summary["duplicates_removed"] == 2
    )  # all three share their first round
    bad = episode("scripted:noisy-0.5")
    bad.steps[1] = step(
        1, tool="mail/search_messages", args={"q": 1}, result=ToolResult.error("invalid_args", "bad")
    )
    with pytest.raises(UsageError, match="first_call_invalid"):
        export_sft(
            [write_run(tmp_path / "bad", [bad])], "openai", out, ExportFilters(first_round=True), TOOLS
        )


def test_judge_agreement_needs_scores_and_votes(run: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cworld judge"):
        export_sft([run], "openai", tmp_path / "y.jsonl", ExportFilters(judge_agreement=1.0), TOOLS)
    with pytest.raises(UsageError, match="fault type"):
        ExportFilters(fault_types=("meteor",))


def test_nothing_half_written_when_the_export_fails(tmp_path: Path) -> None:
    out = tmp_path / "keep.jsonl"
    out.write_text("previous\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "trajectories.jsonl").write_text("")
    with pytest.raises(UsageError, match="holds no episodes"):
        export_sft([empty], "openai", out, ExportFilters(), TOOLS)
    run = write_run(tmp_path / "r", [episode(status="infra_error")])
    with pytest.raises(UsageError, match="no example to export"):
        export_sft([run], "hf", out, ExportFilters(), TOOLS)
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "keep.jsonl", "r"]


def test_redactor_guard_is_the_last_line(run: Path, tmp_path: Path) -> None:
    """A redactor that masks nothing lets the planted key through to the guard, which refuses to write."""
    leaky = Redactor(literals=(), patterns=())
    guard = Redactor.from_env(extra=[SECRET])
    from cworld.export import sft

    selection = sft.select(
        sft.load_runs([run], need_scores=False),
        "openai",
        ExportFilters(),
        sft.ConversationBuilder(TOOLS),
        leaky,
    )
    with pytest.raises(RuntimeError, match="survived redaction"):
        sft._guard(sft._payload(selection.examples, "openai"), guard)


def test_judge_agreement_filter_reads_the_votes(tmp_path: Path) -> None:
    from cworld.data_model import DimensionScore, JudgeVote
    from cworld.export import judge_agreement

    def votes(*passed: bool) -> DimensionScore:
        return DimensionScore(
            dimension="d", votes=[JudgeVote(judge=f"j{i}", passed=p) for i, p in enumerate(passed)]
        )

    split = {"completeness": votes(True, True, False), "format": votes(True, True, True)}
    scored = {
        "grounding": DimensionScore(
            dimension="grounding",
            votes=[
                JudgeVote(judge="a", score=7),
                JudgeVote(judge="b", score=8),
                JudgeVote(judge="c", score=2),
            ],
        )
    }
    base = {"task_id": "t1", "agent": "x", "mode": "live"}
    assert judge_agreement(Score(episode_id="e", dimensions=split, **base)) == pytest.approx(2 / 3)
    assert judge_agreement(Score(episode_id="e", dimensions=scored, **base)) == pytest.approx(2 / 3)
    assert judge_agreement(Score(episode_id="e", **base)) is None  # offline: no votes, no agreement
    trajectories = [episode("scripted:oracle"), episode("scripted:no-look", fault=False)]
    unanimous = {"completeness": votes(True, True, True)}
    scores = [
        Score(episode_id=trajectories[0].episode_id, dimensions=split, **base),
        Score(episode_id=trajectories[1].episode_id, dimensions=unanimous, **base),
    ]
    run = write_run(tmp_path / "run", trajectories, scores)
    summary = export_sft([run], "openai", tmp_path / "j.jsonl", ExportFilters(judge_agreement=1.0), TOOLS)
    assert summary["examples"] == 1 and summary["rejected_by_filter"] == {"judge_agreement": 1}


def test_a_requirement_added_mid_episode_is_not_in_the_first_message() -> None:
    """The first user message holds what the user states up front, as the agent got it; a constraint that
    arrives at turn 3 is not there (the export once listed every constraint in it)."""
    from cworld.export.conversation import ConversationBuilder

    later = Constraint(id="c2", type="response_content", description="Also CC Sam.", added_at_turn=3)
    task = TASK.model_copy(update={"constraints": [*TASK.constraints, later]})
    trajectory = episode("scripted:oracle").model_copy(update={"task": task})
    conversation = ConversationBuilder(TOOLS).build(trajectory)
    assert conversation is not None
    first = conversation.turns[1].content
    assert "Use at most 5 tool calls." in first and "Also CC Sam." not in first
