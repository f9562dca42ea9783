"""Rollouts: the episode loop (agent -> controller -> observation), trajectories, and the runner.

    ctx = RolloutContext(env, workspace, environment_tools(env, workspace).episode())
    report = await Runner(tasks, RunConfig(agent="scripted:oracle", mode="live"), ctx, out_dir).run()
"""

from cworld.rollout.episode import DEFAULT_MAX_TURNS, Episode, EpisodeInfraError, episode_id
from cworld.rollout.loop import RolloutContext, build_episode, run_episode
from cworld.rollout.run_tasks import RunConfig, Runner, RunReport
from cworld.rollout.store import (
    TRAJECTORIES_FILE,
    TrajectoryStore,
    cut_torn_tail,
    read_trajectories,
    run_tasks,
)
from cworld.rollout.summary import SummaryRow, render, state_matches, summarize

__all__ = [
    "DEFAULT_MAX_TURNS",
    "TRAJECTORIES_FILE",
    "Episode",
    "EpisodeInfraError",
    "RolloutContext",
    "RunConfig",
    "RunReport",
    "Runner",
    "SummaryRow",
    "TrajectoryStore",
    "build_episode",
    "cut_torn_tail",
    "episode_id",
    "read_trajectories",
    "run_tasks",
    "render",
    "run_episode",
    "state_matches",
    "summarize",
]
