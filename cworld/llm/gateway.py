"""The one door to every LLM: role -> model, cache, per-model concurrency, retries, usage and cost.

    gw = Gateway.from_workspace(workspace)
    reply = await gw.complete("agent", messages, tools=tools)
    verdict = await gw.complete_json("judge", messages, Verdict)

Nothing else in cworld imports litellm; this module does so lazily, on the first call.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from cworld.config import ROLES, ModelConfig, ModelsConfig, load_models
from cworld.data_model import Usage
from cworld.environment import Workspace
from cworld.errors import ConfigError, UsageError
from cworld.llm import jsonrepair, local_server, provider_rules
from cworld.llm._loader import load_litellm
from cworld.llm.cache import ResponseCache, request_key
from cworld.llm.calls import CallRecord, call_timeout
from cworld.llm.completion import Completion, completion_from_response
from cworld.llm.connection import api_key, public_params
from cworld.llm.failures import is_provider_error, is_transient, model_error
from cworld.llm.retry import Attempts, RetryPolicy, call_with_retry, default_retry
from cworld.llm.usage import UsageLedger

log = logging.getLogger("cworld.llm")
M = TypeVar("M", bound=BaseModel)
CACHE_FILE = "llm.sqlite"
DEFAULT_TIMEOUT_S = 300.0
"""One call's timeout outside the four roles (a one-off model named by the caller)."""


