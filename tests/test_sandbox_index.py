"""The apps' indexes (`framework/index.py`): every look-up answers what walking the collection answers,
through writes, deletes, undone calls and pages, in worlds large enough that the indexes decide."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from cworld.controller.backends.sandbox import to_tool_result
from cworld.engine.learn.explorer import Explorer, briefing
from cworld.sandbox.catalog import all_apps, stateful_apps
from cworld.sandbox.framework import SandboxApp, SandboxSession
from cworld.sandbox.framework.index import BY_KEY, DerivedIndex, FieldIndex, Indexes, SortedIndex, TextIndex
from cworld.sandbox.framework.server import build_server, tool_specs


def grown(session: SandboxSession, app: str, copies: int) -> None:
    """Every `{key: record}` map of the app holds `copies` clones of each record beside it (keys and a
    field naming the key changed, the rest shared), so searches and lists find many."""
    for records in list(session.state[app].values()):
        if not (isinstance(records, dict) and records and all(isinstance(r, dict) for r in records.values())):
            continue
        for key, record in list(records.items()):
            for n in range(copies):
                new = f"{key}-c{n}"
                records[new] = {f: new if v == key else copy.deepcopy(v) for f, v in record.items()}


@pytest.mark.parametrize("app", [a.name for a in stateful_apps()])
def test_indexed_answers_equal_the_walks(app: str) -> None:
    """The seeded explorer's calls on two sessions of one grown world, one with indexes and one walking
    every map: the same answer to every call, the same state after each."""
    app_type = next(a for a in stateful_apps() if a.name == app)
    indexed, walked = SandboxSession(5, all_apps()), SandboxSession(5, all_apps())
    walked.indexes = Indexes(enabled=False)
    for session in (indexed, walked):
        grown(session, app, 4)
    servers = [build_server(s, app) for s in (indexed, walked)]
    explorer = Explorer(tool_specs(app_type), random.Random(11), indexed.clock.now(),
                        briefing=briefing(indexed.state[app]))
    built: set[tuple[str, str]] = set()
    for _ in range(200):
        tool, arguments = explorer.next_call()
        one, two = (to_tool_result(s.call_tool_sync(tool.name, copy.deepcopy(arguments)), 0.0) for s in servers)
        assert (one.is_error, one.content) == (two.is_error, two.content), f"{tool.name}({arguments})"
        assert indexed.state[app] == walked.state[app], f"{tool.name}({arguments}) left other states"
        assert_fresh(indexed.indexes)
        explorer.observe(tool, one)
        built |= set(indexed.indexes._of)
    assert built or app in NO_LOOKUPS, "no call used an index: the test compared nothing"


#: Apps whose tools ask no index yet.
NO_LOOKUPS = {"clock"}


def assert_fresh(indexes: Indexes) -> None:
    """Every index the session keeps equals one built afresh from its map now, and so does the order."""
    for index in indexes._of.values():
        raw = index.raw
        assert index.in_order(set(raw)) == list(raw)
        for names, field in index.fields.items():
            assert field.postings.by_value == FieldIndex(names, raw).postings.by_value
        for names, text in index.texts.items():
            assert text.texts == TextIndex(names, raw).texts
        for of, derived in index.derived.items():
            assert derived.postings.by_value == DerivedIndex(of, raw).postings.by_value
        place = {key: n for n, key in enumerate(raw)}
        for (grouping, by, reverse), sort in index.sorts.items():
            assert {g: [e[-1] for e in s] for g, s in sort.groups.items() if s} == {
                g: [e[-1] for e in s] for g, s in SortedIndex(grouping, by, reverse, raw, place).groups.items() if s}


class Rows(SandboxApp):
    name = "rows"
    description = "rows for the index tests"
    category = "test"


def _kind(row: dict[str, Any]) -> list[str]:
    return [row["kind"]]


def _walk(rows: dict[str, Any], kind: str) -> list[str]:
    return [k for k, r in rows.items() if r.get("kind") == kind]


def test_lookups_follow_writes_deletes_readds_and_undo() -> None:
    session = SandboxSession(0, [Rows])
    rows = session.state["rows"] = {"rows": {f"r{i}": {"id": f"r{i}", "kind": "ab"[i % 2], "text": f"word{i % 7}"}
                                             for i in range(40)}}["rows"]
    session.state["rows"] = {"rows": rows}
    app = session.app("rows")
    rng = random.Random(3)
    for step in range(300):
        cp = session.begin_write("rows")
        view = app.state["rows"]
        key = f"r{rng.randrange(50)}"
        action = rng.choice(["set", "del", "readd", "new", "two"])
        if action == "set" and key in view:
            view[key]["kind"] = rng.choice("abc")
        elif action == "del" and key in view:
            del view[key]
        elif action == "readd" and key in view:
            record = view.pop(key)
            view[key] = record
        elif action == "new":
            view[key] = {"id": key, "kind": rng.choice("abc"), "text": f"word{step}"}
        elif action == "two":  # touched in one order, added in the other
            second = f"s{step}"
            view.get(second)
            view[key] = {"id": key, "kind": "a", "text": "two"}
            view[second] = {"id": second, "kind": "a", "text": "two"}
        during = [r["id"] for r in app.where("rows", kind="a")]
        assert during == _walk(rows, "a")  # the index's hits, only the keys the call touched tested again
        assert app.keys_having("rows", _kind, "a", "c") == [k for k, r in rows.items() if r["kind"] in ("a", "c")]
        assert [r["id"] for r in app.matched("rows", "two", ("text",))] == [k for k, r in rows.items()
                                                                             if "two" in r["text"]]
        if rng.random() < 0.3:
            session.undo_write(cp)
        session.end_write(cp)
        assert [r["id"] for r in app.where("rows", kind="b")] == _walk(rows, "b")
        assert app.count("rows", kind="c") == len(_walk(rows, "c"))
        for reverse in (False, True):  # ties (the same text) keep the map's order, as `sorted` keeps them
            wanted = sorted((r for r in rows.values() if r["kind"] == "a" and "word1" <= r["text"] < "word5"),
                            key=lambda r: r["text"], reverse=reverse)
            ordered = app.ordered("rows", ("text",), reverse=reverse, within=("word1", "word5"), kind="a")
            assert list(ordered[2:7]) == wanted[2:7] and list(ordered) == wanted
            either = sorted((r for r in rows.values() if r["kind"] in ("a", "b")), key=lambda r: r["text"],
                            reverse=reverse)
            merged = app.ordered("rows", ("text",), reverse=reverse, having=(_kind, ["a", "b"]))
            assert list(merged[1:9]) == either[1:9] and len(merged) == len(either)
            assert list(merged) == either  # iterated lazily, as sliced
        assert app.held("rows", _kind) == {r["kind"] for r in rows.values()}
        assert app.count_having("rows", _kind, "b") == len(_walk(rows, "b"))  # read off the sorted index's group
        found = {r["id"] for r in app.matching("rows", "ord1", ("text",))}
        assert found >= {k for k, r in rows.items() if "ord1" in r["text"]}
        assert [r["id"] for r in app.matched("rows", "ORD1", ("text",))] == [k for k, r in rows.items()
                                                                              if "ord1" in r["text"]]


@pytest.mark.parametrize("reverse", [False, True])
def test_sorted_and_field_indexes_read_column_by_column_equal_the_sort(reverse: bool) -> None:
    """Built from columns of values (every record a dict holding the fields) or record by record (one lacks
    a field), a sorted index reads as `sorted` orders the group, ties in the map's order, and a field
    index's buckets hold the records with each value, in the map's order."""
    rng = random.Random(7)
    full = {f"k{rng.randrange(10_000):05d}-{i}": {"g": rng.choice("ab"), "v": rng.randrange(4)} for i in range(300)}
    for raw in (full, {**full, "odd": {"g": "a"}}):
        place = {key: n for n, key in enumerate(raw)}
        by_key = SortedIndex(("g",), ("v", BY_KEY), reverse, raw, place)
        ties = SortedIndex(("g",), ("v",), reverse, raw, place)
        field = FieldIndex(("g",), raw)
        for group in ("a", "b"):
            mine = [k for k in raw if raw[k]["g"] == group]
            assert list(field.postings.by_value[(group,)]) == mine
            if "odd" in mine:  # None does not compare with numbers: the caller sorts this map
                assert "odd" in by_key.unordered and "odd" in ties.unordered
                continue
            for sort, key in ((by_key, lambda k, r=raw: (r[k]["v"], k)), (ties, lambda k, r=raw: r[k]["v"])):
                entries = list(sort.groups[(group,)])
                read = [e[-1] for e in (reversed(entries) if reverse else entries)]
                assert read == sorted(mine, key=key, reverse=reverse)


def test_a_count_reads_a_sorted_index_of_the_same_fields() -> None:
    """With no field index built, a count comes off the sorted index's group of the same fields, and stays
    true through writes and undos."""
    session = SandboxSession(0, [Rows])
    rows = {f"r{i}": {"id": f"r{i}", "kind": "ab"[i % 2], "text": f"word{i % 7}"} for i in range(40)}
    session.state["rows"] = {"rows": rows}
    app = session.app("rows")
    rng = random.Random(5)
    for step in range(60):
        assert len(app.ordered("rows", ("text",), kind="a")) == len(_walk(rows, "a"))
        assert app.count("rows", kind="a") == len(_walk(rows, "a"))
        cp = session.begin_write("rows")
        view = app.state["rows"]
        key = f"r{rng.randrange(50)}"
        view[key] = {"id": key, "kind": rng.choice("ab"), "text": f"word{step}"}
        if rng.random() < 0.3:
            session.undo_write(cp)
        session.end_write(cp)
    assert not session.indexes._of[("rows", "rows")].fields, "the counts read the sorted index"


def test_a_write_call_that_adds_and_reads_on_keeps_the_index() -> None:
    """A write call that adds a record and then reads the map (a new event's clashes) is answered from the
    map's index with the new key as a candidate, not from an index built afresh; the index is refiled
    when the call ends and equals a fresh one."""
    session = SandboxSession(0, [Rows])
    rows = {f"r{i}": {"id": f"r{i}", "kind": "ab"[i % 2], "text": f"word{i % 7}"} for i in range(40)}
    session.state["rows"] = {"rows": rows}
    app = session.app("rows")
    assert app.keys_having("rows", _kind, "a") == _walk(rows, "a")
    index = session.indexes._of[("rows", "rows")]
    for step in range(6):
        cp = session.begin_write("rows")
        view = app.state["rows"]
        view[f"n{step}"] = {"id": f"n{step}", "kind": "a", "text": "new"}
        if step % 2:
            del view[f"r{step}"]
        assert app.keys_having("rows", _kind, "a") == _walk(rows, "a")
        assert session.indexes._of[("rows", "rows")] is index, "rebuilt inside the call"
        session.end_write(cp)
        assert app.keys_having("rows", _kind, "a") == _walk(rows, "a")
    assert_fresh(session.indexes)
