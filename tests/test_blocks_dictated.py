"""The sandbox blocks dictate every text they write: an agent that reads only the request can write the very
mail, post, note, comment or reminder the end state holds (docs/task-synthesis.md, "What the sandbox blocks
dictate")."""

from __future__ import annotations

import asyncio

import pytest

from cworld.agents.intents import intents_of
from cworld.data_model import Task, read_jsonl
from cworld.environment import Environment, Workspace
from cworld.synth import SynthOptions, prepare, run_prepared
from cworld.synth.offline.blocks.dictated import dictated
from cworld.synth.offline.composer import BlockFailed

#: The tools whose arguments carry a text the person would word, and those arguments.
WRITES = {
    "mail/send_email": ("subject", "body"),
    "mail/create_draft": ("subject", "body"),
    "chat/post_message": ("text",),
    "chat/send_direct_message": ("text",),
    "docs/create_document": ("title", "content"),
    "docs/append_to_document": ("text",),
    "taskboard/add_comment": ("text",),
    "taskboard/create_card": ("title", "description"),
    "taskboard/add_checklist": ("name",),
    "clock/schedule_reminder": ("text",),
    "calendar/create_event": ("title", "description"),
    "finance/create_transfer": ("memo",),
}


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> list[Task]:
    mp = pytest.MonkeyPatch()
    mp.setenv("CWORLD_EMBED_MODEL", "hash")
    workspace = Workspace.resolve(tmp_path_factory.mktemp("ws"))
    out = tmp_path_factory.mktemp("out") / "tasks.jsonl"
    prepared = prepare(Environment.resolve(), workspace, SynthOptions(n=8, seed=5), out=out)
    asyncio.run(run_prepared(prepared))
    mp.undo()
    return read_jsonl(out, Task)


def test_every_text_a_plan_writes_is_said_in_the_request(tasks: list[Task]) -> None:
    written = 0
    for task in tasks:
        assert "{{" not in task.query, task.query
        for step in task.gold_plan:
            for name in WRITES.get(step.tool, ()):
                value = step.arguments.get(name)
                if isinstance(value, str) and value:
                    written += 1
                    assert f'"{value}"' in task.query, (task.id, step.tool, name, value)
    assert written >= len(tasks) * 2


def test_a_text_that_quotes_a_result_cannot_be_dictated() -> None:
    assert dictated("Moved the due date to 2026-05-06.") == "Moved the due date to 2026-05-06."
    for text in ("That is {{convert.amount}} CHF.", 'He said "no".'):
        with pytest.raises(BlockFailed):
            dictated(text)


def test_a_dictated_text_that_ends_a_sentence_ends_the_clause() -> None:
    query = ('Comment on the card saying "Moved the due date to 2026-05-06." '
             'Email Liam Garcia, titled "Update" and saying "Hi Liam, it moved."')
    clauses = intents_of(query)
    assert [c.facts.saying for c in clauses] == [["Moved the due date to 2026-05-06."], ["Hi Liam, it moved."]]
    assert clauses[1].facts.titled == ["Update"] and clauses[1].facts.names == ["Liam Garcia"]
