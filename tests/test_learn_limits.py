"""Learning a limit the state does not hold (docs/world-engine.md "Learning rules"): a hotel's rooms, read
from the world's reference data, against the rooms a tally of the state says are booked; a record of
nights made empty and filled by the add; the learning explorer sending an accepted write again."""

from __future__ import annotations

import copy
import random
from typing import Any

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.learn.explorer import Explorer, Rates
from cworld.engine.learn.learner import induce
from cworld.engine.learn.replay import run_on
from cworld.engine.learn.traffic import Observation, with_reference

NOW = "2026-08-21T09:45:20Z"
BOOK = ToolSpec.model_validate({
    "server": "stays", "name": "book_room", "description": "book rooms at a hotel for a night (test)",
    "input_schema": {"type": "object", "required": ["hotel_id", "night"],
                     "properties": {"hotel_id": {"type": "string"}, "night": {"type": "string"},
                                    "rooms": {"type": "integer", "default": 1}}},
    "annotations": {"read_only_hint": False}})


def _service(state: dict[str, Any], reference: dict[str, Any], args: dict[str, Any]) -> ToolResult:
    """The service learned from (the test's stand-in): a hotel of the reference, rooms free that night."""
    hotel = reference["NET"]["hotels"].get(args["hotel_id"])
    if hotel is None:
        return ToolResult.error("not_found", f"no hotel '{args['hotel_id']}'")
    booked = state["nights"].get(args["hotel_id"], {}).get(args["night"], 0)
    if booked + args.get("rooms", 1) > hotel["rooms"]:
        return ToolResult.error("business", "conflict: the hotel is full that night")
    state["nights"].setdefault(args["hotel_id"], {})
    state["nights"][args["hotel_id"]][args["night"]] = booked + args.get("rooms", 1)
    return ToolResult.ok({"ok": True})


def _traffic(reference: dict[str, Any], seed: int) -> list[Observation]:
    rng = random.Random(seed)
    state: dict[str, Any] = {"nights": {}}
    out = []
    for _ in range(60):
        args: dict[str, Any] = {"hotel_id": rng.choice(["h_001", "h_002", "h_003", "h_404"]),
                                "night": rng.choice(["2026-09-01", "2026-09-02"])}
        if rng.random() < 0.5:
            args["rooms"] = rng.randint(1, 3)
        before = copy.deepcopy(state)
        result = _service(state, reference, args)
        out.append(Observation(BOOK, args, result, NOW, with_reference(before, reference),
                               with_reference(copy.deepcopy(state), reference), reference=reference))
    return out


def _reference(rooms: tuple[int, int, int]) -> dict[str, Any]:
    return {"NET": {"hotels": {f"h_00{i}": {"rooms": n, "stars": 3} for i, n in enumerate(rooms, start=1)}}}


def test_a_booking_past_a_hotels_rooms_is_refused_by_a_tally_over_the_reference_data() -> None:
    calls = _traffic(_reference((4, 6, 5)), 1) + _traffic(_reference((5, 3, 7)), 2)
    rule, _ = induce(BOOK, calls)
    assert rule.check[0].find and rule.check[0].in_ == "NET['hotels']", rule.check
    assert any("nights" in (s.fail or "") and "rooms" in (s.fail or "") for s in rule.check), rule.check
    other = _reference((2, 9, 9))  # another world: the limit is the hotel's own, not a number seen
    state = with_reference({"nights": {"h_001": {"2026-09-01": 1}}}, other)
    ask = {"hotel_id": "h_001", "night": "2026-09-01", "rooms": 2}
    full = Observation(BOOK, ask, ToolResult.ok({}), NOW, state, reference=other)
    assert run_on(rule, full)[0] == "business"
    verdict, after = run_on(rule, Observation(BOOK, {**ask, "rooms": 1}, ToolResult.ok({}), NOW, state, reference=other))
    assert verdict == "ok" and after["nights"]["h_001"] == {"2026-09-01": 2}
    fresh = Observation(BOOK, {"hotel_id": "h_002", "night": "2026-10-05", "rooms": 3}, ToolResult.ok({}), NOW, state,
                        reference=other)
    verdict, after = run_on(rule, fresh)
    assert verdict == "ok" and after["nights"]["h_002"] == {"2026-10-05": 3}  # the night asked, counted once
    gone = Observation(BOOK, {"hotel_id": "h_007", "night": "2026-09-01"}, ToolResult.ok({}), NOW, state,
                       reference=other)
    assert run_on(rule, gone)[0] == "not_found"


