"""Goal shapes across the harvested pool (issue 34): at least 8 shapes over 2-4 services each, declared by
what their tools do; the sampler balances use across the pool and caps any tool's share; a small run
gives verifiable tasks of several shapes, each recording its shape; world records are named from the
cards' vocabularies, deterministically, and no device carries a person's name."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import HARVESTED_BATCH

from cworld.data_model import Task, ToolSpec
from cworld.engine import load_cards
from cworld.engine.cards.card import EntityType
from cworld.engine.world.build import generated_world
from cworld.environment import Environment
from cworld.errors import UsageError
from cworld.synth.goal_shapes import FORGIVEN, ShapeSampler, load_nouns, load_shapes
from cworld.synth.offline.action_space import Unit
from cworld.synth.offline.shape_chain import ShapeDrafter, _named, letters_for, ordinary
from cworld.synth.offline.templates import Templates
from cworld.synth.sampling import Candidates

ENV = Environment.resolve()
BOOK = Templates.of(ENV).book("shapes")


def test_at_least_eight_shapes_over_two_to_four_services() -> None:
    shapes = load_shapes(BOOK)
    assert len(shapes) >= 8
    for shape in shapes.values():
        assert 2 <= len(shape.slots) <= 4 and shape.ask
        assert BOOK.variants(f"requests.{shape.name}", **_blank()) and BOOK.variants(f"purposes.{shape.name}")


def _blank() -> dict[str, str]:
    keys = ["svc_a", "svc_b", "svc_tell", "kind_a", "kind_b", "tell_kind", "label_a", "label_b", "rule", "verb",
            "tell_clause", "limit", "field", "value", "svc_yes", "svc_no", "kind_yes", "kind_no", "target_yes",
            "target_no", "svc_c", "kind_c"]
    return {k: "x" for k in keys}


class _Space:
    """A stand-in action space: `n` servers, each with a look, a change and a make unit."""

    def __init__(self, n: int, plays: Callable[[int], bool] = lambda i: True) -> None:
        self.units: dict[str, Unit] = {}
        self.finders: dict[tuple[str, str], list[ToolSpec]] = {}
        for i in range(n):
            server = f"srv{i:03d}"
            for use, name in (("look", "get_item"), ("change", "update_item"), ("remove", "delete_item"),
                              ("make", "create_note"), ("make", "create_item"), ("find", "search_items")):
                tool = ToolSpec(server=server, name=name, category="task_board")
                self.units[tool.id] = Unit(tool, "get", use, "task_board", None if use == "make" else "item",
                                           None if use in ("make", "find") else "item_id", {}, ("title",),
                                           ("text",), (), (), plays=plays(i))  # a search checks its query
            self.finders[(server, "item")] = [ToolSpec(server=server, name="list_items", category="task_board")]

    def by_use(self, use: str) -> list[Unit]:
        return [u for u in self.units.values() if u.use == use]


def test_the_sampler_spreads_use_and_caps_a_tools_share() -> None:
    # the stand-in has no dates (schedule) and one card (sync copies into a service of another, a brief
    # gathers from services of three, a form is filled in the browser with what a commerce service holds)
    shapes = {k: v for k, v in load_shapes(BOOK).items() if k not in ("schedule", "sync", "brief", "form")}
    sampler = ShapeSampler(_Space(60), shapes, n_tasks=200, nouns=load_nouns(BOOK))  # type: ignore[arg-type]
    rng = random.Random(5)
    drawn = [sampler.sample(rng)[1] for _ in range(200)]
    assert max(sampler.drawn.values()) <= sampler.cap == 6
    assert len({d.shape.name for d in drawn}) == len(shapes)
    for d in drawn:
        servers = {u.server for u in d.units.values()}
        assert len(servers) >= 2 or any(s.same for s in d.shape.slots)


def test_a_unit_whose_rule_checks_something_is_drawn_before_one_that_does_not() -> None:
    """Of fitting units equally fresh, one that plays a part (the world holds the agent to its rule) is drawn
    first: on a space whose odd servers' rules check nothing, the first draws use even servers only."""
    shapes = {k: v for k, v in load_shapes(BOOK).items() if k not in ("schedule", "sync", "brief")}
    sampler = ShapeSampler(_Space(40, plays=lambda i: i % 2 == 0), shapes, n_tasks=200,  # type: ignore[arg-type]
                           nouns=load_nouns(BOOK))
    rng = random.Random(3)
    drawn = [sampler.sample(rng)[1] for _ in range(5)]
    units = [u for d in drawn for u in d.units.values()]
    assert units and all(u.plays for u in units)


