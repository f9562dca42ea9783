"""Worked examples for the datetime and graph servers, through the MCP adapter: calendar facts that can be
checked on any calendar (Thanksgiving, Easter, ISO weeks, DST offsets) and graphs small enough to solve by
hand."""

from __future__ import annotations

import pytest
from stateless_calls import fails, ok
from stateless_calls import stateless_server as _server


@pytest.fixture(scope="module")
def dt():
    return _server("datetime")


@pytest.fixture(scope="module")
def graph():
    return _server("graph")


def edges(*triples: tuple) -> list[dict]:
    return [{"source": a, "target": b, "weight": w} for a, b, w in triples]


# --- datetime ------------------------------------------------------------------------------------------
def test_parse_and_format(dt):
    assert ok(dt, "parse_datetime", text="March 5, 2026 2:30 PM")["iso"] == "2026-03-05T14:30:00"
    assert ok(dt, "parse_datetime", text="05/03/2026", day_first=True)["date"] == "2026-03-05"
    assert ok(dt, "parse_datetime", text="05/03/2026")["date"] == "2026-05-03"
    zulu = ok(dt, "parse_datetime", text="2026-03-05T14:30Z")
    assert zulu["has_timezone"] and zulu["utc_offset"] == "+00:00" and zulu["weekday"] == "Thursday"
    assert "cannot read" in fails(dt, "parse_datetime", text="next blursday")
    assert ok(dt, "format_datetime", moment="2026-03-05T14:30", pattern="%A %d %B %Y, %H:%M")["text"] == (
        "Thursday 05 March 2026, 14:30"
    )
    assert "ISO 8601" in fails(dt, "format_datetime", moment="5 March 2026", pattern="%Y")


def test_arithmetic(dt):
    assert ok(dt, "add_duration", moment="2024-01-31", months=1)["date"] == "2024-02-29"
    assert ok(dt, "add_duration", moment="2026-03-05T23:00", hours=2)["iso"] == "2026-03-06T01:00:00"
    assert ok(dt, "add_duration", moment="2024-02-29", years=1)["date"] == "2025-02-28"
    assert "outside years" in fails(dt, "add_duration", moment="9999-12-31", days=1)
    diff = ok(dt, "datetime_difference", start="2024-01-15T10:00", end="2025-03-20T12:30")
    assert (diff["years"], diff["months"], diff["days"], diff["hours"], diff["minutes"]) == (1, 2, 5, 2, 30)
    assert diff["total_seconds"] == 37_161_000.0
    back = ok(dt, "datetime_difference", start="2026-01-02", end="2026-01-01")
    assert back["total_days"] == -1.0 and back["text"] == "minus 1 day"
    assert "offset" in fails(dt, "datetime_difference", start="2026-01-01T00:00Z", end="2026-01-02")


def test_calendar_facts(dt):
    info = ok(dt, "date_info", day="2027-01-01")
    assert (info["weekday"], info["iso_year"], info["iso_week"]) == ("Friday", 2026, 53)
    assert ok(dt, "date_info", day="2024-02-10")["days_in_month"] == 29
    assert ok(dt, "iso_week_to_date", iso_year=2026, week=1)["date"] == "2025-12-29"
    assert "no week 53" in fails(dt, "iso_week_to_date", iso_year=2025, week=53)
    assert ok(dt, "nth_weekday_of_month", year=2026, month=11, weekday="thu", n=4)["date"] == "2026-11-26"
    assert ok(dt, "nth_weekday_of_month", year=2026, month=5, weekday="mon", n=-1)["date"] == "2026-05-25"
    assert "only 4" in fails(dt, "nth_weekday_of_month", year=2026, month=2, weekday="mon", n=5)
    assert ok(dt, "easter_date", year=2026)["date"] == "2026-04-05"
    assert ok(dt, "easter_date", year=2024)["date"] == "2024-03-31"
    assert ok(dt, "easter_date", year=2026, church="orthodox")["date"] == "2026-04-12"
    assert ok(dt, "easter_date", year=2025, church="orthodox")["date"] == "2025-04-20"
    grid = ok(dt, "month_calendar", year=2026, month=2)
    assert grid["weeks"][0] == [0, 0, 0, 0, 0, 0, 1] and grid["weeks"][-1][-1] == 0
    mondays = ok(dt, "list_dates", start="2026-03-01", end="2026-03-31", weekdays=["mon"])["dates"]
    assert mondays == ["2026-03-02", "2026-03-09", "2026-03-16", "2026-03-23", "2026-03-30"]


