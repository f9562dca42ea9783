"""Which failures of the agent's model are the agent's own: they end its episode, never the run.

A model under test that answers prose where the planner needs JSON, or whose request the provider refuses
(a content policy, a context overflow, a parameter it rejects), has failed that episode: it is recorded as
`agent_error` and scored as a failure, and the run goes on. Everything else goes up as before: a model
that stays down (`ModelUnavailable`, an `InfraError`: the runner retries and records `infra_error`), a
refused or missing key (`CredentialError`, the user's to fix), a model or provider that does not exist
(a 404: the user's to fix), and a test's mock script that ran out or broke.
"""

from __future__ import annotations

from cworld.errors import ConfigError, InfraError, MockScriptExhausted, ModelError
from cworld.llm.mock import MockScriptError

NOT_FOUND = 404
_NOT_THE_AGENTS = (InfraError, ConfigError, MockScriptExhausted, MockScriptError)


def is_agent_failure(exc: BaseException) -> bool:
    if not isinstance(exc, ModelError) or isinstance(exc, _NOT_THE_AGENTS):
        return False
    return not _names_a_missing_model(exc)


def _names_a_missing_model(exc: BaseException) -> bool:
    """The provider said the model (or the provider itself) does not exist: a wrong name, not a failure."""
    cause = exc.__cause__
    if cause is None:
        return False
    return getattr(cause, "status_code", None) == NOT_FOUND or type(cause).__name__ == "LiteLLMUnknownProvider"
