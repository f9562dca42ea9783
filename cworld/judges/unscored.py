"""How many judge votes went unscored (the judge answered unusably, or its model failed for good), and the
line a command ends with when too many did: a score built on few votes must not pass for a full one."""

from __future__ import annotations

from collections.abc import Iterable

from cworld.data_model import Score

UNSCORED_WARN_SHARE = 0.10
"""Above this share of unscored votes a run's judge dimensions are flagged on the command's last line."""


def vote_counts(scores: Iterable[Score]) -> tuple[int, int]:
    """(unscored votes, all votes) over the scores' judge dimensions."""
    unscored = total = 0
    for score in scores:
        for dimension in score.dimensions.values():
            for vote in dimension.votes:
                total += 1
                unscored += vote.score is None or vote.passed is None
    return unscored, total


def unscored_warning(unscored: int, total: int) -> str | None:
    """The last line to print when more than 10% of the votes are unscored; None otherwise."""
    if not total or unscored / total <= UNSCORED_WARN_SHARE:
        return None
    return (f"warning: {unscored} of {total} judge votes ({unscored / total:.0%}) are unscored (above "
            f"{UNSCORED_WARN_SHARE:.0%}): the judge dimensions rest on fewer votes than asked; "
            "run `cworld judge` again to re-ask them")
