"""Every record written to disk carries a schema version, so old files are recognised on load."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = "1"
TRAJECTORY_LINE_VERSION = "2"
"""A line of `trajectories.jsonl` in the compact form (`compact.py`: the task by reference, the end state as a
diff, duplicates left out). Lines of version 1 hold the full `Trajectory` and still load; a resolved
`Trajectory` is a full record again (version 1)."""


class Versioned(BaseModel):
    """Base for records stored as JSON/JSONL lines."""

    model_config = ConfigDict(extra="ignore")

    schema_version: str = SCHEMA_VERSION
