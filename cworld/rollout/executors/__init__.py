"""Executors: where a run's episodes run. `local` (this process's event loop) or `ray` (Ray actors across a
cluster; imported only when asked for, so cworld needs no Ray otherwise). Both hand finished trajectories
to the driver, which alone writes the run's store."""

from cworld.rollout.executors.base import EpisodeRunner, Executor, Job, Sink
from cworld.rollout.executors.local import LocalExecutor

__all__ = ["EpisodeRunner", "Executor", "Job", "LocalExecutor", "Sink"]
