"""Judge accountability, in every report: what each judge cost, how far the judges agree, and how often
the majority was split, how many votes went unscored, and how many tool answers the World Engine made
without its model (fallbacks). A reader can then weigh the judge dimensions, and the environment the
episodes met, instead of taking them on trust."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

from cworld.data_model import Usage
from cworld.judges.runs import Episode
from cworld.report.stats import spearman
from cworld.rollout.summary import engine_fallbacks


@dataclass(frozen=True)
class PairAgreement:
    a: str
    b: str
    pairs: int
    spearman: float | None
    """rank correlation of the two judges' scores over the (episode, dimension) items both scored"""
    exact: float | None
    """share of those items where both cast the same pass/fail vote"""


@dataclass
class Accountability:
    usage: dict[str, Usage] = field(default_factory=dict)
    unscored_votes: dict[str, int] = field(default_factory=dict)
    votes: dict[str, int] = field(default_factory=dict)
    pairs: list[PairAgreement] = field(default_factory=list)
    verdicts: int = 0
    split: int = 0
    unscored_dimensions: int = 0
    engine_fallbacks: int = 0
    fallback_episodes: int = 0

    @property
    def all_votes(self) -> int:
        return sum(self.votes.values())

    @property
    def all_unscored(self) -> int:
        return sum(self.unscored_votes.values())

    @property
    def counts_line(self) -> str:
        """Every fallback and unscored vote, counted in one sentence (the Markdown and HTML reports)."""
        return (f"Engine fallbacks: {self.engine_fallbacks} tool answer(s) in {self.fallback_episodes} episode(s) "
                f"made without the engine's model; unscored judge votes: {self.all_unscored} of {self.all_votes}.")

    @property
    def judges(self) -> list[str]:
        return sorted(self.votes)

    @property
    def split_rate(self) -> float | None:
        return self.split / self.verdicts if self.verdicts else None


def accountability(episodes: list[Episode]) -> Accountability:
    acc = Accountability()
    ballots: dict[str, dict[tuple[str, str], tuple[float, bool]]] = {}
    for episode in episodes:
        fallbacks = engine_fallbacks(episode.trajectory)
        acc.engine_fallbacks += fallbacks
        acc.fallback_episodes += fallbacks > 0
        for model, usage in episode.score.judge_usage.items():
            acc.usage.setdefault(model, Usage()).add(usage)
        for dim, result in episode.score.dimensions.items():
            _count_dimension(acc, result.unscored, result.split)
            for vote in result.votes:
                acc.votes[vote.judge] = acc.votes.get(vote.judge, 0) + 1
                if vote.score is None or vote.passed is None:
                    acc.unscored_votes[vote.judge] = acc.unscored_votes.get(vote.judge, 0) + 1
                    continue
                ballots.setdefault(vote.judge, {})[(episode.score.episode_id, dim)] = (vote.score, vote.passed)
    acc.pairs = [_agreement(a, b, ballots[a], ballots[b]) for a, b in combinations(sorted(ballots), 2)]
    return acc


def _count_dimension(acc: Accountability, unscored: bool, split: bool) -> None:
    if unscored:
        acc.unscored_dimensions += 1
        return
    acc.verdicts += 1
    acc.split += int(split)


def _agreement(a: str, b: str, ba: dict[tuple[str, str], tuple[float, bool]],
               bb: dict[tuple[str, str], tuple[float, bool]]) -> PairAgreement:
    shared = sorted(ba.keys() & bb.keys())
    if not shared:
        return PairAgreement(a, b, 0, None, None)
    scores_a = [ba[k][0] for k in shared]
    scores_b = [bb[k][0] for k in shared]
    exact = sum(1 for k in shared if ba[k][1] == bb[k][1]) / len(shared)
    return PairAgreement(a, b, len(shared), spearman(scores_a, scores_b), exact)
