"""Check each model a command will use once, before its first episode or call.

A missing key, a refused key or a misspelt model is the user's to fix, and it shows on the first call;
found mid-run it would cost retries, infrastructure restarts and a run folder of failed episodes. So a
command lists the (role, model) pairs it will use and `preflight` checks each distinct model once per
process: the model string, the key variable the provider needs (no network), then one 1-token call
(a refused key, an unknown model, a server that is not up). Mock models answer in-process and are
only checked as strings: a test may register the script after the command's setup, and a ping would
consume its outputs (a missing script is loud on the first call, never retried). Keyless local servers
(`api_base`, ollama, vLLM, LM Studio) skip the key check but still must answer. A failure is one line
naming the role, the model and what to set; the key's value is never printed.

`CWORLD_PREFLIGHT=0` skips it (a run replayed from the LLM cache needs no key).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_fixed

from cworld.config import ModelConfig, ModelsConfig, Role
from cworld.errors import ConfigError, CworldError
from cworld.llm import local_server
from cworld.llm._loader import MOCK_PROVIDER, load_litellm
from cworld.llm.check import ping_call, provider_of
from cworld.llm.connection import api_key
from cworld.llm.failures import (
    CredentialError,
    ModelUnavailable,
    cworld_cause,
    detail,
    is_auth_failure,
    is_provider_error,
    is_transient,
)
from cworld.llm.retry import default_retry

log = logging.getLogger("cworld.llm")

# Providers that serve from the user's machine and take no key (litellm still lists a base URL).
LOCAL_PROVIDERS = frozenset({"ollama", "ollama_chat", "lm_studio", "hosted_vllm", "vllm", "llamafile", "llamacpp"})
_ATTEMPTS = 2  # one retry of a transient failure: a blip must not stop a run, a dead server must not stall it
_TIMEOUT_S = 30.0
_WHERE_ELSE = {"agent": "--agent", "engine": "CWORLD_ENGINE_MODEL", "synth": "--model", "judge": "--judges"}

_passed: set[tuple[str, str, str]] = set()
_lock = threading.Lock()


def role_models(models: ModelsConfig, roles: Iterable[Role]) -> list[tuple[str, ModelConfig]]:
    """The (role, model) pairs of the roles a command uses that have a model configured."""
    return [(role, cfg) for role in roles for cfg in models.for_role(role)]


def preflight(uses: Iterable[tuple[str | None, ModelConfig]]) -> None:
    """Check every (role, model) once per process; the first failure raises a one-line `CworldError`."""
    if os.environ.get("CWORLD_PREFLIGHT", "").strip() == "0":
        return
    for role, cfg in uses:
        slot = (cfg.model, cfg.api_base or "", cfg.api_key_env or "")
        with _lock:
            if slot in _passed:
                continue
        check_use(role, cfg)
        with _lock:
            _passed.add(slot)


def forget() -> None:
    """Forget which models passed (tests that change the environment between checks)."""
    with _lock:
        _passed.clear()


def check_use(role: str | None, cfg: ModelConfig) -> None:
    """One model for one role: its string, its key variable, one 1-token call (or its mock script)."""
    where = _where(role, cfg)
    try:
        provider = provider_of(cfg)
    except ConfigError as bad:
        said, plain = str(bad), f"model '{cfg.model}'"
        raise ConfigError(where + said[len(plain):] if said.startswith(plain) else f"{where}: {said}") from None
    if provider == MOCK_PROVIDER:
        return
    key = _key(role, cfg, provider, where)
    _answer(role, cfg, key, where)


def missing_key_vars(cfg: ModelConfig, provider: str, env: dict[str, str] | None = None) -> list[str]:
    """The key variables the model needs and the environment lacks; none for keyless local servers."""
    env = dict(os.environ) if env is None else env
    if cfg.api_key_env:
        return [] if env.get(cfg.api_key_env) else [cfg.api_key_env]
    if provider in LOCAL_PROVIDERS or (cfg.api_base and provider == "openai"):
        return []
    try:
        missing = load_litellm().validate_environment(cfg.model).get("missing_keys") or []
    except Exception:  # litellm raises many kinds for odd model strings; the call itself will tell
        return []
    # Only keys and tokens: base URLs, regions and versions often have defaults or other sources.
    return [name for name in missing if name.endswith(("_API_KEY", "_TOKEN")) and not env.get(name)]


def _key(role: str | None, cfg: ModelConfig, provider: str, where: str) -> str | None:
    missing = missing_key_vars(cfg, provider)
    if missing:
        raise CredentialError(f"{where} needs {' and '.join(missing)}: set it in the environment "
                              f"({_instead(role)})")
    return api_key(cfg)


def _answer(role: str | None, cfg: ModelConfig, key: str | None, where: str) -> None:
    litellm = load_litellm()
    call = ping_call(cfg, key, _TIMEOUT_S)
    retrying = Retrying(stop=stop_after_attempt(_ATTEMPTS), wait=wait_fixed(default_retry().initial_s),
                        retry=retry_if_exception(lambda e: is_transient(e) and not _rate_limited(e)), reraise=True)
    try:
        retrying(lambda: litellm.completion(**call))
    except Exception as exc:
        if not is_provider_error(exc):
            raise
        problem = _refusal(exc, role, cfg, key, where)
        if problem is not None:
            raise problem from None
    log.debug("preflight: %s answered", where)


def _refusal(exc: BaseException, role: str | None, cfg: ModelConfig, key: str | None, where: str) -> CworldError | None:
    """The one-line error for a failed 1-token call; None when the failure proves the key works."""
    own = cworld_cause(exc)
    if own is not None:
        return own
    litellm = load_litellm()
    said = detail(exc, key)
    if _rate_limited(exc):
        if "quota" not in str(exc).lower():
            return None  # the provider accepted the key and is only busy: the run's retries handle that
        return ConfigError(f"{where}: the account is out of quota ({said}); add credit or {_instead(role)}")
    if is_auth_failure(exc):
        variable = _key_variable(cfg, provider_of(cfg))
        verb = "may not use this model" if _denied(exc) else "was refused"
        return CredentialError(f"{where}: the key in {variable} {verb} ({said}); set a valid key ({_instead(role)})")
    if isinstance(exc, litellm.NotFoundError) or _unknown_model(exc):
        return ConfigError(f"{where} is not known to the provider ({said}); check the name ({_instead(role)})")
    if is_transient(exc):
        dead = local_server.down(cfg.api_base)
        if dead is not None:
            return dead
        return ModelUnavailable(f"{where} did not answer ({type(exc).__name__}: {said}); start its server or check "
                                "api_base, or retry later")
    return ConfigError(f"{where} rejected a 1-token request ({said}); check the model's settings in config "
                       f"({_instead(role)})")


def _rate_limited(exc: BaseException) -> bool:
    return isinstance(exc, load_litellm().RateLimitError)


def _denied(exc: BaseException) -> bool:
    return isinstance(exc, load_litellm().PermissionDeniedError) or getattr(exc, "status_code", None) == 403


def _unknown_model(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, load_litellm().BadRequestError) and "model" in text and (
        "not found" in text or "does not exist" in text or "unknown model" in text or "no such model" in text
    )


def _key_variable(cfg: ModelConfig, provider: str) -> str:
    """Where the refused key came from: the configured variable, else the provider's usual one if set."""
    if cfg.api_key_env:
        return cfg.api_key_env
    usual = f"{provider.upper()}_API_KEY"
    return usual if os.environ.get(usual) else "the provider's key variable"


def _where(role: str | None, cfg: ModelConfig) -> str:
    return f"the {role} role's model '{cfg.model}'" if role else f"model '{cfg.model}'"


def _instead(role: str | None) -> str:
    flag = _WHERE_ELSE.get(role or "")
    return f"or pick another model with {flag} / config" if flag else "or pick another model in config"