def test_a_find_is_drawn_with_a_look_that_opens_what_it_found() -> None:
    """A source slot filled by a find (a search) takes a look of the same kind on its server, so the plan
    opens the record it found (a reader role beside the finder); the task's metadata records it."""
    from cworld.synth.goal_shapes import describe

    shapes = {k: v for k, v in load_shapes(BOOK).items() if k == "migrate"}
    sampler = ShapeSampler(_Space(10), shapes, n_tasks=1000, nouns=load_nouns(BOOK))  # type: ignore[arg-type]
    rng = random.Random(4)
    drawn = [sampler.sample(rng)[1] for _ in range(10)]
    finds = [d for d in drawn if d.units["source"].use == "find"]
    assert finds and all(d.looks["source"].id == f"{d.units['source'].server}/get_item" for d in finds)
    assert all(d.looks["source"].id in d.tools() and describe(d)["opens"] == {"source": d.looks["source"].id}
               for d in finds)
    assert not any(d.looks for d in drawn if d.units["source"].use == "look")


def test_the_sampler_tries_every_fitting_tool_before_any_twice() -> None:
    """Coverage: of the tools that fit a slot the least tried is drawn, so over a run the draws spread over
    the whole pool instead of a few random picks; a tool whose draw failed waits behind the untried ones,
    gets a second try before a used tool is drawn again, and failing twice drifts behind the others."""
    shapes = {k: v for k, v in load_shapes(BOOK).items() if k == "migrate"}
    sampler = ShapeSampler(_Space(30), shapes, n_tasks=1000, nouns=load_nouns(BOOK))  # type: ignore[arg-type]
    rng = random.Random(3)
    for _ in range(45):
        sampler.settle(sampler.sample(rng)[1], accepted=True)
    sources = [u.id for u in sampler.space.units.values() if u.use in ("look", "find")]
    assert max(sampler.tried[t] for t in sources) - min(sampler.tried[t] for t in sources) <= 1
    _, drawn = sampler.sample(rng)
    sampler.settle(drawn, accepted=False)
    failed = drawn.units["source"].id
    while any(not sampler.tried[t] for t in sources):
        drawn = sampler.sample(rng)[1]
        assert drawn.units["source"].id != failed
        sampler.settle(drawn, accepted=True)
    for _ in range(FORGIVEN):
        drawn = sampler.sample(rng)[1]
        assert drawn.units["source"].id == failed
        sampler.settle(drawn, accepted=False)
    for _ in range(len(sources) - 1):
        drawn = sampler.sample(rng)[1]
        assert drawn.units["source"].id != failed
        sampler.settle(drawn, accepted=True)


def test_a_deciding_slot_takes_only_records_that_hold_what_it_decides_on() -> None:
    """A triage needs a field to rank by, a report one to group by: the sampler tries the composer's own test
    (`shape_compose.decides`) on the world's records of the unit's kind, so no draw is spent on a queue with
    nothing to rank; a kind held only by name is never such a slot's."""
    from cworld.synth.offline.shape_compose import decides

    ranked = [{"name": f"Ticket {i}", "priority": i} for i in range(1, 5)]
    assert decides("triage", ranked) and not decides("triage", [{"name": f"Ticket {i}"} for i in range(4)])
    assert decides("report", [{"name": f"Ticket {i}", "status": "open" if i % 2 else "done"} for i in range(4)])
    assert not decides("report", ranked) and decides("migrate", [])
    space = _Space(6)
    bare = {"srv000", "srv001", "srv002"}
    space.records = lambda server, kind: [{"name": "A b"}] if server in bare else ranked  # type: ignore[attr-defined]
    shapes = {k: v for k, v in load_shapes(BOOK).items() if k == "triage"}
    sampler = ShapeSampler(space, shapes, n_tasks=100, nouns=load_nouns(BOOK), decides=decides)  # type: ignore[arg-type]
    rng = random.Random(1)
    queues = {sampler.sample(rng)[1].units["queue"].server for _ in range(8)}  # 3 open queues, 3 draws each
    assert queues and not queues & bare
    thin = next(u for u in space.by_use("change") if u.server == "srv005")
    assert not sampler._holds("triage", replace(thin, thin=True))