def test_the_learning_explorer_sends_an_accepted_write_again_until_it_is_refused() -> None:
    explorer = Explorer([BOOK], random.Random(3), rates=Rates(again=1.0), again=random.Random(4))
    tool, first = explorer.next_call()
    explorer.observe(tool, ToolResult.ok({"booking": 1}))
    assert explorer.next_call() == (BOOK, first)
    explorer.observe(tool, ToolResult.ok({"booking": 2}))
    assert explorer.next_call() == (BOOK, first)
    explorer.observe(tool, ToolResult.error("business", "conflict: full"))
    assert explorer._again is None  # refused: the next call is chosen afresh
    plain = Explorer([BOOK], random.Random(3), rates=Rates(again=1.0))  # no rng of its own: never again
    tool, args = plain.next_call()
    plain.observe(tool, ToolResult.ok({"booking": 1}))
    assert plain._again is None


def test_normpath_resolves_dots_in_a_rule_expression() -> None:
    from cworld.engine.rules.expr import Evaluator

    ev = Evaluator({"p": "/scratch/fs/../outside.txt", "q": "/scratch/fs/./docs//a.md"})
    assert ev("normpath(p)") == "/scratch/outside.txt"
    assert ev("normpath(q)") == "/scratch/fs/docs/a.md"


MOVE = ToolSpec.model_validate({
    "server": "fs", "name": "move_file", "description": "move a file or folder (test)",
    "input_schema": {"type": "object", "required": ["source", "destination"],
                     "properties": {"source": {"type": "string"}, "destination": {"type": "string"}}},
    "annotations": {"read_only_hint": False}})


def test_a_path_escaping_the_folder_by_dots_and_a_folder_moved_into_itself_are_refused() -> None:
    root = "/scratch/fs"
    state: dict[str, Any] = {"root": root, "files": {f"f{i}.txt": {"parent": "", "content": str(i)} for i in range(6)},
                             "directories": {"docs": {"parent": ""}}}
    calls = []
    for i in range(6):
        after = copy.deepcopy(state)
        after["files"][f"docs/f{i}.txt"] = after["files"].pop(f"f{i}.txt")
        calls.append(Observation(MOVE, {"source": f"{root}/f{i}.txt", "destination": f"{root}/docs/f{i}.txt"},
                                 ToolResult.ok({}), NOW, state, after))
    for outside in (f"{root}/../x.txt", "/etc/hosts", f"{root}/docs/../../y.txt"):
        calls.append(Observation(MOVE, {"source": outside, "destination": f"{root}/z.txt"},
                                 ToolResult.error("business", "Access denied - path outside allowed directories"), NOW,
                                 state, copy.deepcopy(state)))
    for folder in ("docs", "docs", "docs"):
        calls.append(Observation(MOVE, {"source": f"{root}/{folder}", "destination": f"{root}/{folder}/sub"},
                                 ToolResult.error("invalid_args", "EINVAL: invalid argument, rename"), NOW, state,
                                 copy.deepcopy(state)))
    rule, _ = induce(MOVE, calls)
    fresh = {"root": root, "files": {"a.txt": {"parent": "", "content": "a"}}, "directories": {"box": {"parent": ""}}}

    def verdict(source: str, destination: str) -> str:
        return run_on(rule, Observation(MOVE, {"source": source, "destination": destination}, ToolResult.ok({}),
                                        NOW, fresh))[0]

    assert verdict(f"{root}/box/../../etc.txt", f"{root}/b.txt") == "business", rule.check
    assert verdict(f"{root}/box", f"{root}/box/inner") == "invalid_args", rule.check
    assert verdict(f"{root}/a.txt", f"{root}/box/a.txt") == "ok", rule.check


def _write(name: str, props: dict[str, Any]) -> ToolSpec:
    return ToolSpec.model_validate({"server": "chat", "name": name, "description": f"{name} (test)",
                                    "input_schema": {"type": "object", "properties": props, "required": list(props)},
                                    "annotations": {"read_only_hint": False}})


