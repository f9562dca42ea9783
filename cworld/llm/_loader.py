"""The one place litellm is imported, lazily: the import costs 4-6 s, and commands that use no model
must not pay it. Loading also registers the built-in `mock` provider, so `mock/NAME` works everywhere.
"""

from __future__ import annotations

import os
import threading
from typing import Any

_lock = threading.Lock()
_litellm: Any = None  # the litellm module, once imported

MOCK_PROVIDER = "mock"


def load_litellm() -> Any:
    """Import litellm once (offline cost map, quiet) and make sure the mock provider is registered."""
    global _litellm
    if _litellm is None:
        with _lock:
            if _litellm is None:
                os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
                os.environ.setdefault("DISABLE_AIOHTTP_TRANSPORT", "True")  # read at import: see below
                import litellm

                litellm.suppress_debug_info = True
                # httpx, not litellm's aiohttp transport: the gateway makes one call per request and needs no
                # pooled aiohttp sessions, whose finalizers fail at interpreter exit ("Exception ignored in:
                # LiteLLMAiohttpTransport.__del__ ... TypeError") after every process that called a model
                litellm.disable_aiohttp_transport = True
                _litellm = litellm
    _ensure_mock_registered(_litellm)
    return _litellm


def _ensure_mock_registered(litellm: Any) -> None:
    """Append (never overwrite) our handler: someone may have reassigned the provider map since."""
    if any(item.get("provider") == MOCK_PROVIDER for item in litellm.custom_provider_map):
        return
    from cworld.llm.mock_provider import MockLLM

    litellm.custom_provider_map = [
        *litellm.custom_provider_map,
        {"provider": MOCK_PROVIDER, "custom_handler": MockLLM()},
    ]
    litellm.utils.custom_llm_setup()
