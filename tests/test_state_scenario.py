"""A scenario of a whole seeded state (`synth.scenario.state_scenario`): what the engine-fidelity benchmark
gives the World Engine so that it knows the world its replayed live calls presume."""

from __future__ import annotations

from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework import SandboxSession
from cworld.synth.scenario import collection_records, sandbox_kinds, state_scenario


def test_every_record_of_every_entity_collection_is_an_entity() -> None:
    session = SandboxSession(seed=3, apps=all_apps())
    state, kinds = session.snapshot(), sandbox_kinds()
    scenario = state_scenario(state, kinds, today="2026-04-20")
    handles = {e.handle for e in scenario.entities}
    expected = {
        f"{app}/{kind}/{key}"
        for app, collections in kinds.items()
        for collection, kind in collections.items()
        for key in collection_records(state.get(app, {}), collection)
    }
    assert expected and handles == expected
    assert scenario.today == "2026-04-20"
    email = next(e for e in scenario.entities if e.app == "mail")
    record = collection_records(state["mail"], next(c for c, k in kinds["mail"].items() if k == email.kind))
    assert email.attributes == record[email.id]
    assert all(r.subject in handles and r.object in handles for r in scenario.relations)
    assert scenario.relations, "records that name each other's keys are related"


def test_an_app_the_state_lacks_gives_nothing() -> None:
    assert state_scenario({}, sandbox_kinds()).entities == []
