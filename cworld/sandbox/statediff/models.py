"""The state diff's configuration and result models (see `docs/state-diff.md`).

They live apart from the algorithm so that the tree and matching helpers can read the configuration
without importing the evaluator that uses them.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from cworld.errors import ConfigError

#: How an absent value (no such path in that state) appears in a report.
ABSENT_REPR = "<absent>"

#: Key names whose values depend on when or how often tools ran, not on what the agent achieved:
#: records of when something happened (past participles), auth tokens and their expiry.
#: Deliberately not `*_at`: that would also hide `starts_at`, `due_at` or `depart_at`, which tasks set.
DEFAULT_VOLATILE_KEYS: tuple[str, ...] = (
    "created", "updated", "modified", "timestamp", "*_timestamp",
    "created_at", "created_on", "updated_at", "modified_at", "deleted_at", "added_at", "placed_at",
    "booked_at", "paid_at", "shipped_at", "delivered_at", "cancelled_at", "canceled_at", "confirmed_at",
    "completed_at", "submitted_at", "processed_at", "refunded_at", "returned_at", "archived_at",
    "issued_at", "sent_at", "saved_at", "received_at", "read_at", "seen_at",
    "last_seen*", "last_login*", "last_modified*", "last_updated*",
    "token", "*_token", "expires", "expires_*", "nonce", "etag", "request_id", "session_id",
)  # fmt: skip


#: What a generated id looks like: `prefix_0042` / `prefix-7f3a9` (a prefix, a separator, a digit
#: somewhere after it) or a UUID. Dates, emails, flight numbers and route codes do not match.
GENERATED_ID_PATTERN = (
    r"^(?:[A-Za-z][A-Za-z0-9]*[_-][A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*"
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$"
)


class StateDiffConfig(BaseModel):
    """What the diff ignores, how it keys lists, and how lenient it is with text and new records."""

    model_config = ConfigDict(frozen=True)

    identity_keys: tuple[str, ...] = Field(
        default=("id",),
        description="a dict in a list that carries one of these keys (first wins) is keyed by it",
    )
    volatile_keys: tuple[str, ...] = Field(
        default=DEFAULT_VOLATILE_KEYS, description="key-name globs (case-insensitive) dropped at any depth"
    )
    volatile_paths: tuple[str, ...] = Field(
        default=(),
        description="path globs dropped: `*` one segment part, `**` anything (`mail.messages[*].thread`)",
    )
    ordered_paths: tuple[str, ...] = Field(
        default=(),
        description="path globs of lists compared as one ordered value instead of by id or as a multiset",
    )
    fuzzy_min_chars: int = Field(
        default=40, description="texts longer than this (normalized) may match fuzzily"
    )
    fuzzy_threshold: float = Field(
        default=0.85, description="difflib ratio at or above which long texts are equal"
    )
    generated_id_pattern: str = Field(
        default=GENERATED_ID_PATTERN,
        description="regex (search) for generated ids: new ones are paired by content, not compared as they are",
    )
    pair_min_similarity: float = Field(
        default=0.5,
        description="least share of equal fields for a new actual record to pair with an expected one",
    )
    float_tolerance: float = Field(default=1e-9, description="relative and absolute tolerance for numbers")

    @model_validator(mode="after")
    def _check(self) -> StateDiffConfig:
        for name in ("fuzzy_threshold", "pair_min_similarity"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"state diff: {name} must be between 0 and 1, got {getattr(self, name)}")
        if self.fuzzy_min_chars < 0 or self.float_tolerance < 0:
            raise ConfigError("state diff: fuzzy_min_chars and float_tolerance must not be negative")
        try:
            re.compile(self.generated_id_pattern)
        except re.error as err:
            raise ConfigError(
                f"state diff: generated_id_pattern {self.generated_id_pattern!r} is not a valid regex ({err})"
            ) from None
        return self


class Change(BaseModel):
    """One key path in the report. Values are the (volatile-free) values there; absent = `<absent>`."""

    path: str
    kind: Literal["added", "removed", "changed"]
    before: Any = Field(default=None, description="value in the initial state")
    expected: Any = Field(default=None, description="value in the expected (ground-truth) end state")
    actual: Any = Field(default=None, description="value in the agent's end state")
    fuzzy: bool = Field(default=False, description="counted equal only through the fuzzy long-text rule")


class StateDiffResult(BaseModel):
    """ComplexMCP §3.3: T required changes, M of them done right, M_b changes that should not have happened."""

    T: int = Field(description="required changes: paths where expected differs from initial")
    M: int = Field(description="required changes where the actual state matches the expected one")
    M_b: int = Field(description="paths outside T where the actual state differs from the initial one")
    R_c: float = Field(description="completion rate M / T (1.0 when T = 0)")
    R_b: float = Field(description="misbehaving rate M_b / T (M_b / 1 when T = 0)")
    success: bool = Field(description="R_c == 1 and R_b == 0")
    required: list[Change] = Field(default_factory=list)
    matched: list[Change] = Field(default_factory=list)
    missed: list[Change] = Field(default_factory=list)
    unwanted: list[Change] = Field(default_factory=list)
    renamed_ids: dict[str, str] = Field(
        default_factory=dict,
        description="generated ids of new actual records -> the expected ids they paired with",
    )

    def summary(self) -> str:
        """One line for logs and reports."""
        verdict = "success" if self.success else "failure"
        return (
            f"{verdict}: R_c={self.R_c:.3f} ({self.M}/{self.T} required changes), "
            f"R_b={self.R_b:.3f} ({self.M_b} unwanted)"
        )
