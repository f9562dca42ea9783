"""The LLM engine's budgets: output cap, how a cut answer is asked again, and how much history it is shown.

Defaults suit a frontier model answering one tool call; a workspace changes them in `config.yaml`:

    engine:
      llm:
        max_tokens: 1200          # output cap of the first ask
        max_tokens_limit: 8192    # a cut answer is asked again at twice the cap, up to this
        cut_retries: 3            # asks after a cut (longer, then a shorter page) before the fallback
        history_tokens: 1500      # the session shown, in tokens (about 4 characters each)
        result_chars: 600         # characters of each earlier result shown
        demonstrations: 3         # the card's examples shown

An unknown key or a bad value is a one-line `ConfigError`.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cworld.errors import ConfigError


class LLMEngineSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_tokens: int = Field(1200, ge=16, description="output cap of the first ask")
    max_tokens_limit: int = Field(8192, ge=16, description="the highest cap a cut answer is asked again with")
    cut_retries: int = Field(3, ge=0, le=10, description="asks after a cut answer before the fallback")
    history_tokens: int = Field(1500, ge=0, description="tokens of session history shown")
    result_chars: int = Field(600, ge=20, description="characters shown of each earlier result")
    demonstrations: int = Field(3, ge=0, le=20, description="the card's demonstrations shown")

    @model_validator(mode="after")
    def _limit_above_cap(self) -> LLMEngineSettings:
        if self.max_tokens_limit < self.max_tokens:
            raise ValueError(f"max_tokens_limit ({self.max_tokens_limit}) is below max_tokens ({self.max_tokens})")
        return self

    def longer_cap(self, cap: int) -> int:
        """The cap after a cut: twice as many tokens, up to the limit."""
        return min(cap * 2, self.max_tokens_limit)


def load_engine_settings(workspace_root: Path | None) -> LLMEngineSettings:
    """`engine.llm` of the workspace's `config.yaml`, over the defaults."""
    path = workspace_root / "config.yaml" if workspace_root is not None else None
    if path is None or not path.is_file():
        return LLMEngineSettings()
    try:
        raw = ((yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("engine") or {}).get("llm") or {}
    except (yaml.YAMLError, AttributeError) as exc:
        raise ConfigError(f"{path}: engine.llm must be a mapping ({str(exc).splitlines()[0]})") from None
    try:
        return LLMEngineSettings.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(["engine", "llm", *(str(p) for p in first["loc"])])
        raise ConfigError(f"{path}: {where}: {first['msg']}") from None
