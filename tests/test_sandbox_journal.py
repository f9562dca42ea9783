"""The write-call journal (`framework/journal.py`): a failed write leaves the app's state exactly as it was,
as the whole-state copy it replaced did, and a successful one keeps its changes."""

from __future__ import annotations

import copy
import random

import pytest

from cworld.controller.backends.sandbox import to_tool_result
from cworld.engine.learn.explorer import Explorer, briefing
from cworld.sandbox.catalog import all_apps, stateful_apps
from cworld.sandbox.framework.journal import KEYS_BEFORE_WHOLE, CallJournal
from cworld.sandbox.framework.server import build_server, tool_specs
from cworld.sandbox.framework.session import SandboxSession, plain_copy


def test_undo_puts_back_records_read_by_key_walked_added_and_removed() -> None:
    state = {"rows": {f"r{i}": {"n": i, "tags": [i]} for i in range(KEYS_BEFORE_WHOLE + 5)}, "cart": [1, 2],
             "me": "u1"}
    before = plain_copy(state)
    journal = CallJournal(state)
    view = journal.view
    view["rows"]["r1"]["tags"].append(99)
    del view["rows"]["r2"]
    view["rows"]["new"] = {"n": -1, "tags": []}
    view["cart"].append(3)
    view["me"] = "u2"
    view["extra"] = {}
    for row in view["rows"].values():
        row["n"] += 1
    journal.undo()
    assert state == before


def test_many_reads_by_key_keep_the_whole_collection_once() -> None:
    state = {"rows": {f"r{i}": {"n": i} for i in range(3 * KEYS_BEFORE_WHOLE)}}
    before = plain_copy(state)
    journal = CallJournal(state)
    rows = journal.view["rows"]
    for key in list(rows):
        rows[key]["n"] = -1
    journal.undo()
    assert state == before


@pytest.mark.parametrize("app", [a.name for a in stateful_apps()])
def test_a_failed_write_changes_nothing_and_a_good_one_sticks(app: str) -> None:
    """The seeded explorer's calls through the journal: after every erring call the app's state equals the
    one before it, no call leaves its journal open, and successful writes keep their changes."""
    app_type = next(a for a in stateful_apps() if a.name == app)
    session = SandboxSession(3, all_apps())
    server = build_server(session, app)
    explorer = Explorer(tool_specs(app_type), random.Random(7), session.clock.now(),
                        briefing=briefing(session.state[app]))
    changed = 0
    for _ in range(150):
        tool, arguments = explorer.next_call()
        before = plain_copy(session.state[app])
        result = to_tool_result(server.call_tool_sync(tool.name, copy.deepcopy(arguments)), 0.0)
        explorer.observe(tool, result)
        assert not session.journals, "a call left its journal open"
        if result.is_error:
            assert session.state[app] == before, f"{tool.name} failed but changed the state"
        changed += session.state[app] != before
    assert changed, "no write succeeded: the test did not exercise the journal"
