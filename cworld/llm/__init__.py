"""The LLM gateway: every model call in cworld goes through `Gateway`, tagged with a role.

litellm underneath, imported lazily on the first call; `mock/NAME` is a built-in provider that plays
scripts (see `cworld.llm.mock`) so tests run the production path offline.
"""

from cworld.errors import MockScriptExhausted
from cworld.llm import mock
from cworld.llm.check import check_model, ping_model
from cworld.llm.completion import Completion, RequestedToolCall, TokenCount
from cworld.llm.failures import CredentialError, ModelUnavailable
from cworld.llm.gateway import Gateway
from cworld.llm.jsonrepair import extract_json
from cworld.llm.retry import RetryPolicy, set_default_retry

__all__ = [
    "Completion",
    "CredentialError",
    "Gateway",
    "MockScriptExhausted",
    "ModelUnavailable",
    "RequestedToolCall",
    "RetryPolicy",
    "TokenCount",
    "check_model",
    "extract_json",
    "mock",
    "ping_model",
    "set_default_retry",
]