def test_a_sync_copies_a_record_into_a_service_that_makes_its_kind() -> None:
    """`sync` copies a record as the same kind (an item into an item), never into another kind (a note), and
    into a service of another card (two task boards are both "our task board" to the person)."""
    shapes = {k: v for k, v in load_shapes(BOOK).items() if k == "sync"}
    space = _Space(10)
    for key, unit in list(space.units.items()):
        if unit.server >= "srv005":
            space.units[key] = replace(unit, card="documents")
    sampler = ShapeSampler(space, shapes, n_tasks=100, nouns=load_nouns(BOOK))  # type: ignore[arg-type]
    rng = random.Random(2)
    for _ in range(10):
        drawn = sampler.sample(rng)[1]
        assert drawn.units["copy"].tool.name == "create_item"
        assert drawn.units["copy"].card != drawn.units["source"].card
    alone = ShapeSampler(_Space(10), shapes, n_tasks=100, nouns=load_nouns(BOOK))  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        alone.sample(rng)


def test_a_brief_reads_two_services_of_other_cards_and_writes_in_a_third() -> None:
    """`brief` draws two sources and a note, each on a server and a card of its own (two task boards are both
    "our task board": the request could not say which); with one card only, it draws nothing."""
    shapes = {k: v for k, v in load_shapes(BOOK).items() if k == "brief"}
    space = _Space(12)
    for key, unit in list(space.units.items()):
        card = ("task_board", "documents", "crm")[int(unit.server[3:]) % 3]
        space.units[key] = replace(unit, card=card)
    sampler = ShapeSampler(space, shapes, n_tasks=100, nouns=load_nouns(BOOK))  # type: ignore[arg-type]
    rng = random.Random(6)
    for _ in range(10):
        drawn = sampler.sample(rng)[1]
        assert [s.name for s in drawn.shape.slots] == ["source", "other", "note"]
        assert len({u.card for u in drawn.units.values()}) == 3 == len({u.server for u in drawn.units.values()})
        assert drawn.units["note"].use == "make" and {drawn.units[s].use for s in ("source", "other")} <= {"look", "find"}
    alone = ShapeSampler(_Space(10), shapes, n_tasks=100, nouns=load_nouns(BOOK))  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        alone.sample(rng)


def test_a_sample_is_the_same_for_a_seed() -> None:
    shapes = {k: v for k, v in load_shapes(BOOK).items() if k != "schedule"}

    def run() -> list[Candidates]:
        sampler = ShapeSampler(_Space(20), shapes, n_tasks=50, nouns=load_nouns(BOOK))  # type: ignore[arg-type]
        rng = random.Random(9)
        return [sampler.sample(rng)[0] for _ in range(20)]

    assert run() == run()


def test_the_sampler_chooses_finders_by_the_id_kind_rule() -> None:
    """A finder whose name lists another kind (`list_time_cards` for a `card_id`) is passed over, as the
    id_kind check would refuse the draft; so is one the probe refused (its answer held no name); with only
    such finders, a slot that needs one takes another unit."""
    space = _Space(4)
    for (server, _), found in space.finders.items():
        found[:] = [ToolSpec(server=server, name="list_time_items", category="task_board"), *found]
    sampler = ShapeSampler(space, load_shapes(BOOK), n_tasks=50, nouns=load_nouns(BOOK))  # type: ignore[arg-type]
    change = next(u for u in space.by_use("change") if u.server == "srv000")
    for _ in range(5):  # the wrong one is tried least often, so only the rule keeps it out
        finder = sampler._finder(change, set())
        assert finder is not None and finder.name == "list_items"
        sampler.tried[finder.id] += 1
    assert sampler._finder(change, {"srv000/list_items"}) is None  # refused by the probe: never taken again
    space.finders[("srv000", "item")] = space.finders[("srv000", "item")][:1]
    assert sampler._finder(change, set()) is None