def test_business_days_and_age(dt):
    assert ok(dt, "business_days_between", start="2026-03-02", end="2026-03-16")["days"] == 10
    assert (
        ok(dt, "business_days_between", start="2026-03-02", end="2026-03-16", holidays=["2026-03-09"])["days"]
        == 9
    )
    assert ok(dt, "business_days_between", start="2026-03-16", end="2026-03-02")["days"] == -10
    assert ok(dt, "add_business_days", start="2026-03-06", days=1)["date"] == "2026-03-09"
    assert ok(dt, "add_business_days", start="2026-03-09", days=-1)["date"] == "2026-03-06"
    assert (
        ok(dt, "add_business_days", start="2026-03-05", days=1, weekend=["fri", "sat"])["date"]
        == "2026-03-08"
    )
    age = ok(dt, "age", birth_date="1990-07-15", on_date="2026-03-05")
    assert (age["years"], age["months"], age["days"], age["next_birthday"]) == (35, 7, 18, "2026-07-15")
    assert "before birth_date" in fails(dt, "age", birth_date="2000-01-01", on_date="1999-01-01")


def test_time_zones_and_unix_time(dt):
    ny = ok(dt, "convert_timezone", moment="2026-07-01T12:00:00Z", to_zone="America/New_York")
    assert ny == {
        "iso": "2026-07-01T08:00:00-04:00",
        "utc_offset": "-04:00",
        "abbreviation": "EDT",
        "is_dst": True,
    }
    paris = ok(dt, "convert_timezone", moment="2026-01-15T09:00", from_zone="Europe/Paris", to_zone="UTC")
    assert paris["iso"] == "2026-01-15T08:00:00+00:00"
    assert ok(dt, "convert_timezone", moment="2026-01-15T09:00", to_zone="+05:30")["iso"] == (
        "2026-01-15T14:30:00+05:30"
    )
    assert "Europe/Paris" in fails(dt, "convert_timezone", moment="2026-01-01", to_zone="Europe/Pariss")
    london = ok(dt, "timezone_info", zone_name="Europe/London", at="2026-07-01T00:00")
    assert (london["utc_offset"], london["abbreviation"]) == ("+01:00", "BST")
    assert ok(dt, "to_unix_timestamp", moment="2000-01-01T00:00:00Z")["seconds"] == 946_684_800
    assert ok(dt, "from_unix_timestamp", seconds=1e9)["iso"] == "2001-09-09T01:46:40+00:00"
    assert "Europe/Paris" in ok(dt, "list_timezones", prefix="europe/")["zones"]


