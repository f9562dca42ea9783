"""A user's own service, simulated as docs/world-engine.md ("Simulate your own service") says: registered with
`cworld init` and a manifest entry, built, its state loaded, then compared with the service itself.

The service is `tests/fixtures/user_service/bikeshop.py` (issue 33's "a user's service"); the measurement is
`benchmarks/world_user_service.py` at a smaller size. The floors are what the engine measured when this test
was written, minus a margin: raise them as the engine improves (the issue's targets are 90% and 90%).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from world_user_service import SERVER, STATE, Registered, cworld, measure, register  # noqa: E402

#: Measured 2026-12 (3 sessions x 50 calls): verdict 73.3%, agreement 72.0%, read-after-write 30.8% of 13; after
#: issue 33's family rules and inference: verdict 92.0%, agreement 91.3%, read-after-write 84.6% of 13.
VERDICT_FLOOR = 0.88
AGREEMENT_FLOOR = 0.87
READ_AFTER_WRITE_FLOOR = 0.75
#: Answers a rule decided (family or inferred), not the schema fallback: measured 92%.
RULE_ORIGIN_FLOOR = 0.85


@pytest.fixture(scope="module")
def registered(tmp_path_factory: pytest.TempPathFactory) -> Registered:
    return register(tmp_path_factory.mktemp("user-service"))


def test_every_step_a_user_takes_exits_0(registered: Registered) -> None:
    assert [step.command[-4:] for step in registered.steps] and registered.ok, \
        "\n".join(f"{' '.join(s.command)} -> {s.code}\n{s.output[-800:]}" for s in registered.steps)
    assert len(registered.steps) == 3  # init, registry build, world load
    loaded = registered.steps[-1].output
    assert f"{SERVER} (card " in loaded and "card generic" not in loaded, loaded  # a card that fits, chosen from its tools
    assert "client 14, staff 5, service 7, appointment 16" in loaded, loaded


def test_the_built_registry_serves_it_live(registered: Registered) -> None:
    tools = [json.loads(line) for line in (registered.workspace / "registry" / "tools.jsonl").read_text().splitlines()]
    mine = [t for t in tools if t["server"] == SERVER]
    assert len(mine) == 13
    assert {t["availability"] for t in mine} == {"live"}  # the login probe_args let its reads be probed
    assert any(t.get("output_schema") for t in mine)


def test_the_loaded_world_is_shown(registered: Registered) -> None:
    shown = cworld(["--env", str(registered.env), "--workspace", str(registered.workspace), "world", "show", SERVER,
                    "--kind", "appointments", "--limit", "1"], registered.workspace.parent)
    assert shown.code == 0 and f"loaded:{STATE.name}" in shown.output, shown.output


def test_a_bad_state_file_is_one_line_and_exit_2(registered: Registered, tmp_path: Path) -> None:
    bad = tmp_path / "state.json"
    bad.write_text('{"bicycles": [{"id": "b1"}]}')
    step = cworld(["--env", str(registered.env), "--workspace", str(registered.workspace), "world", "load", SERVER,
                   str(bad)], tmp_path)
    assert step.code == 2
    assert len(step.output.splitlines()) == 1 and "bicycles" in step.output, step.output


def test_the_engine_agrees_with_the_service_above_the_floors(registered: Registered) -> None:
    figures = asyncio.run(measure(registered, sessions=3, calls=50)).figures.shares()
    print(json.dumps(figures))
    assert figures["verdict"] >= VERDICT_FLOOR, figures
    assert figures["agreement"] >= AGREEMENT_FLOOR, figures
    assert figures["read_after_write_cases"] >= 5, figures
    assert figures["read_after_write"] >= READ_AFTER_WRITE_FLOOR, figures
    assert figures["origins"].get("family", 0) + figures["origins"].get("inferred", 0) >= RULE_ORIGIN_FLOOR, figures