def test_a_failure_the_probe_blames_on_one_tool_is_not_held_against_the_others() -> None:
    """A draw rejected because the probe refused one of its tools (a search that missed) gives the other
    tools their try back: they are as untried as before, and only the refused one counts a failure."""
    shapes = {k: v for k, v in load_shapes(BOOK).items() if k == "migrate"}
    sampler = ShapeSampler(_Space(6), shapes, n_tasks=1000, nouns=load_nouns(BOOK))  # type: ignore[arg-type]
    rng = random.Random(8)
    drawn = sampler.sample(rng)[1]
    tools = drawn.tools()
    culprit, others = tools[-1], tools[:-1]
    sampler.settle(drawn, accepted=False, refused={culprit})
    assert sampler.tried[culprit] == 1 and all(sampler.tried[t] == 0 for t in others)
    drawn = sampler.sample(rng)[1]
    sampler.settle(drawn, accepted=False)  # no tool refused: the failure is every tool's
    assert all(sampler.tried[t] == 1 for t in drawn.tools())


def test_a_server_no_task_reaches_yet_comes_first_and_its_tool_gets_a_second_try() -> None:
    """Servers with few fitting tools are reached: among untried tools one on a server no accepted task uses
    comes first, and a tool that failed there is tried again before the untried tools of reached servers."""
    shapes = {k: v for k, v in load_shapes(BOOK).items() if k == "migrate"}
    sampler = ShapeSampler(_Space(6), shapes, n_tasks=1000, nouns=load_nouns(BOOK))  # type: ignore[arg-type]
    sampler.reached = {"srv000", "srv001", "srv002", "srv003"}
    rng = random.Random(8)
    drawn = sampler.sample(rng)[1]
    assert drawn.units["source"].server in ("srv004", "srv005")
    sampler.settle(drawn, accepted=False)
    failed = drawn.units["source"]
    sampler.reached |= {"srv004", "srv005"} - {failed.server}
    for other in [u for u in sampler.space.units.values() if u.server == failed.server and u.id != failed.id]:
        sampler.tried[other.id] = FORGIVEN + 1  # its server's other tools failed more often than is forgiven
    again = sampler.sample(rng)[1]
    assert again.units["source"].id == failed.id
    sampler.settle(again, accepted=False)
    assert sampler._failed(failed) == 2 - FORGIVEN
    sampler.reached.add(failed.server)
    assert sampler._failed(failed) == 2 - FORGIVEN  # no accepted task uses it yet: its failures stay forgiven
    sampler.tried[failed.id] += 1
    sampler.kept[failed.id] += 1  # an accepted task used it: every failure counts
    assert sampler._failed(failed) == 2


def test_a_search_is_never_a_finder() -> None:
    """A plan picks a record by name only from a search that asked for that name (search_finds), so a search
    read (`search_items`) is never the listing a slot's record is found in, even when it is the least tried."""
    space = _Space(3)
    for (server, _), found in space.finders.items():
        found.insert(0, ToolSpec(server=server, name="search_items", category="task_board"))
    sampler = ShapeSampler(space, load_shapes(BOOK), n_tasks=50, nouns=load_nouns(BOOK))  # type: ignore[arg-type]
    change = next(u for u in space.by_use("change") if u.server == "srv000")
    assert [t.name for t in sampler.finders_for(change)] == ["list_items"]
    sampler.tried["srv000/list_items"] += 3
    finder = sampler._finder(change, set())
    assert finder is not None and finder.name == "list_items"


@pytest.fixture(scope="module")
def tasks(harvested_batch) -> list[Task]:
    """The worker's harvested batch (conftest `harvested_batch`)."""
    return harvested_batch[1]


def test_a_run_gives_verifiable_tasks_of_several_shapes(tasks: list[Task]) -> None:
    assert len(tasks) == HARVESTED_BATCH["n"]
    assert len({t.metadata["shape"] for t in tasks}) >= 3
    for task in tasks:
        assert task.verifiable and task.ground_truth, task.id
        assert task.metadata["shape"] in load_shapes(BOOK)
        assert len({s.tool.split("/")[0] for s in task.gold_plan}) >= 2


