"""A world's indexes shared by its sessions (`SandboxWorld`, `framework/index.py`'s `WorldIndexes`): built once,
read by every session of the world, forked copy-on-write by a session that writes, so sessions stay isolated
and answer as a session alone does."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from cworld.controller.backends.sandbox import to_tool_result
from cworld.engine.learn.explorer import Explorer, briefing
from cworld.sandbox.catalog import all_apps, stateful_apps
from cworld.sandbox.framework import SandboxSession, SandboxWorld
from cworld.sandbox.framework.index import SEARCHES_BEFORE_WORDS, CollectionIndex, TextIndex, WorldIndexes
from cworld.sandbox.framework.server import build_server, tool_specs
from cworld.values import matches
from tests.test_sandbox_index import Rows, _kind, _walk, assert_fresh, grown


def frozen(indexes: WorldIndexes) -> dict[tuple[str, str], Any]:
    """Everything the world's indexes hold, as plain values (to see that no session changed them)."""
    out: dict[tuple[str, str], Any] = {}
    for at, core in indexes.cores().items():
        out[at] = (dict(core.place), core._next,
                   {n: copy.deepcopy(f.postings.by_value) for n, f in core.fields.items()},
                   {n: dict(t.texts) for n, t in core.texts.items()},
                   {n: copy.deepcopy(d.postings.by_value) for n, d in core.derived.items()},
                   {n: {g: list(s) for g, s in sort.groups.items()} for n, sort in core.sorts.items()})
    return out


def test_a_write_in_one_session_is_not_seen_by_another() -> None:
    """Two sessions of one world: the one that writes forks the map's indexes; the other still answers from
    the world's, which are unchanged, and a third session started after the write sees the world's start."""
    template = SandboxSession(0, [Rows])
    template.state["rows"] = {"rows": {f"r{i}": {"id": f"r{i}", "kind": "ab"[i % 2], "text": f"word{i % 7}"}
                                       for i in range(40)}}
    world = SandboxWorld(template)
    one, two = world.session(), world.session()
    for session in (one, two):
        assert session.app("rows").keys_where("rows", kind="a") == _walk(world.state["rows"]["rows"], "a")
        assert session.app("rows").ordered("rows", ("text",), having=(_kind, ["a", "b"]))
    core = world.indexes.core("rows", "rows")
    assert core is not None and core.fields and core.sorts, "the sessions read the world's indexes"
    before = frozen(world.indexes)
    assert world.indexes.built_s() > 0

    writer = one.app("rows")
    cp = one.begin_write("rows")
    view = writer.state["rows"]
    view["r0"]["kind"] = "b"
    view["new"] = {"id": "new", "kind": "a", "text": "word1"}
    del view["r1"]
    one.end_write(cp)

    assert writer.keys_where("rows", kind="a") == _walk(one.state["rows"]["rows"], "a")
    assert "new" in writer.keys_where("rows", kind="a") and "r0" not in writer.keys_where("rows", kind="a")
    assert [r["id"] for r in writer.ordered("rows", ("text",), having=(_kind, ["a"]))] == [
        r["id"] for r in sorted((r for r in one.state["rows"]["rows"].values() if r["kind"] == "a"),
                                key=lambda r: r["text"])]
    fresh_kind = writer.ordered("rows", ("text", "id"), reverse=True, kind="a")  # a new index, from the world's
    assert [r["id"] for r in fresh_kind] == [r["id"] for r in sorted(
        (r for r in one.state["rows"]["rows"].values() if r["kind"] == "a"), key=lambda r: (r["text"], r["id"]),
        reverse=True)]
    assert (("kind",), ("text", "id"), True) in core.sorts, "the new index was built as the world's"
    before = frozen(world.indexes)
    reader = two.app("rows")
    assert reader.keys_where("rows", kind="a") == _walk(world.state["rows"]["rows"], "a")
    assert "r1" in reader.keys_where("rows", kind="b") and reader.count("rows", kind="a") == 20
    assert frozen(world.indexes) == before, "a session's write changed the world's indexes"
    assert two.indexes._of[("rows", "rows")].shared is core
    assert one.indexes._of[("rows", "rows")].shared is None
    third = world.session()
    assert third.app("rows").keys_where("rows", kind="a") == _walk(world.state["rows"]["rows"], "a")
    assert_fresh(one.indexes)