def test_the_learning_explorer_logs_in_again_when_its_token_is_refused_and_resends_the_call() -> None:
    login = _write("login", {"handle": {"type": "string"}})
    post = _write("post_message", {"token": {"type": "string"}, "text": {"type": "string"}})
    explorer = Explorer([login, post], random.Random(5), rates=Rates(relogin=True), briefing={"handle": "me"})
    explorer.bank.learn(ToolResult.ok({"token": "tok_old"}))
    tool, args = explorer.next_call()
    while tool is not post:
        explorer.observe(tool, ToolResult.ok({}))
        tool, args = explorer.next_call()
    explorer.observe(post, ToolResult.error("auth", "auth: token is not valid"))
    assert explorer.next_call() == (login, {"handle": "me"})
    explorer.observe(login, ToolResult.ok({"token": "tok_new"}))
    assert explorer.next_call() == (post, {**args, "token": "tok_new"})
    explorer.observe(post, ToolResult.error("auth", "auth: token is not valid"))  # the resent call: no loop
    assert explorer._resend is None


def test_a_folder_moved_moves_its_directory_entry_and_makes_no_file() -> None:
    root = "/scratch/fs"
    calls = []
    for i in range(8):
        state: dict[str, Any] = {"root": root, "files": {f"f{i}.txt": {"parent": "", "content": str(i)}},
                                 "directories": {f"d{i}": {"parent": ""}}}
        after = copy.deepcopy(state)
        if i % 3:  # a file moved
            after["files"][f"g{i}.txt"] = after["files"].pop(f"f{i}.txt")
            args = {"source": f"{root}/f{i}.txt", "destination": f"{root}/g{i}.txt"}
        else:  # a folder moved
            after["directories"][f"e{i}"] = after["directories"].pop(f"d{i}")
            args = {"source": f"{root}/d{i}", "destination": f"{root}/e{i}"}
        calls.append(Observation(MOVE, args, ToolResult.ok({}), NOW, state, after))
    rule, _ = induce(MOVE, calls)
    fresh = {"root": root, "files": {"a.txt": {"parent": "", "content": "a"}}, "directories": {"box": {"parent": ""}}}
    verdict, after = run_on(rule, Observation(MOVE, {"source": f"{root}/box", "destination": f"{root}/crate"},
                                              ToolResult.ok({}), NOW, fresh))
    assert verdict == "ok" and "crate" in after["directories"] and "box" not in after["directories"], rule.do
    assert "crate" not in after["files"], rule.do
    verdict, after = run_on(rule, Observation(MOVE, {"source": f"{root}/a.txt", "destination": f"{root}/b.txt"},
                                              ToolResult.ok({}), NOW, fresh))
    assert after["files"].keys() == {"b.txt"} and after["directories"].keys() == {"box"}, rule.do


def test_a_runs_trajectories_are_read_with_the_reference_data_of_each_episodes_seed() -> None:
    from cworld.data_model import Trajectory
    from cworld.engine.learn.traffic import from_trajectories

    def episode(seed: int, hotel: str, error: bool) -> Trajectory:
        result = ToolResult.error("not_found", f"no hotel '{hotel}'") if error else ToolResult.ok({"ok": True})
        return Trajectory.model_validate({
            "episode_id": f"ep{seed}", "task_id": "t", "agent": "test", "mode": "live", "seed": seed,
            "steps": [{"index": 0, "turn": 0, "tool_call": {"id": "c0", "tool": "stays/book_room",
                                                            "arguments": {"hotel_id": hotel, "night": "2026-09-01"}},
                       "raw_result": result.model_dump()}]})

    references = {1: _reference((4, 6, 5)), 2: _reference((2, 2, 2))}
    traffic = from_trajectories([episode(1, "h_002", False), episode(2, "h_404", True)], "stays", [BOOK],
                                lambda seed: {"nights": {}}, lambda seed: references[seed])
    first, second = traffic.calls
    assert first.reference is references[1] and second.reference is references[2]
    assert first.before is not None and first.before["NET"] is references[1]["NET"]  # shared, never copied
    assert first.before["nights"] == {}


def test_a_random_tokens_digits_and_letters_are_no_form_to_check_but_an_ids_are() -> None:
    from cworld.engine.learn.atoms import _format_atoms

    assert _format_atoms("token", ["tok_00fdd0d578ff9193daca", "tok_399288df156ffb0b7c59"]) == []
    assert any("htl_" in a for a in _format_atoms("hotel_id", ["htl_029", "htl_112"]))
    sha = ["0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"]
    assert _format_atoms("revision", sha)  # a bare hash keeps its form
