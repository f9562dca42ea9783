"""Per-tool divergence from paired calls: schema validity, error agreement, key-path overlap."""

from __future__ import annotations

from cworld.data_model import Step, ToolCall, ToolResult, ToolSpec, Trajectory
from cworld.fidelity.calls import call_agreement, call_divergence, pair_episodes, payload
from cworld.fidelity.text import agreement_lines, overall_agreement

OUT_SCHEMA = {
    "type": "object",
    "properties": {"items": {"type": "array"}, "total": {"type": "integer"}},
    "required": ["items", "total"],
}
TOOLS = {
    "shop/search": ToolSpec(server="shop", name="search", category="shopping", output_schema=OUT_SCHEMA),
    "shop/buy": ToolSpec(server="shop", name="buy", category="shopping"),
    "mail/send": ToolSpec(server="mail", name="send", category="email"),
}


def call(i: int, tool: str, raw: ToolResult | None, args: dict | None = None) -> Step:
    return Step(
        index=i,
        turn=i + 1,
        tool_call=ToolCall(id=f"c{i}", tool=tool, arguments=args or {"q": "x"}),
        raw_result=raw,
        observation=raw or ToolResult.error("timeout", "injected"),
    )


def episode(mode: str, steps: list[Step], agent: str = "scripted:oracle", seed: int = 0) -> Trajectory:
    return Trajectory(
        episode_id=f"{mode}-{agent}-{seed}",
        task_id="t1",
        agent=agent,
        mode=mode,
        seed=seed,  # type: ignore[arg-type]
        steps=steps,
    )


def test_paired_calls_are_compared_per_tool_and_category() -> None:
    live = episode(
        "live",
        [
            call(0, "shop/search", ToolResult.ok({"items": [{"id": 1, "name": "a"}], "total": 1})),
            call(1, "shop/buy", ToolResult.ok({"order": "o1"})),
            call(2, "mail/send", ToolResult.ok({"sent": True})),
            call(3, "shop/search", None),  # a fault answered: never reached the backend
        ],
    )
    synth = episode(
        "synthesized",
        [
            call(0, "shop/search", ToolResult.ok({"items": [{"id": 7, "title": "b"}], "count": 1})),
            call(1, "shop/buy", ToolResult.error("not_found", "no such item")),
            call(2, "mail/read", ToolResult.ok({"x": 1})),  # another tool: not a pair
            call(3, "shop/search", ToolResult.ok({"items": [], "total": 0})),
        ],
    )
    result = call_divergence([live], [synth], TOOLS)
    assert (result.episodes_paired, result.calls_a, result.calls_paired) == (1, 4, 2)
    tools = {t["name"]: t for t in result.tools}
    search = tools["shop/search"]
    # key paths: live {$, items, items[], items[].id, items[].name, total};
    # synth swaps name->title and total->count: 4 shared of 8
    assert search["key_overlap"] == round(4 / 8, 4)
    assert search["schema_valid_b"] == 0.0 and search["schema_valid_a"] == 1.0  # synth lacks `total`
    assert search["error_agreement"] == 1.0 and search["outcomes"] == {"both ok": 1}
    buy = tools["shop/buy"]
    assert buy["error_agreement"] == 0.0 and buy["key_overlap"] is None and buy["divergence"] == 1.0
    assert buy["outcomes"] == {"b error only": 1}
    categories = {c["name"]: c for c in result.categories}
    assert set(categories) == {"shopping"} and categories["shopping"]["calls"] == 2
    assert result.tools[0]["name"] == "shop/buy"  # ranked by divergent calls


def test_episodes_pair_on_agent_task_seed_and_policy() -> None:
    a = [episode("live", [], seed=0), episode("live", [], seed=1), episode("live", [], agent="x")]
    b = [
        episode("synthesized", [], seed=1),
        episode("synthesized", [], agent="x"),
        episode("synthesized", [], seed=0).model_copy(update={"policy": "stress"}),
    ]
    pairs = pair_episodes(a, b)
    assert [(x.seed, x.agent) for x, _ in pairs] == [(1, "scripted:oracle"), (0, "x")]


def test_payload_reads_structured_content_or_json_text() -> None:
    assert payload(ToolResult.ok({"a": 1})) == {"a": 1}
    assert payload(ToolResult(content=[{"type": "text", "text": "[1, 2]"}])) == [1, 2]
    assert payload(ToolResult(content=[{"type": "text", "text": "plain words"}])) is None


def test_call_agreement_per_category_errors_key_paths_and_types() -> None:
    live_ok = ToolResult.ok({"id": "m1", "read": False, "to": [{"name": "Ana"}]})
    pairs = [
        ("email", live_ok, ToolResult.ok({"id": "m1", "read": "no", "to": ["ana@x"]})),
        ("email", live_ok, ToolResult.error("not_found", "no message")),
        ("email", ToolResult.error("not_found", "x"), ToolResult.error("not_found", "y")),
        ("calendar", ToolResult.ok({"events": []}), ToolResult.ok({"events": [], "total": 0})),
    ]
    rows = {r["name"]: r for r in call_agreement(pairs)}
    assert list(rows) == ["calendar", "email", "ALL"]
    email = rows["email"]
    assert email["calls"] == 3 and email["error_agreement"] == round(2 / 3, 4) and email["both_ok"] == 1
    # live paths {$, id, read, to, to[], to[].name}; synth {$, id, read, to, to[]}: 5 shared of 6;
    # types agree on $, id, to (read: boolean vs string, to[]: object vs string) -> 3 of 5
    assert email["key_overlap"] == round(5 / 6, 4) and email["type_agreement"] == 0.6
    assert rows["calendar"]["key_overlap"] == round(2 / 3, 4) and rows["calendar"]["type_agreement"] == 1.0
    assert rows["ALL"]["calls"] == 4 and rows["ALL"]["error_agreement"] == 0.75
    lines = agreement_lines(list(rows.values()))
    assert lines[0].split() == ["category", "calls", "errors", "keys", "types", "both", "ok"]
    assert lines[2].split()[:5] == ["email", "3", "66.7%", "83.3%", "60.0%"]
    assert call_agreement([]) == []


def test_the_overall_agreement_line_weights_categories_by_their_calls() -> None:
    rows = [
        {"name": "email", "calls": 30, "error_agreement": 0.9, "key_overlap": 1.0, "type_agreement": 1.0, "both_ok": 10},
        {"name": "travel", "calls": 10, "error_agreement": 0.5, "key_overlap": 0.5, "type_agreement": None, "both_ok": 10},
        {"name": "time", "calls": 5, "error_agreement": 1.0, "key_overlap": None, "type_agreement": None, "both_ok": 0},
    ]
    line = overall_agreement(rows)
    assert "45 paired calls" in line
    assert "error agreement 82.2%" in line  # (27 + 5 + 5) / 45
    assert "keys 75.0%" in line and "types 100.0%" in line


def test_a_call_live_could_not_run_is_not_paired() -> None:
    from cworld.fidelity.calls import paired_call

    call = ToolCall(id="c1", tool="crm/find", arguments={})
    live = Step(index=0, turn=0, kind="tool", tool_call=call,
                raw_result=ToolResult.error("unavailable", "unavailable: crm/find is schema-only here"))
    synth = Step(index=0, turn=0, kind="tool", tool_call=call, raw_result=ToolResult.ok({"items": []}))
    assert paired_call(live, synth, {}) is None
    assert paired_call(synth, synth, {}) is not None