def test_a_map_changed_behind_the_journal_is_not_shared() -> None:
    """A session whose map no longer holds the world's records (replaced, or grown outside a call) builds
    its own index rather than read the world's."""
    template = SandboxSession(0, [Rows])
    template.state["rows"] = {"rows": {f"r{i}": {"id": f"r{i}", "kind": "ab"[i % 2]} for i in range(10)}}
    world = SandboxWorld(template)
    session = world.session()
    session.state["rows"]["rows"]["extra"] = {"id": "extra", "kind": "a"}
    assert session.app("rows").keys_where("rows", kind="a")[-1] == "extra"
    assert session.indexes._of[("rows", "rows")].shared is None
    replaced = world.session()
    replaced.state["rows"] = {"rows": {"x": {"id": "x", "kind": "a"}}}
    assert replaced.app("rows").keys_where("rows", kind="a") == ["x"]
    assert not world.indexes.cores() or not any(c.fields for c in world.indexes.cores().values())


@pytest.mark.parametrize("app", [a.name for a in stateful_apps()])
def test_sessions_of_a_world_answer_as_a_session_alone(app: str) -> None:
    """The seeded explorer's calls on a grown world: a session of the world that runs them answers every call
    as a session of its own (same answer, same state); a second session of the world, started after the
    first wrote, answers the same calls the same way; the world's indexes are unchanged by either and equal
    ones built afresh from the world's start."""
    app_type = next(a for a in stateful_apps() if a.name == app)
    template, alone = SandboxSession(5, all_apps()), SandboxSession(5, all_apps())
    for session in (template, alone):
        grown(session, app, 4)
    world = SandboxWorld(template)
    first = world.session()
    explorer = Explorer(tool_specs(app_type), random.Random(11), first.clock.now(), briefing=briefing(first.state[app]))
    answers, calls = [], []
    servers = [build_server(s, app) for s in (first, alone)]
    for _ in range(120):
        tool, arguments = explorer.next_call()
        one, two = (to_tool_result(s.call_tool_sync(tool.name, copy.deepcopy(arguments)), 0.0) for s in servers)
        assert (one.is_error, one.content) == (two.is_error, two.content), f"{tool.name}({arguments})"
        assert first.state[app] == alone.state[app], f"{tool.name}({arguments}) left other states"
        explorer.observe(tool, one)
        answers.append((one.is_error, one.content))
        calls.append((tool.name, arguments))
    assert_fresh(first.indexes)
    before = frozen(world.indexes)
    assert before or app == "clock", "no call used the world's indexes: the test compared nothing"
    second = build_server(world.session(), app)
    for (name, arguments), answer in zip(calls, answers, strict=True):
        got = to_tool_result(second.call_tool_sync(name, copy.deepcopy(arguments)), 0.0)
        assert (got.is_error, got.content) == answer, f"{name}({arguments}) in the second session"
    assert frozen(world.indexes).keys() >= before.keys()
    assert {k: v for k, v in frozen(world.indexes).items() if k in before} == before
    for (owner, name), core in world.indexes.cores().items():
        fresh = CollectionIndex(world.state[owner][name])
        assert core.place == fresh.place
        for names, field in core.fields.items():
            assert field.postings.by_value == fresh.field(names).postings.by_value
        for (grouping, by, reverse), sort in core.sorts.items():
            assert {g: list(s) for g, s in sort.groups.items() if s} == {
                g: list(s) for g, s in fresh.sort(grouping, by, reverse).groups.items() if s}