class Gateway:
    def __init__(
        self,
        models: ModelsConfig | None = None,
        *,
        cache_path: Path | str | None = None,
        retry: RetryPolicy | None = None,
        timeout_s: float | None = None,
    ) -> None:
        """`cache_path=None` turns the response cache off; `retry=None` takes the module default; `timeout_s`
        sets one call's timeout for every role (None: each role's budget, `ModelsConfig.budgets`)."""
        self.models = models or ModelsConfig()
        self.cache = ResponseCache(cache_path) if cache_path is not None else None
        self.retry = retry or default_retry()
        self.timeout_s = timeout_s
        self.ledger = UsageLedger()
        # Semaphores bind to the loop that first waits on them, so keep one set per event loop.
        self._limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], asyncio.Semaphore]]
        self._limits = weakref.WeakKeyDictionary()
        self._json_mode: dict[str, bool] = {}

    @classmethod
    def from_workspace(
        cls, workspace: Workspace | Path | str, models: ModelsConfig | None = None, *, cache: bool = True, **kwargs: Any
    ) -> Gateway:
        """Models from the workspace's config (and env vars) unless given; cache in `<workspace>/cache/`."""
        ws = workspace if isinstance(workspace, Workspace) else Workspace.resolve(workspace)
        models = models if models is not None else load_models(ws.root)
        return cls(models, cache_path=ws.cache / CACHE_FILE if cache else None, **kwargs)

    # --- accounting ------------------------------------------------------------------------------
    @property
    def usage(self) -> dict[str, Usage]:
        """Per role, for this gateway's lifetime (one run)."""
        return self.ledger.by_role()

    @property
    def usage_by_model(self) -> dict[str, Usage]:
        return self.ledger.by_model()

    # --- calls -----------------------------------------------------------------------------------
    async def complete(
        self,
        role: str,
        messages: list[Any],
        *,
        model: str | ModelConfig | None = None,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        max_tokens: int | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Completion:
        """One model call. An identical earlier request (same model, messages, tools, sampling settings)
        is answered from the cache when one is set, even at temperature > 0: vary `seed` to sample anew.
        Provider failures are retried when transient and end as a one-line `ModelError` otherwise.
        The key is read only on a miss, so a cached run replays without credentials."""
        cfg = self.budgeted(role, self.resolve(role, model))
        request = build_request(
            cfg, messages, tools=tools or None, tool_choice=tool_choice, response_format=response_format,
            temperature=cfg.temperature if temperature is None else temperature, seed=seed,
            max_tokens=cfg.max_tokens if max_tokens is None else max_tokens,
        )  # fmt: skip
        prepared = provider_rules.prepare(cfg, request)  # what the provider accepts, and so what is keyed
        record = CallRecord(role, cfg.model, prepared.request.get("max_tokens"))
        try:
            completion = await self._answer(role, cfg, prepared.request, metadata)
        except asyncio.CancelledError:
            record.cancelled()
            raise
        except Exception as exc:
            record.failed(exc)
            raise
        completion = prepared.restore(completion)
        record.done(completion)
        self.ledger.record(role, completion)
        log.debug(
            "llm role=%s model=%s tokens=%d+%d cost=%.6f cached=%s", role, cfg.model,
            completion.usage.prompt_tokens, completion.usage.completion_tokens, completion.cost_usd, completion.cached,
        )  # fmt: skip
        return completion

    async def complete_json(
        self,
        role: str,
        messages: list[Any],
        schema: type[M],
        *,
        max_repairs: int = 2,
        json_mode: bool = True,
        hint: bool = True,
        **kwargs: Any,
    ) -> M:
        """A validated `schema` instance; invalid replies are repaired (the error is fed back) up to
        `max_repairs` times, then `ModelError`. Asks for JSON mode where the provider supports it."""
        cfg = self.resolve(role, kwargs.get("model"))
        if json_mode and "response_format" not in kwargs and self.supports_json_mode(cfg.model):
            kwargs["response_format"] = {"type": "json_object"}
        kwargs["model"] = cfg
        return await jsonrepair.complete_json(
            self.complete, role, messages, schema, max_repairs=max_repairs, hint=hint, **kwargs
        )

    def budgeted(self, role: str, cfg: ModelConfig) -> ModelConfig:
        """`cfg` with its output cap and call timeout filled: the entry's own, else the role's budget; the
        gateway's `timeout_s`, when set, over both; inside an episode, at most half the time it has left."""
        cfg = self.models.budgeted(role, cfg)
        timeout = call_timeout(self.timeout_s if self.timeout_s is not None else cfg.timeout_s or DEFAULT_TIMEOUT_S)
        return cfg if cfg.timeout_s == timeout else cfg.model_copy(update={"timeout_s": timeout})

    def resolve(self, role: str, model: str | ModelConfig | None = None) -> ModelConfig:
        """The config for this call: an explicit one, the role's entry with this model name, or the role's
        first entry. An explicit model needs no configured role (e.g. a one-off judge)."""
        if isinstance(model, ModelConfig):
            return model
        if role not in ROLES:
            if model is None:
                raise UsageError(f"unknown LLM role {role!r}; use one of {', '.join(ROLES)} or pass model=")
            return ModelConfig(model=model, api_key_env=None)
        configured = self.models.for_role(role)  # type: ignore[arg-type]
        if model is None:
            if not configured:
                raise ConfigError(f"no model configured for role '{role}'; {_how_to_configure(role)}")
            return configured[0]
        return next((c for c in configured if c.model == model), ModelConfig(model=model, api_key_env=None))

    def supports_json_mode(self, model: str) -> bool:
        if model not in self._json_mode:
            self._json_mode[model] = _supports_json_mode(model)
        return self._json_mode[model]

    # --- internals -------------------------------------------------------------------------------
    async def _answer(
        self, role: str, cfg: ModelConfig, request: dict[str, Any], metadata: dict[str, Any] | None
    ) -> Completion:
        """From the cache when the same request was answered before, else from the provider (then cached)."""
        key = request_key(request) if self.cache is not None else None
        completion = self._cached(key) if key else None
        if completion is None:
            completion = await self._call(role, cfg, request, metadata)
            if key and self.cache is not None:
                self.cache.put(key, completion)
        return completion

    def _cached(self, key: str) -> Completion | None:
        assert self.cache is not None
        hit = self.cache.get(key)
        return hit.model_copy(update={"cached": True, "cost_usd": 0.0}) if hit is not None else None

    async def _call(
        self, role: str, cfg: ModelConfig, request: dict[str, Any], metadata: dict[str, Any] | None
    ) -> Completion:
        litellm = load_litellm()
        key = api_key(cfg)
        limit = self._semaphore(cfg)
        attempts = Attempts()
        call = {"timeout": cfg.timeout_s, "max_retries": 0, "drop_params": True, **request, "api_key": key}
        if metadata:
            call["metadata"] = metadata

        async def attempt() -> Any:
            async with limit:
                try:
                    return await _within(litellm.acompletion(**call), call["timeout"], cfg)
                except Exception as exc:
                    dead = local_server.down(cfg.api_base) if is_transient(exc) else None
                    if dead is not None:
                        raise dead from exc  # not transient: no retry can revive it
                    raise

        try:
            response = await call_with_retry(attempt, self.retry, attempts)
        except Exception as exc:
            if not is_provider_error(exc):
                raise
            raise model_error(
                exc, model=cfg.model, role=role, api_key_env=cfg.api_key_env, secret=key, attempts=attempts.count
            ) from exc
        return completion_from_response(response, cfg.model)

    def _semaphore(self, cfg: ModelConfig) -> asyncio.Semaphore:
        per_loop = self._limits.setdefault(asyncio.get_running_loop(), {})
        slot = (cfg.model, cfg.api_base or "")
        if slot not in per_loop:
            per_loop[slot] = asyncio.Semaphore(max(1, cfg.max_concurrency))
        return per_loop[slot]

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()

    async def __aenter__(self) -> Gateway:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


async def _within(reply: Any, timeout_s: float, cfg: ModelConfig) -> Any:
    """The provider's reply, or litellm's `Timeout` once `timeout_s` has passed: the gateway holds the
    budget itself, since not every provider (nor every local server) honours the timeout it is sent."""
    try:
        async with asyncio.timeout(timeout_s):
            return await reply
    except TimeoutError:
        raise load_litellm().Timeout(f"no reply within {timeout_s:g} s (the call's timeout_s)", model=cfg.model,
                                     llm_provider=cfg.provider) from None


def build_request(cfg: ModelConfig, messages: list[Any], **params: Any) -> dict[str, Any]:
    """The litellm arguments that decide the answer, as the caller asked (`provider_rules.prepare` then
    makes them acceptable to the provider; the cache is keyed on that); unset ones left out."""
    request = {**public_params(cfg), "messages": messages, **params}
    return {k: v for k, v in request.items() if v is not None}


def _how_to_configure(role: str) -> str:
    env = "CWORLD_JUDGE_MODELS" if role == "judge" else f"CWORLD_{role.upper()}_MODEL"
    return f"set {env} or models.{role} in the workspace config.yaml"


def _supports_json_mode(model: str) -> bool:
    """Whether litellm knows the provider accepts `response_format`; unknown means don't send it."""
    return provider_rules.capabilities(model).json_mode
