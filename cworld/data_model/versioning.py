"""Every record written to disk carries a schema version, so old files are recognised on load."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = "1"


class Versioned(BaseModel):
    """Base for records stored as JSON/JSONL lines."""

    model_config = ConfigDict(extra="ignore")

    schema_version: str = SCHEMA_VERSION