def test_a_world_text_index_finds_by_words_what_the_scan_finds() -> None:
    """A world's text index, once searched enough, finds a query's records from its distinct words: the same
    keys as the scan of every text, for words inside words, across fields and in unreadable records; a fork
    refiled after writes still agrees, and the world's index it forked from is unchanged."""
    rng = random.Random(4)
    vocabulary = ["london", "on", "monday", "Ünïcode", "o'brien", "a.b@x.com", "long", "don", "mon"]
    raw: dict[str, Any] = {f"m{i}": {"subject": " ".join(rng.sample(vocabulary, 3)),
                                     "from": {"name": rng.choice(vocabulary)}} for i in range(300)}
    raw["odd"] = "not a record"
    fields = ("subject", "from.name")
    world = TextIndex(fields, raw, tokens=True)
    queries = [["on"], ["lon", "mon"], ["unicode"], ["o'b"], ["x.com", "don"], ["zzz"], ["n", "o"]]
    scanned = TextIndex(fields, raw)
    for _ in range(SEARCHES_BEFORE_WORDS // len(queries) + 1):  # by scan, then by words once filed
        for words in queries:
            assert world.candidates(words) == scanned.candidates(words), words
    assert world.words is not None and world.built_s > 0 and scanned.words is None
    before = {w: dict(k) for w, k in world.words.by_value.items()}  # type: ignore[union-attr]
    mine = world.forked()
    changed = dict(raw)
    for n in range(40):
        key = f"m{rng.randrange(320)}"
        if rng.random() < 0.3 and key in changed:
            del changed[key]
            mine.refile(key)
        else:
            changed[key] = {"subject": " ".join(rng.sample(vocabulary, 2)), "from": {"name": f"new{n}"}}
            mine.refile(key, changed[key])
    for words in [*queries, ["new1"]]:
        assert mine.candidates(words) == TextIndex(fields, changed).candidates(words), words
        assert world.candidates(words) == TextIndex(fields, raw).candidates(words), words
    assert {w: dict(k) for w, k in world.words.by_value.items()} == before  # type: ignore[union-attr]


def test_a_forks_searches_count_toward_the_worlds_words() -> None:
    """Sessions fork a map's indexes at their first write, so most searches are a fork's: they count toward
    the world's words too, which the world then files (the fork keeps scanning, and still agrees)."""
    raw = {f"m{i}": {"subject": f"london monday {i % 5}"} for i in range(50)}
    world = TextIndex(("subject",), raw, tokens=True)
    mine = world.forked()
    mine.refile("m0", {"subject": "paris"})
    for _ in range(SEARCHES_BEFORE_WORDS + 1):
        assert mine.candidates(["paris"]) == {"m0"}
    assert world.words is not None and mine.words is None
    assert world.candidates(["paris"]) == set() and len(world.candidates(["lond"])) == 50


def test_a_map_a_write_touched_before_any_look_up_forks_the_worlds_index() -> None:
    """A write call that reads a record by key (a person looked up) touches the map before the session has
    indexed it: the session's first look-up then forks the world's index, refiled at the touched keys,
    instead of building its own; across several calls, adds and deletes it still answers as a walk."""
    template = SandboxSession(0, [Rows])
    template.state["rows"] = {"rows": {f"r{i}": {"id": f"r{i}", "kind": "ab"[i % 2]} for i in range(30)}}
    world = SandboxWorld(template)
    world.session().app("rows").keys_where("rows", kind="a")  # the world's index, built by another session
    session = world.session()
    rows = session.state["rows"]["rows"]
    for step, (read, change) in enumerate([("r1", "r2"), ("r3", None), ("r4", "new")]):
        cp = session.begin_write("rows")
        view = session.app("rows").state["rows"]
        view.get(read)
        if change == "new":
            view["new"] = {"id": "new", "kind": "a"}
            del view["r6"]
        elif change is not None:
            view[change]["kind"] = "a"
        session.end_write(cp)
        assert ("rows", "rows") not in session.indexes._of, f"step {step}: indexed before any look-up"
    assert session.app("rows").keys_where("rows", kind="a") == _walk(rows, "a")
    index = session.indexes._of[("rows", "rows")]
    assert index.origin is world.indexes.core("rows", "rows") and index.shared is None
    assert_fresh(session.indexes)
    assert world.session().app("rows").keys_where("rows", kind="a") == _walk(world.state["rows"]["rows"], "a")


def test_matched_records_are_the_ones_matches_finds() -> None:
    """`SandboxApp.matched` answers a search without testing each hit again when the index is exact (a world's
    words once filed, a session's scan, a fork after writes): the records `cworld.values.matches` finds over
    the fields, dotted ones read inside, in the map's order; with an unreadable record it tests the
    candidates, and inside a write call it reads what the call changed."""
    rng = random.Random(9)
    vocabulary = ["london", "on", "monday", "Ünïcode", "o'brien", "long", "don", "mon"]
    template = SandboxSession(0, [Rows])
    template.state["rows"] = {"rows": {f"r{i}": {"id": f"r{i}", "text": " ".join(rng.sample(vocabulary, 3)),
                                                 "from": {"name": rng.choice(vocabulary)}} for i in range(200)}}
    world = SandboxWorld(template)
    fields = ("text", "from.name")
    queries = ["on", "LON mon", "unicode", "o'b", "don london", "zzz", "n o"]

    def walk(rows: dict[str, Any], query: str) -> list[str]:
        return [k for k, r in rows.items() if type(r) is dict and matches(query, r["text"], r["from"]["name"])]

    reader, writer = world.session().app("rows"), world.session().app("rows")
    for _ in range(SEARCHES_BEFORE_WORDS // len(queries) + 2):  # by scan, then by the world's words
        for query in queries:
            assert [r["id"] for r in reader.matched("rows", query, fields)] == walk(world.state["rows"]["rows"], query)
    cp = writer.session.begin_write("rows")
    writer.state["rows"]["r3"]["text"] = "zzz"
    assert [r["id"] for r in writer.matched("rows", "zzz", fields)] == ["r3"]
    writer.session.end_write(cp)
    rows = writer.session.state["rows"]["rows"]
    for query in [*queries, "zzz"]:
        assert [r["id"] for r in writer.matched("rows", query, fields)] == walk(rows, query), query
    rows["odd"] = "not a record"  # behind the journal: the map is indexed afresh, with a record it cannot read
    assert [r["id"] for r in writer.matched("rows", "on", fields)] == walk(rows, "on")
