"""The local executor: every episode on this process's event loop, at most `concurrency` at once.

`concurrency` workers pull jobs from one iterator (no task per job is created up front, so a 10,000-episode
run holds `concurrency` episodes, not 10,000 coroutines). Each LLM call and tool call yields, so waiting on
a model overlaps across episodes. A worker moves on to its next episode the moment a trajectory exists:
recording it (the store's group commit, an fsync in a thread) runs beside it, so the disk never holds a slot.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence

from cworld.rollout.executors.base import EpisodeRunner, Job, Sink


class LocalExecutor:
    def __init__(self, episodes: EpisodeRunner, concurrency: int) -> None:
        self.episodes, self.concurrency = episodes, concurrency

    async def run(self, jobs: Sequence[Job], sink: Sink) -> None:
        pending = iter(jobs)
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(min(self.concurrency, len(jobs))):
                    group.create_task(self._worker(pending, sink, group))
        finally:
            self.episodes.close()

    async def _worker(self, pending: Iterator[Job], sink: Sink, group: asyncio.TaskGroup) -> None:
        for task, seed in pending:
            trajectory = await self.episodes.run_one(task, seed)
            group.create_task(sink(trajectory))