def test_a_report_leaves_the_count_to_the_agent() -> None:
    """A person who asks how many does not dictate the number: the request says N for it (the plan's text
    keeps it, so the end state checks it); any other dictated text is said as it is."""
    drafter = ShapeDrafter.__new__(ShapeDrafter)
    drafter.book = BOOK
    step = SimpleNamespace(links={"name": "Project count: ACTIVE", "content": "12 project record(s) are active."})
    unit = SimpleNamespace(labels=("name",), texts=("content",))
    work = SimpleNamespace(probe=SimpleNamespace(results={}), worked_out=[("12", "N", "the number")], said=[])
    drafter._dictate(step, unit, work)  # type: ignore[arg-type]
    assert work.said == ['titled "Project count: ACTIVE"', 'saying "N project record(s) are active.", with N the number']
    work = SimpleNamespace(probe=SimpleNamespace(results={}), worked_out=[], said=[])
    drafter._dictate(step, unit, work)  # type: ignore[arg-type]
    assert work.said[1] == 'saying "12 project record(s) are active."'


def test_what_a_rule_picks_or_a_condition_reads_is_never_dictated() -> None:
    """Triage and cleanup tell people what the rule picked, a conditional's note says what it read: the
    request says a letter for each (the plan keeps the value), so it never gives away the answer."""
    said, meanings = letters_for("Triage: Q3 budget review was picked (the one with the highest priority).",
                                 [("Q3 budget review", "X", "the name of the one the rule picks")])
    assert said == "Triage: X was picked (the one with the highest priority)."
    assert meanings == ["X the name of the one the rule picks"]
    removed = [("Old lead", "X", "the names of what the rule picks"), ("Stale lead", "Y", "the names of what the rule picks")]
    assert letters_for("Removed from our CRM: Old lead, Stale lead.", removed) == (
        "Removed from our CRM: X, Y.", ["X, Y the names of what the rule picks"])
    assert letters_for("its status is open (reopened twice)", [("open", "V", "the status you find")])[0] == \
        "its status is V (reopened twice)"
    assert letters_for("nothing to hide", [("open", "V", "the status you find")]) == ("nothing to hide", [])


def test_world_names_come_from_the_vocabulary() -> None:
    cards = load_cards(ENV.category_cards)
    events = generated_world("x", cards["calendar"], 3, size=30).state["events"]
    words = cards["calendar"].entities[0].vocabulary
    assert words and all(any(_matches(r["title"], w) for w in words) for r in events.values())
    again = generated_world("x", cards["calendar"], 3, size=30).state["events"]
    assert events == again
    devices = generated_world("y", cards["devices"], 3, size=30)
    names = [r["name"] for coll in devices.state.values() for r in coll.values() if "name" in r]
    people = {p.split()[0] for p in ("Maria Ward",)}
    assert names and not any(n.split()[0] in people for n in names)
    assert all(any(_matches(n, w) for w in cards["devices"].entities[0].vocabulary) for n in names[:10])


def _matches(name: str, template: str) -> bool:
    head = template.split("{")[0].strip()
    return name.startswith(head) if head else True


def test_a_vocabulary_with_an_unknown_placeholder_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown placeholders"):
        EntityType(name="event", id_prefix="evt", fields={"title": "title"}, vocabulary=["Meet {boss}"])
    assert EntityType(name="event", id_prefix="evt", fields={"title": "title"}, vocabulary=["Q{quarter} review"])


def test_the_shared_vocabulary_file_is_valid() -> None:
    from cworld.engine.cards.card import shared_vocabulary

    words = shared_vocabulary(Path(ENV.category_cards) / "_vocabulary.yaml")
    assert {"event", "card", "device", "room", "channel", "invoice", "service"} <= set(words)


def test_a_record_another_argument_names_is_found_by_listing_it() -> None:
    """A note made in a list names the list: the draw takes the server's list read of lists for that argument
    (`Drawn.scopes`), so the plan finds the list the request names instead of knowing its id."""
    space = _Space(4)
    for key, unit in list(space.units.items()):
        if unit.tool.name == "create_note":
            space.units[key] = replace(unit, refs={"list_id": "list"})
        space.finders[(unit.server, "list")] = [ToolSpec(server=unit.server, name="list_lists", category="task_board")]
    shapes = {k: v for k, v in load_shapes(BOOK).items() if k == "migrate"}
    sampler = ShapeSampler(space, shapes, n_tasks=100, nouns=load_nouns(BOOK))  # type: ignore[arg-type]
    rng = random.Random(4)
    notes = [d for d in (sampler.sample(rng)[1] for _ in range(12)) if d.units["copy"].tool.name == "create_note"]
    assert notes
    for drawn in notes:
        scope = drawn.scopes["copy"]["list_id"]
        assert scope.name == "list_lists" and scope.server == drawn.units["copy"].server
        assert drawn.tools().index(scope.id) < drawn.tools().index(drawn.units["copy"].id)


