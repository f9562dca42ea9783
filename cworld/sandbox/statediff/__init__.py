"""The state-diff evaluator (ComplexMCP): compares an episode's end state with the expected one.

`diff.py` scores a pair of states (R_c, R_b, success); `tree.py` flattens and normalizes state trees;
`ids.py` aligns generated ids; `match.py` decides exact and fuzzy matches; `models.py` holds the config
and the result; `overlay.py` turns a synthesized episode's change set into the state it ended in.
"""

from cworld.sandbox.statediff.diff import (
    Baseline,
    config_for_apps,
    diff_from,
    diff_states,
    sandbox_baseline,
    sandbox_diff_config,
    sandbox_initial_state,
    sandbox_state_diff,
)
from cworld.sandbox.statediff.models import ABSENT_REPR, StateDiffConfig, StateDiffResult
from cworld.sandbox.statediff.overlay import actual_state, apply_changes, is_change_set

__all__ = [
    "ABSENT_REPR",
    "Baseline",
    "StateDiffConfig",
    "StateDiffResult",
    "actual_state",
    "apply_changes",
    "config_for_apps",
    "diff_from",
    "diff_states",
    "is_change_set",
    "sandbox_diff_config",
    "sandbox_baseline",
    "sandbox_initial_state",
    "sandbox_state_diff",
]