def test_durations_and_cron(dt):
    assert ok(dt, "parse_duration", duration="P1DT2H30M")["total_seconds"] == 95_400
    assert "ISO 8601 duration" in fails(dt, "parse_duration", duration="PT")
    assert ok(dt, "format_duration", seconds=93_784)["text"] == "1d 2h 3m 4s"
    assert ok(dt, "format_duration", seconds=93_784)["iso"] == "P1DT2H3M4S"
    assert ok(dt, "format_duration", seconds=0)["iso"] == "PT0S"
    weekdays = ok(dt, "cron_next_runs", expression="30 9 * * mon-fri", after="2026-03-06T10:00:00", count=3)
    assert weekdays["runs"] == ["2026-03-09T09:30:00", "2026-03-10T09:30:00", "2026-03-11T09:30:00"]
    quarter = ok(dt, "cron_next_runs", expression="*/15 * * * *", after="2026-03-06T10:07:00", count=2)
    assert quarter["runs"] == ["2026-03-06T10:15:00", "2026-03-06T10:30:00"]
    either = ok(dt, "cron_next_runs", expression="0 0 13 * fri", after="2026-01-01T00:00", count=3)
    assert either["runs"] == ["2026-01-02T00:00:00", "2026-01-09T00:00:00", "2026-01-13T00:00:00"]  # Vixie OR
    assert ok(dt, "cron_next_runs", expression="@monthly", after="2026-01-31T12:00", count=1)["runs"] == [
        "2026-02-01T00:00:00"
    ]
    assert "outside 0-59" in fails(dt, "cron_next_runs", expression="60 * * * *", after="2026-01-01T00:00")
    assert "5 fields" in fails(dt, "cron_next_runs", expression="* * *", after="2026-01-01T00:00")
    assert "never fires" in fails(dt, "cron_next_runs", expression="0 0 30 2 *", after="2026-01-01T00:00")


# --- graph ---------------------------------------------------------------------------------------------
ROADS = edges(("A", "B", 4), ("A", "C", 2), ("C", "B", 1), ("B", "D", 5), ("C", "D", 8), ("D", "E", 3))


def test_paths(graph):
    best = ok(graph, "shortest_path", edges=ROADS, source="A", target="E", directed=True)
    assert best == {"found": True, "path": ["A", "C", "B", "D", "E"], "length": 11.0, "hops": 4}
    assert ok(graph, "shortest_path", edges=ROADS, source="A", target="E", weighted=False)["hops"] == 3
    assert ok(graph, "shortest_path", edges=ROADS, source="E", target="A", directed=True)["found"] is False
    assert "'Z' is not in the graph" in fails(graph, "shortest_path", edges=ROADS, source="A", target="Z")
    square = edges(("a", "b", 1), ("a", "c", 1), ("b", "d", 1), ("c", "d", 1))
    assert ok(graph, "all_shortest_paths", edges=square, source="a", target="d")["paths"] == [
        ["a", "b", "d"],
        ["a", "c", "d"],
    ]
    dist = ok(graph, "shortest_path_lengths", edges=ROADS, source="A", directed=True)
    assert dist["distances"] == {"A": 0.0, "B": 3.0, "C": 2.0, "D": 8.0, "E": 11.0}
    negative = edges(("s", "a", 4), ("s", "b", 1), ("b", "a", -2))
    assert ok(graph, "shortest_path", edges=negative, source="s", target="a", directed=True)["length"] == -1.0
    assert "negative-weight cycle" in fails(
        graph, "shortest_path", edges=edges(("x", "y", -1)), source="x", target="y"
    )


def test_structure(graph):
    summary = ok(graph, "graph_summary", edges=ROADS, nodes=["lonely"])
    assert (summary["node_count"], summary["edge_count"], summary["connected"]) == (6, 6, False)
    assert summary["isolated_nodes"] == ["lonely"]
    near = ok(graph, "node_neighbors", edges=ROADS, node="C", directed=True)
    assert (near["successors"], near["predecessors"]) == (["B", "D"], ["A"])
    assert ok(graph, "traverse", edges=ROADS, source="A", directed=True)["nodes"] == ["A", "B", "C", "D", "E"]
    assert ok(graph, "traverse", edges=ROADS, source="A", directed=True, order="depth_first")["nodes"] == [
        "A",
        "B",
        "D",
        "E",
        "C",
    ]
    assert ok(graph, "reachable_nodes", edges=ROADS, node="B", direction="ancestors")["nodes"] == ["A", "C"]
    comps = ok(graph, "connected_components", edges=edges(("a", "b", 1), ("c", "d", 1)), nodes=["z"])
    assert comps == {"components": [["a", "b"], ["c", "d"], ["z"]], "count": 3}
    loop = edges(("a", "b", 1), ("b", "a", 1), ("b", "c", 1))
    assert ok(graph, "connected_components", edges=loop, directed=True, strongly=True)["components"] == [
        ["a", "b"],
        ["c"],
    ]