def test_a_detail_shown_by_a_list_is_stated_not_read_from_the_list_as_a_record() -> None:
    from cworld.synth.offline.shape_compose import _shown

    work = SimpleNamespace(slot_steps={"source": ["s1"]})
    record = {"name": "orders", "row_count": 12}
    # the find's answer is a list (`[{...}, ...]`): its record is named by a selector, never `s1.row_count`
    assert _shown(work, "source", record, ("row_count", "12"), "{{s1[name=orders].name}}") == "12"  # type: ignore[arg-type]
    assert _shown(work, "source", record, ("row_count", "12"), "{{s1.items[name=orders].name}}") == "12"  # type: ignore[arg-type]
    # a look whose answer does not repeat the name: its detail is read from its answer
    assert _shown(work, "source", record, ("row_count", "12"), "{{s0[name=orders].name}}") == "{{s1.row_count}}"  # type: ignore[arg-type]


def test_a_look_that_answers_its_record_in_a_list_is_read_by_the_records_name() -> None:
    from cworld.synth.offline.shape_chain import answer_ref

    step = SimpleNamespace(plan=SimpleNamespace(id="s2"))
    answer = [{"app_id": "app_0016", "name": "Puducherry app"}]  # instantdb's get-schema
    assert answer_ref(step, answer, "Puducherry app", "X") == "{{s2[name=Puducherry app].name}}"  # type: ignore[arg-type]
    assert answer_ref(step, answer, "Other app", "X") == "X"  # type: ignore[arg-type]


def test_a_page_fetched_as_text_is_quoted_whole_and_an_empty_template_is_not() -> None:
    from cworld.synth.offline.goal_chain import Named
    from cworld.synth.offline.shape_compose import _fact

    work = SimpleNamespace(slot_steps={"source": ["s2"]})
    page = Named("page", "Getting started", "title", "https://northwind.test/")
    text = "Contents of https://northwind.test/:\n# Northwind\n\nLogistics for growing companies."
    assert _fact(work, "source", text, page, "'Getting started'") == " (it reads: {{s2}})"  # type: ignore[arg-type]
    assert _fact(work, "source", "Title: \nDescription: \nURL: ", page, "'Getting started'") == ""  # type: ignore[arg-type]
    assert _fact(work, "source", "x " * 300 + text, page, "'Getting started'") == ""  # type: ignore[arg-type]


def test_a_record_picked_by_chance_is_one_a_person_would_act_on() -> None:
    """A cancelled order is not cancelled again, nor a locked document read: a record picked by chance is in an
    ordinary state when the listing holds one (the probe refused such tools for the record drawn, not for
    what they do); with none, any is picked, so a queue of closed records still gives a task."""
    items = [{"name": "A", "status": "cancelled"}, {"name": "B", "locked": True}, {"name": "C", "status": "open"},
             {"name": "D", "trashed": True}]
    assert ordinary(items) == [items[2]]
    assert ordinary([("k1", items[0]), ("k3", items[2])]) == [("k3", items[2])]
    assert ordinary(items[:2]) == items[:2]


