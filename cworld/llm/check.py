"""Cheap validation of a model config before work starts, so a typo fails in a second, not mid-run."""

from __future__ import annotations

import time
from typing import Any

from cworld.config import ModelConfig
from cworld.errors import ConfigError, CworldError
from cworld.llm._loader import MOCK_PROVIDER, load_litellm
from cworld.llm.connection import api_key
from cworld.llm.failures import is_provider_error, model_error

_PING = [{"role": "user", "content": "ping"}]


def check_model(model: ModelConfig | str, *, ping: bool = False, role: str | None = None) -> None:
    """Raise `ConfigError` for a malformed model string, an unknown provider or a missing `api_key_env`
    variable; with `ping`, the full `preflight` for `role` (the provider's key variable, then a 1-token
    call, once per process). The in-process mock consumes nothing of its script."""
    cfg = _as_config(model)
    provider_of(cfg)
    api_key(cfg)
    if ping:
        from cworld.llm.preflight import preflight  # it builds on this module

        preflight([(role, cfg)])


async def ping_model(model: ModelConfig | str) -> tuple[bool, str]:
    """For `cworld doctor`: (answers?, one line of detail). Never raises for a model's failure."""
    try:
        cfg = _as_config(model)
        provider = provider_of(cfg)
        key = api_key(cfg)
    except CworldError as bad:
        return False, str(bad)
    if provider == MOCK_PROVIDER:
        return True, "in-process mock provider"
    started = time.perf_counter()
    try:
        await load_litellm().acompletion(**ping_call(cfg, key))
    except Exception as exc:
        if not is_provider_error(exc):
            raise
        err = model_error(exc, model=cfg.model, role=None, api_key_env=cfg.api_key_env, secret=key, attempts=1)
        return False, str(err)
    return True, f"answered in {(time.perf_counter() - started) * 1000:.0f} ms"


def provider_of(cfg: ModelConfig) -> str:
    """The litellm provider for the model string, or a one-line `ConfigError`."""
    name = cfg.model.strip()
    if not name or name != cfg.model or any(ch.isspace() for ch in name) or name.endswith("/"):
        raise ConfigError(f"model {cfg.model!r} is malformed; use a litellm model string such as 'openai/gpt-4o-mini'")
    try:
        _, provider, _, _ = load_litellm().get_llm_provider(name, api_base=cfg.api_base)
    except Exception:  # litellm signals an unknown provider with a BadRequestError
        prefix = name.split("/", 1)[0] if "/" in name else name
        raise ConfigError(
            f"model '{name}': unknown provider or model {prefix!r}; use a litellm model string such as "
            "'openai/gpt-4o-mini', 'openai/NAME' with api_base for a local server, or 'mock/NAME'"
        ) from None
    return str(provider)


def _as_config(model: ModelConfig | str) -> ModelConfig:
    return model if isinstance(model, ModelConfig) else ModelConfig(model=model, api_key_env=None)


def ping_call(cfg: ModelConfig, key: str | None, timeout_s: float = 30.0) -> dict[str, Any]:
    """The arguments of a 1-token completion that shows whether `cfg`'s model answers (doctor, preflight)."""
    call: dict[str, Any] = {"model": cfg.model, "messages": _PING, "max_tokens": 1, "max_retries": 0,
                            "timeout": timeout_s}
    call.update({k: v for k, v in {"api_base": cfg.api_base, "api_key": key}.items() if v})
    return call