def test_ordering_and_cycles(graph):
    dressing = edges(("shirt", "tie", 1), ("tie", "jacket", 1), ("pants", "shoes", 1), ("pants", "jacket", 1))
    order = ok(graph, "topological_sort", edges=dressing, nodes=["watch"])["nodes"]
    assert order == ["pants", "shirt", "shoes", "tie", "jacket", "watch"]
    assert "a -> b -> a" in fails(graph, "topological_sort", edges=edges(("a", "b", 1), ("b", "a", 1)))
    assert ok(graph, "find_cycle", edges=edges(("a", "b", 1), ("b", "c", 1), ("c", "a", 1)))["cycle"] == [
        "a",
        "b",
        "c",
    ]
    assert ok(graph, "find_cycle", edges=dressing)["has_cycle"] is False
    project = edges(("start", "a", 3), ("start", "b", 2), ("a", "end", 4), ("b", "end", 6))
    assert ok(graph, "critical_path", edges=project) == {"path": ["start", "b", "end"], "length": 8.0}


def test_trees_flows_and_rankings(graph):
    tree = ok(graph, "minimum_spanning_tree", edges=ROADS)
    assert tree["total_weight"] == 11.0 and len(tree["edges"]) == 4 and tree["is_forest"] is False
    assert ok(graph, "minimum_spanning_tree", edges=ROADS, maximum=True)["total_weight"] == 20.0
    network = edges(("s", "a", 10), ("s", "b", 5), ("a", "b", 15), ("a", "t", 5), ("b", "t", 10))
    flow = ok(graph, "max_flow", edges=network, source="s", sink="t")
    assert flow["value"] == 15.0
    cut = sum(
        e["weight"]
        for e in network
        if e["source"] in flow["source_side"] and e["target"] in flow["sink_side"]
    )
    assert cut == 15.0  # the reported cut really has the max-flow capacity
    assert "same node" in fails(graph, "max_flow", edges=network, source="s", sink="s")
    ring = ok(graph, "pagerank", edges=edges(("a", "b", 1), ("b", "c", 1), ("c", "a", 1)))["ranking"]
    assert [r["score"] for r in ring] == [0.333333] * 3
    star = ok(graph, "degree_centrality", edges=edges(("hub", "x", 1), ("hub", "y", 1), ("hub", "z", 1)))
    assert star["ranking"][0] == {"node": "hub", "score": 1.0}
    path = ok(graph, "betweenness_centrality", edges=edges(("a", "b", 1), ("b", "c", 1)))["ranking"]
    assert path[0] == {"node": "b", "score": 1.0}


def test_partitions_and_weak_points(graph):
    square = edges(("a", "b", 1), ("b", "c", 1), ("c", "d", 1), ("d", "a", 1))
    assert ok(graph, "bipartite_check", edges=square) == {
        "bipartite": True,
        "left": ["a", "c"],
        "right": ["b", "d"],
    }
    triangle = edges(("a", "b", 1), ("b", "c", 1), ("c", "a", 1))
    assert ok(graph, "bipartite_check", edges=triangle)["bipartite"] is False
    coloring = ok(graph, "graph_coloring", edges=triangle)
    assert coloring["color_count"] == 3 and len(set(coloring["colors"].values())) == 3
    weak = ok(graph, "cut_vertices_and_bridges", edges=triangle + edges(("c", "d", 1)))
    assert weak == {"articulation_points": ["c"], "bridges": [["c", "d"]]}
    shape = ok(graph, "diameter_and_center", edges=edges(("a", "b", 1), ("b", "c", 1), ("c", "d", 1)))
    assert shape == {"diameter": 3.0, "radius": 2.0, "center": ["b", "c"], "periphery": ["a", "d"]}
    assert "connected" in fails(graph, "diameter_and_center", edges=edges(("a", "b", 1), ("c", "d", 1)))
