"""Which provider failures are worth retrying, and the one-line message for those that are not.

Transient: rate limits, timeouts, connection drops, 5xx. Permanent: bad key, unknown model, rejected
request; retrying those only burns time, so they become a `ModelError` that says what to fix. A missing
key counts as an authentication failure even where the provider SDK reports it as a 500 (openai's
"Missing credentials" arrives as an `InternalServerError`), so it is never retried as an outage.
"""

from __future__ import annotations

import re
from typing import Any

from cworld.errors import ConfigError, CworldError, InfraError, ModelError
from cworld.llm._loader import load_litellm
from cworld.redact import Redactor


class ModelUnavailable(ModelError, InfraError):
    """Transient failures outlasted every retry: the model is down or overloaded, not the caller's fault.
    Both a `ModelError` (an LLM call failed for good) and an `InfraError` (never counted against an agent)."""


class CredentialError(ModelError, ConfigError):
    """A key is missing or the provider refused it: the user's to fix, never an outage (exit code 2)."""


# What SDKs say when no key (or a wrong one) reached them, whatever exception class they pick for it.
_AUTH_WORDS = re.compile(
    r"missing credentials|api_key client option must be set|no api key|invalid api key|incorrect api key|"
    r"invalid x-api-key",
    re.IGNORECASE,
)
_AUTH_STATUS = (401, 403)

_TRANSIENT_NAMES = (
    "RateLimitError",
    "Timeout",
    "APIConnectionError",
    "ServiceUnavailableError",
    "InternalServerError",
    "BadGatewayError",
)
_PREFIX = re.compile(r"^(?:(?:litellm\.)?[A-Za-z]+(?:Error|Exception|Timeout)\s*[:\-]\s*)+")


def cworld_cause(exc: BaseException) -> CworldError | None:
    """litellm wraps whatever a custom provider raises; find our own error (e.g. a spent mock script)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, CworldError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def is_auth_failure(exc: BaseException) -> bool:
    """A missing, wrong or under-privileged key, by class, HTTP status or the provider's words."""
    litellm = load_litellm()
    if isinstance(exc, litellm.AuthenticationError | litellm.PermissionDeniedError):
        return True
    if getattr(exc, "status_code", None) in _AUTH_STATUS:
        return True
    from_sdk = (type(exc).__module__ or "").startswith(("litellm", "openai"))
    return from_sdk and bool(_AUTH_WORDS.search(str(exc)))


def is_timeout(exc: BaseException) -> bool:
    """The call outlasted its timeout (`ModelConfig.timeout_s`): a slow reply, not a refused one."""
    return isinstance(exc, load_litellm().Timeout | TimeoutError)


def is_transient(exc: BaseException) -> bool:
    if cworld_cause(exc) is not None or is_auth_failure(exc):
        return False
    litellm = load_litellm()
    if isinstance(exc, tuple(getattr(litellm, name) for name in _TRANSIENT_NAMES)):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(exc, litellm.APIError) and isinstance(status, int) and status >= 500


def detail(exc: BaseException, secret: str | None = None) -> str:
    """The provider's own words: first line, class-name prefixes stripped, kept short, and masked: the
    call's key, and any credential of the environment (the SDK may have read the key itself)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = _PREFIX.sub("", lines[0]) if lines else type(exc).__name__
    if secret:
        text = text.replace(secret, "***")
    text = Redactor.from_env().text(text)
    return text[:200] + ("..." if len(text) > 200 else "")


def key_hint(model: str, api_key_env: str | None) -> str:
    """Which env var to set for this model, from the config or from litellm's knowledge of the provider."""
    if api_key_env:
        return api_key_env
    try:
        missing = load_litellm().validate_environment(model).get("missing_keys") or []
    except Exception:  # litellm raises many kinds here for odd model strings; the hint is best effort
        missing = []
    return " and ".join(missing) if missing else "the provider's API key variable (or api_key_env in config)"


def permanent_message(exc: BaseException, model: str, api_key_env: str | None, secret: str | None) -> str:
    litellm = load_litellm()
    said = detail(exc, secret)
    if isinstance(exc, litellm.PermissionDeniedError) or getattr(exc, "status_code", None) == 403:
        return f"permission denied ({said}); check the key's access to this model"
    if is_auth_failure(exc):
        return f"authentication failed; set {key_hint(model, api_key_env)}"
    if isinstance(exc, litellm.NotFoundError):
        return f"not found at the provider ({said}); check the model name and api_base"
    if isinstance(exc, litellm.ContextWindowExceededError):
        return "the prompt exceeds the model's context window; shorten the conversation or pick a larger model"
    if isinstance(exc, litellm.ContentPolicyViolationError):
        return f"refused by the provider's content policy ({said})"
    if "LLM Provider NOT provided" in str(exc) or isinstance(exc, litellm.exceptions.LiteLLMUnknownProvider):
        return "unknown provider; use a litellm model string such as 'openai/gpt-4o-mini' or 'mock/NAME'"
    if isinstance(exc, litellm.BadRequestError | litellm.UnprocessableEntityError):
        return f"request rejected ({said}); fix the request or the model's parameters in config"
    return f"call failed with {type(exc).__name__} ({said})"


def model_error(
    exc: BaseException, *, model: str, role: str | None, api_key_env: str | None, secret: str | None, attempts: int
) -> CworldError:
    """The error to raise for a failure that is final (permanent, or transient with retries spent)."""
    own = cworld_cause(exc)
    if own is not None:
        return own
    where = f"model '{model}'" + (f" for role '{role}'" if role else "")
    if is_auth_failure(exc):
        return CredentialError(f"{where}: {permanent_message(exc, model, api_key_env, secret)}")
    if is_timeout(exc):
        return ModelUnavailable(
            f"{where}: no reply within the call's timeout after {attempts} attempt(s) ({detail(exc, secret)}); "
            f"raise budgets.{role or 'ROLE'}.timeout_s in config.yaml, lower max_tokens, or use a faster model"
        )
    if is_transient(exc):
        return ModelUnavailable(
            f"{where}: {type(exc).__name__} after {attempts} attempt(s) ({detail(exc, secret)}); "
            "the model is unreachable or overloaded: retry later or lower max_concurrency"
        )
    return ModelError(f"{where}: {permanent_message(exc, model, api_key_env, secret)}")


def is_provider_error(exc: BaseException) -> bool:
    """Errors raised by litellm or the provider SDK (as opposed to a bug that should surface as is)."""
    module: Any = type(exc).__module__ or ""
    return module.startswith(("litellm", "openai", "httpx")) or cworld_cause(exc) is not None
