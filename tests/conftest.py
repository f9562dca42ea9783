"""Test defaults: offline, no network, a private workspace per test, back-off zeroed; and how the suite is
spread over pytest-xdist workers (docs/testing.md): a file (or a named group of files) runs whole on one
worker, the heaviest files first."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DISABLE_AIOHTTP_TRANSPORT", "True")  # litellm, imported early by the harness doors too
for _role in ("AGENT", "ENGINE", "SYNTH"):
    os.environ.pop(f"CWORLD_{_role}_MODEL", None)
os.environ.pop("CWORLD_JUDGE_MODELS", None)

# Bytecode caches even where PYTHONDONTWRITEBYTECODE is set (this machine sets it): without them every worker
# rewrites the asserts of every test module again while it collects, and every run compiles again each module
# it imports (with test_architecture's graph made lazy, a worker's collection went from 24 to 17 s of CPU;
# docs/testing.md). They go to `__pycache__/`, which git ignores.
sys.dont_write_bytecode = False

from cworld.llm import RetryPolicy, set_default_retry  # noqa: E402  (after the env is set)

set_default_retry(RetryPolicy.immediate())


#: The heaviest files, heaviest first (measured with `--durations`, issue 35). They are handed out first so
#: that no worker starts a long file when the others are nearly done; every other file keeps its place.
#: A rough order is enough: update it when `--durations` shows a new heavy file.
HEAVY_FIRST = (
    "tests/test_local_model.py",  # the real model: most of it llama.cpp reading prompts on one thread
    "tests/test_rollout_ray.py",  # a two-node Ray cluster: long, but much of it waiting
    "tests/test_synth_harvested.py",
    "tests/test_agents_heuristic.py",
    "tests/test_fidelity_episodes.py",
    "tests/test_registry_harvest.py",
    "tests/test_registry_index_scale.py",
    "tests/test_harness_inspect.py",
    "tests/test_serve_episodes.py",
    "tests/test_harness_openenv.py",
    "tests/test_engine_harvested.py",
    "tests/test_world_user_service.py",
    "tests/test_sandbox_conformance.py",
    "tests/test_registry_build.py",
    "tests/test_world_build.py",
    "tests/test_serve_limits.py",
    "tests/test_mcp_connection.py",
)

#: Files that must share one worker (they run one after another there), by group name.
GROUPS = {
    # Each starts its own llama.cpp server on a free port; on one worker, two never compete for the cores.
    "tests/test_local_model.py": "local-model",
    "tests/test_engine_local_llm.py": "local-model",
    "tests/test_judges_local_llm.py": "local-model",
    "tests/test_synth_local_llm.py": "local-model",
    "tests/test_agents_llm.py": "local-model",
    # Harvests: as root, a harvested server runs as uid 61000 + its slot, and the harvest then kills every
    # process of that uid (registry/harvest/jail.py). Two harvests at once (two workers, or two test runs on
    # one machine) share those uids and can kill each other's servers.
    "tests/test_registry_harvest.py": "harvest-jail",
    "tests/test_harvest_offline.py": "harvest-jail",
    # Synthesis over the harvested pool: the worker's `shared_worlds` serves them all (seed 0's world of
    # ~300 harvested servers is built once, not once per file), `harvested_batch` the first three.
    "tests/test_synth_harvested.py": "harvested-synth",
    "tests/test_synth_goals.py": "harvested-synth",
    "tests/test_synth_shapes.py": "harvested-synth",
    # These two build the harvested universe and engine over seed 0's worlds too (`shared_worlds`): with the
    # group's worlds saved, their setup is 1.9 and 1.7 s instead of 3.1 and 2.7 (-n 0, load ~2).
    "tests/test_synth_action_space.py": "harvested-synth",
    "tests/test_synth_json_text.py": "harvested-synth",
    # The packaged MiniLM: loading it (torch, transformers) takes ~5 s the first time in a process, ~0.1 s after.
    "tests/test_agents_heuristic.py": "minilm",
    "tests/test_registry_multilingual.py": "minilm",
    "tests/test_registry_index.py": "minilm",
}


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that need a remote API or the local LLM server are skipped unless asked for; the heaviest files
    go first, and the files of a group next to each other (a stable sort: the tests of a file keep their
    order; with `-n 0` a group's files then run one after another, as on a worker)."""
    gates = {"remote": "CWORLD_REMOTE_TESTS", "local_llm": "CWORLD_LOCAL_LLM"}
    for item in items:
        for marker, env in gates.items():
            if marker in item.keywords and os.environ.get(env, "").strip().lower() in ("", "0", "false", "no"):
                item.add_marker(pytest.mark.skip(reason=f"set {env}=1 to run {marker} tests"))
    rank = {path: i for i, path in enumerate(HEAVY_FIRST)}
    for path, group in GROUPS.items():  # a group's files go with its heaviest, together, as a worker runs them
        ranked = [rank[p] for p, g in GROUPS.items() if g == group and p in rank]
        rank.setdefault(path, min(ranked, default=len(HEAVY_FIRST)))
    items.sort(key=lambda item: rank.get(_file_of(item.nodeid), len(HEAVY_FIRST)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's `loadscope` with a file as the unit (module fixtures such as a started server or a built
    world are made once), files of a `GROUPS` group as one unit, units handed out in collection order."""
    from xdist.scheduler import LoadScopeScheduling

    class FileScheduling(LoadScopeScheduling):
        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            config.option.loadscopereorder = False  # keep HEAVY_FIRST's order, not the test count's

        def _split_scope(self, nodeid: str) -> str:
            path = _file_of(nodeid)
            return GROUPS.get(path, path)

    return FileScheduling(config, log)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker, once its tests and fixtures are done: collect the garbage now (a finalizer's
    error is still reported), then freeze what is left. A worker then leaves within the 5 s execnet gives it
    after its last report; past that, execnet sends it SIGINT. pytest's own collection at exit walked the
    ~2 M live objects again: 3-4 s on this 2-core machine under load, and the SIGINT landed in a gc callback
    as an "Exception ignored ... KeyboardInterrupt" traceback at the end of the run."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        gc.collect()
        gc.freeze()


@pytest.fixture(autouse=True, scope="module")
def _signal_handlers() -> Iterator[None]:
    """A module's signal handlers do not outlive it: `vf-eval` (test_harness_verifiers.py), run in-process,
    installs SIGINT/SIGTERM handlers that raise KeyboardInterrupt ("interrupted — cleaning up"); left in
    place, a later Ctrl-C or SIGTERM reached them instead of pytest."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        if signal.getsignal(sig) is not handler and handler is not None:
            signal.signal(sig, handler)


@pytest.fixture
def workspace_dir(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    monkeypatch.setenv("CWORLD_WORKSPACE", str(ws))
    return ws


@pytest.fixture(scope="session")
def shared_worlds(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Any], Any]:
    """`shared_worlds(workspace)` links the workspace's saved worlds (`worlds/`) to one folder per worker, and
    returns the workspace. For the tests that synthesize over the harvested pool: each such run builds seed
    0's world of ~300 harvested servers (prepare: 13 s, 5 s with the worlds saved). A server's world depends
    only on its seed, server and card (`engine.world.build.load_or_build`, which alone saves them), so a
    later run loads what the first one saved, as a second `cworld synth` in one workspace does."""
    from cworld.engine.world.build import WORLDS_FOLDER

    folder = tmp_path_factory.mktemp("worlds")

    def link(workspace: Any) -> Any:
        workspace.root.mkdir(parents=True, exist_ok=True)
        (workspace.root / WORLDS_FOLDER).symlink_to(folder, target_is_directory=True)
        return workspace

    return link


#: The harvested-pool batch the synthesis tests read (`harvested_batch`): seed and size. Eight tasks of seed 21
#: span at least three goal shapes, which test_synth_shapes asks of a run.
HARVESTED_BATCH = {"n": 8, "seed": 21}


_HARVESTED_GROUP = "harvested-synth"
_harvested: list[tuple[Any, list[Any], Any]] = []
"""The batch while the worker runs the group's files; dropped after their last test (`pytest_runtest_teardown`)."""


@pytest.fixture(scope="module")
def harvested_batch(tmp_path_factory: pytest.TempPathFactory, shared_worlds) -> tuple[Any, list[Any], Any]:
    """One `cworld synth --pool harvested` run (`HARVESTED_BATCH`), offline: `(workspace, tasks, prepared)`,
    made once for the files of the `harvested-synth` group. They each ran their own (3, 6 and 8 tasks of seeds
    7, 13 and 21: 11-20 s each, most of it the action space over ~8,000 harvested tools), and each checks
    properties every accepted task must have; they now check them on this batch's eight tasks. Kept only
    while the group runs: its engine and universe would otherwise stay live through the worker's later files."""
    if not _harvested:
        _harvested.append(_synthesize_batch(tmp_path_factory, shared_worlds))
    return _harvested[0]


def _synthesize_batch(tmp_path_factory: pytest.TempPathFactory, shared_worlds: Callable[[Any], Any]) -> Any:
    from cworld.data_model import Task, read_jsonl
    from cworld.environment import Environment, Workspace
    from cworld.synth import SynthOptions, prepare, run_prepared

    mp = pytest.MonkeyPatch()
    mp.setenv("CWORLD_EMBED_MODEL", "hash")  # only while the batch is made: the embedder is attached by then
    try:
        ws = shared_worlds(Workspace.resolve(tmp_path_factory.mktemp("harvested") / "ws"))
        options = SynthOptions(pool="harvested", concurrency=1, **HARVESTED_BATCH)
        prepared = prepare(Environment.resolve(), ws, options, out=ws.root / "tasks.jsonl")
        asyncio.run(run_prepared(prepared))
    finally:
        mp.undo()
    return ws, read_jsonl(ws.root / "tasks.jsonl", Task), prepared


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After the last test of the `harvested-synth` group's files, the batch is let go."""
    if _harvested and (nextitem is None or GROUPS.get(_file_of(nextitem.nodeid)) != _HARVESTED_GROUP):
        _harvested.clear()


@pytest.fixture
def strict_provider():
    """A started strict OpenAI-compatible stand-in (cworld/llm/strict_server.py): it refuses with HTTP 400
    what the real API refuses and answers from a script. Use `.model_config(name)` (or model `openai/NAME`
    with `api_base=.url`) for any role, `.script([...])` to queue replies, `.requests` / `.refusals` to look."""
    from cworld.llm.strict_server import StrictProvider

    with StrictProvider() as provider:
        yield provider
