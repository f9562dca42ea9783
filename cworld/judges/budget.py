"""How many characters of evidence one judge model is shown, sized to its context window.

A frontier judge reads 128k tokens or more; cutting every episode to the same few thousand characters
throws away the observations its verdict needs. The budget comes from litellm's model data
(`max_input_tokens`), a share of it so the rubric, the answer and a repair turn still fit, capped so
a long episode does not cost a fortune per dimension. A model litellm does not know (the mock, a local
server under an alias) gets a default that fits an 8k-token window. `cworld judge --evidence-chars N`
(or `CWORLD_JUDGE_EVIDENCE_CHARS`) sets it for every judge.
"""

from __future__ import annotations

from cworld.config import ModelConfig
from cworld.llm.tokens import max_input_tokens

DEFAULT_CHARS = 16_000
"""For a model of unknown context: about 5k tokens of evidence, which an 8k-token local model still takes."""
MAX_CHARS = 80_000
"""The cap for large windows: about 25k tokens per dimension and judge."""
MIN_CHARS = 2_000
CHARS_PER_TOKEN = 3.0
"""Conservative: JSON, ids and numbers run near 3 characters a token, prose near 4."""
CONTEXT_SHARE = 0.5
"""The evidence takes at most half the window: the prompt, the answer and a repair turn need the rest."""
RESERVED_TOKENS = 2_000
"""The system prompt, the rubric and the judge's answer."""


def evidence_budget(judge: ModelConfig, override: int | None = None) -> int:
    """Characters of evidence for `judge`: `override` when set, else derived from its context window."""
    if override is not None:
        return max(MIN_CHARS, override)
    window = max_input_tokens(judge.model)
    if window is None:
        return DEFAULT_CHARS
    room = (window - RESERVED_TOKENS - (judge.max_tokens or 0)) * CONTEXT_SHARE * CHARS_PER_TOKEN
    return int(min(MAX_CHARS, max(MIN_CHARS, room)))

