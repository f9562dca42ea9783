"""Where a model lives and how to authenticate: api_base, and a key read from the environment only.

The key goes straight into the litellm call and nowhere else: not the cache key, not the cache
value, not a log line, not an error message (provider messages are masked with it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from cworld.config import ModelConfig
from cworld.errors import ConfigError

DUMMY_KEY = "sk-no-key-needed"


def api_key(cfg: ModelConfig, env: Mapping[str, str] | None = None) -> str | None:
    """The key for this model: the env var the config names; a dummy for a keyless OpenAI-compatible
    server (litellm's openai client refuses to run without one); else None (litellm's own lookup)."""
    env = os.environ if env is None else env
    if cfg.api_key_env:
        value = env.get(cfg.api_key_env)
        if not value:
            raise ConfigError(
                f"model '{cfg.model}': api_key_env names {cfg.api_key_env}, which is not set; export it"
            )
        return value
    if cfg.api_base and cfg.provider == "openai" and not env.get("OPENAI_API_KEY"):
        return DUMMY_KEY
    return None


def public_params(cfg: ModelConfig) -> dict[str, Any]:
    """Parameters from config that shape the answer (so they belong in the cache key)."""
    if "api_key" in cfg.extra:
        raise ConfigError(
            f"model '{cfg.model}': a key in config 'extra' is not allowed; export it and name the variable "
            "with api_key_env"
        )
    params: dict[str, Any] = {"model": cfg.model}
    if cfg.api_base:
        params["api_base"] = cfg.api_base
    params.update(cfg.extra)
    return params
