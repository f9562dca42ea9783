"""Ranking fidelity (paper §5.4): does synthesized execution rank agents as live execution does?

    live, synth = await run_experiment(tasks, ExperimentConfig(), RolloutContext(env, ws, tools), out)
    report = build_fidelity(live=live, synth=synth, tools=tools, content=content)
    save_fidelity(report, out_dir)                # fidelity.json + fidelity.html

`stats` compares two rankings (Spearman, Kendall, bootstrap intervals), `tables` reads the scores they
rank, `calls` measures per-tool divergence from paired calls, `episodes` the episode-by-episode agreement, `experiment` runs both sides, `build`
assembles the report, `text` and `html` render it. The main report embeds `html.fidelity_section`.
"""

from cworld.fidelity.build import FidelityReport, build_fidelity, save_fidelity
from cworld.fidelity.calls import CallDivergence, call_divergence
from cworld.fidelity.episodes import episode_agreement, pair_episodes
from cworld.fidelity.experiment import (
    DEFAULT_AGENTS,
    MEASURED_AGENTS,
    ExperimentConfig,
    live_comparable,
    run_experiment,
)
from cworld.fidelity.stats import RankComparison, compare_rankings
from cworld.fidelity.tables import ScoreTable

__all__ = [
    "DEFAULT_AGENTS",
    "CallDivergence",
    "ExperimentConfig",
    "MEASURED_AGENTS",
    "FidelityReport",
    "RankComparison",
    "ScoreTable",
    "build_fidelity",
    "call_divergence",
    "compare_rankings",
    "episode_agreement",
    "pair_episodes",
    "live_comparable",
    "run_experiment",
    "save_fidelity",
]