def test_a_search_under_a_parent_is_made_under_the_searched_records_own_parent() -> None:
    """`search_app_tags(organizationId, query)`: the request names a tag and the organization it is in, not
    an organization some other tag is in (the search missed it, and the tool was refused for good)."""
    from cworld.data_model import PlanStep
    from cworld.engine.world.base import ServerWorld
    from cworld.synth.offline.goal_chain import Step

    orgs = {f"org_{i}": {"id": f"org_{i}", "name": f"Team {name}"} for i, name in enumerate("ABCDEFGH")}
    tags = {f"tag_{i}": {"id": f"tag_{i}", "name": f"Tag {name}", "organization_id": f"org_{i % 8}"}
            for i, name in enumerate("PQRSTUVW")}
    world = ServerWorld("s", {"organizations": orgs, "tags": tags}, kinds={"organization": "organizations", "tag": "tags"})
    spec = ToolSpec(server="s", name="search_app_tags", input_schema={"type": "object", "properties": {
        "organizationId": {"type": "string"}, "query": {"type": "string"}}})
    unit = SimpleNamespace(refs={"organizationId": "organization"}, kind="tag", server="s", queries=("query",),
                           tool=spec, id=spec.id, use="find", plain=(), by_name={}, fixed={})

    def run(step: Step) -> dict[str, Any]:  # the service: the organization's tags whose name is the query
        args = step.plan.arguments
        return {"items": [t for t in tags.values() if t["organization_id"] == args["organizationId"]
                          and t["name"] == args["query"]]}

    drafter = ShapeDrafter.__new__(ShapeDrafter)
    drafter.engine = SimpleNamespace(world=lambda seed: SimpleNamespace(server=lambda name: world))
    drafter.book, drafter.refused = BOOK, set()
    for seed in range(8):
        probe = SimpleNamespace(new_step=lambda t: Step(PlanStep(id="s1", tool=t.id, arguments={}), t, None), run=run)
        work = SimpleNamespace(seed=0, rng=random.Random(seed), probe=probe, named=[], said=[], slot_steps={},
                               drawn=SimpleNamespace(scopes={}, units={"source": unit}, looks={}),
                               unit=lambda slot: unit)
        found, record = drafter.search(work, "source")  # type: ignore[arg-type]
        assert record["name"] == found.label and not drafter.refused



def test_a_listings_required_filter_takes_a_value_its_records_hold() -> None:
    """`listTestIds(buildId, status)`: the status is one most tests hold, not a member of the enum drawn at
    random that no record has (the list would hold nothing to pick, and the tool was refused for good)."""
    from cworld.data_model import PlanStep
    from cworld.engine.world.base import ServerWorld
    from cworld.synth.offline.goal_chain import Step

    tests = {f"t{i}": {"id": f"t{i}", "name": f"Test {i}", "status": "failed" if i % 3 else "passed"} for i in range(9)}
    world = ServerWorld("s", {"tests": tests}, kinds={"test": "tests"})
    spec = ToolSpec(server="s", name="listTestIds", input_schema={"type": "object", "required": ["buildId", "status"],
        "properties": {"buildId": {"type": "string"}, "status": {"type": "string", "enum": ["skipped", "passed", "failed"]}}})
    drafter = ShapeDrafter.__new__(ShapeDrafter)
    drafter.engine = SimpleNamespace(world=lambda seed: SimpleNamespace(server=lambda name: world))
    step = Step(PlanStep(id="s1", tool=spec.id, arguments={"buildId": "b1"}), spec, None)
    drafter._held_values(SimpleNamespace(seed=0), step, spec, SimpleNamespace(server="s", kind="test"))  # type: ignore[arg-type]
    assert step.plan.arguments == {"buildId": "b1", "status": "failed"}


def test_a_record_found_by_its_name_is_passed_as_the_name_its_step_shows() -> None:
    """`list-collections(database)` finds the database by its name: the plan takes the name from the listing that
    found it (a link, so that listing feeds the step), and a record the request names outright is its name."""
    from cworld.synth.offline.goal_chain import Named
    from cworld.synth.offline.shape_chain import _link

    listed = Named("database", "shop", "name", "database_0001", step="s1", path="items")
    step = SimpleNamespace(links={}, literals={})
    _link(step, "database", listed, "name")
    assert step.links["database"] == listed.ref("name") == "{{s1.items[name=shop].name}}"
    said = Named("database", "shop", "name", "database_0001")
    _link(step, "db", said, "name")
    _link(step, "db_id", said)
    assert step.literals == {"db": "shop", "db_id": "database_0001"}


def test_a_listed_record_is_passed_on_by_its_key_in_any_style() -> None:
    """`list-connections` shows `connectionId`: a later `count(connectionId)` gets the key, never the name
    (the service would look up 'Tudela connection' as a connection id)."""
    record = {"connectionId": "connection_0035", "name": "Tudela connection", "state": "connected"}
    named = _named("connection", record, "s1", "connections", "mongo")
    assert named.key == "connection_0035" and named.ref().endswith(".connectionId}}")
