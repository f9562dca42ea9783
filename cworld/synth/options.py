"""The knobs of a synthesis run, with the defaults `cworld synth` uses."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from cworld.errors import UsageError

HARVESTED_MIN_SERVERS = 2
"""A harvested-pool task spans at least this many servers (a goal shape is over 2-4 services)."""
HARVESTED_MIN_TOOLS = 2
"""A harvested-pool task is one goal shape: a read and a write at least, each serving it; padding it to more
with unrelated tools is what made requests read as lists."""


class SynthOptions(BaseModel):
    n: int = Field(50, ge=1, description="tasks to accept")
    pool: Literal["default", "harvested"] = Field(
        "default", description="where candidate tools come from: the environment's tools, or harvested ones only"
    )
    seed: int = 0
    min_tools: int = Field(
        6, ge=1, description="candidate bundle size, low end; also the least tools a task needs"
    )
    max_tools: int = Field(10, ge=1, description="candidate bundle size, high end")
    min_servers: int = Field(2, ge=1, description="distinct servers a bundle and a task must span")
    max_rounds: int = Field(3, ge=1, description="draft + revisions per task before it is dropped")
    concurrency: int = Field(4, ge=1, description="tasks in flight at once (LLM calls overlap)")
    max_attempts: int | None = Field(None, description="attempts before giving up; default 3n + 10")
    min_constraint_types: int = 4
    min_needed_share: float = Field(0.8, description="share of a task's tools its plan or sub-goals must use")
    min_candidate_share: float = Field(0.5, description="share of the sampled candidates a task must keep")
    min_verifiable_share: float = Field(0.5, description="share of a task's constraints with a machine check")
    duplicate_cosine: float = Field(
        0.95, description="embedding similarity above which a query is a near-duplicate"
    )
    duplicate_jaccard: float = Field(0.8, description="token Jaccard above which a query is a near-duplicate")
    schema_only_share: float = Field(
        0.06,
        ge=0,
        le=1,
        description="offline: share of attempts (evenly spaced) that add a schema-only CRM step",
    )

    @model_validator(mode="before")
    @classmethod
    def _pool_servers(cls, data: Any) -> Any:
        """The harvested pool spans at least `HARVESTED_MIN_SERVERS` servers unless told otherwise."""
        if isinstance(data, dict) and data.get("pool") == "harvested" and data.get("min_servers") is None:
            data = {**data, "min_servers": HARVESTED_MIN_SERVERS}
        if isinstance(data, dict) and data.get("pool") == "harvested" and data.get("min_tools") is None:
            data = {**data, "min_tools": HARVESTED_MIN_TOOLS}
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k not in ("min_servers", "min_tools") or v is not None}
        return data

    @model_validator(mode="after")
    def _ranges(self) -> SynthOptions:
        if self.max_tools < self.min_tools:
            raise UsageError(f"--max-tools ({self.max_tools}) is below --min-tools ({self.min_tools})")
        if self.min_servers > self.max_tools:
            raise UsageError(f"--min-servers ({self.min_servers}) exceeds --max-tools ({self.max_tools})")
        return self

    @property
    def attempts(self) -> int:
        return self.max_attempts if self.max_attempts is not None else 3 * self.n + 10
