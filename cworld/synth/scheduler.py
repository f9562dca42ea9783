"""The attempt scheduler: run attempts concurrently until N tasks are accepted; commit them in attempt order.

Up to `concurrency` attempts are in flight (their LLM calls overlap). Results are committed strictly in
attempt order, so the near-duplicate decision (which of two similar tasks came first) and the file's
order do not depend on which model call happened to return first. An accepted task is appended to the
output file (fsync'd) at once: Ctrl-C keeps every task committed so far.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cworld.data_model import Task, append_jsonl
from cworld.synth.dedupe import DuplicateGuard
from cworld.synth.pipeline import Outcome, Synthesis


@dataclass
class Hooks:
    """Callbacks for a front end (the CLI's progress bar); all optional."""

    accepted: Callable[[Task], None] = lambda task: None
    rejected: Callable[[Outcome], None] = lambda outcome: None


@dataclass
class RunResult:
    accepted: list[Task] = field(default_factory=list)
    rejected: list[Outcome] = field(default_factory=list)
    attempts: int = 0
    seconds: float = 0.0


async def run_synthesis(
    synthesis: Synthesis, out: Path, guard: DuplicateGuard, hooks: Hooks | None = None
) -> RunResult:
    hooks = hooks or Hooks()
    options = synthesis.options
    result = RunResult()
    started = asyncio.get_running_loop().time()
    running: dict[int, asyncio.Task[Outcome]] = {}
    done: dict[int, Outcome] = {}
    next_index, commit_index = 0, 0
    try:
        while len(result.accepted) < options.n:
            while (
                len(running) < options.concurrency
                and next_index < options.attempts
                and len(result.accepted) + len(running) + len(done) < options.n + options.concurrency
            ):
                running[next_index] = asyncio.create_task(synthesis.attempt(next_index))
                next_index += 1
            if not running and commit_index not in done:
                break
            if running and commit_index not in done:
                finished, _ = await asyncio.wait(running.values(), return_when=asyncio.FIRST_COMPLETED)
                for index in [i for i, t in running.items() if t in finished]:
                    done[index] = running.pop(index).result()
            while commit_index in done and len(result.accepted) < options.n:
                _commit(done.pop(commit_index), synthesis, out, guard, hooks, result)
                commit_index += 1
    finally:
        for task in running.values():
            task.cancel()
        await asyncio.gather(*running.values(), return_exceptions=True)
        result.attempts = commit_index
        result.seconds = asyncio.get_running_loop().time() - started
    return result


def _commit(
    outcome: Outcome, synthesis: Synthesis, out: Path, guard: DuplicateGuard, hooks: Hooks, result: RunResult
) -> None:
    task = outcome.task
    if task is not None:
        twin, score = guard.check(task.query)
        if twin is not None:
            outcome.task = None
            outcome.code = "duplicate"
            outcome.reason = f"near-duplicate of {twin} (similarity {score:.3f})"
        else:
            task.metadata["max_similarity_to_earlier"] = round(score, 4)
            append_jsonl(out, [task])
            guard.add(task.id, task.query)
            result.accepted.append(task)
            hooks.accepted(task)
            return
    result.rejected.append(outcome)
    hooks.rejected(outcome)
