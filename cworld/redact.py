"""Secrets out of anything cworld writes for people to read (reports, judge prompts, SFT exports).

A trajectory can carry secrets it never should: an agent that echoes an API key it found, a server
that reflects an `Authorization` header in an error. Three things are masked:

- the values of environment variables whose names end in KEY, TOKEN, SECRET or PASSWORD (the
  credentials cworld itself was given), wherever they appear;
- `Bearer <token>` (an HTTP authorization value);
- `sk-...` keys (the OpenAI/Anthropic style key prefix).

    redactor = Redactor.from_env()
    safe = redactor.text(line)            # or redactor.value(json_like) for nested data
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

MASK = "[REDACTED]"
SECRET_NAME_SUFFIXES = ("KEY", "TOKEN", "SECRET", "PASSWORD")
#: Env values shorter than this are not treated as secrets: masking "1" or "true" everywhere would
#: garble a report and protect nothing.
MIN_SECRET_LEN = 6

_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?i)\bBearer\s+[A-Za-z0-9\-._~+/]+=*"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
)


def secret_env_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of env vars named like credentials (`OPENAI_API_KEY`, `GH_TOKEN`, `DB_PASSWORD`, ...)."""
    env = os.environ if env is None else env
    values = {v for k, v in env.items() if k.upper().endswith(SECRET_NAME_SUFFIXES) and len(v) >= MIN_SECRET_LEN}
    return sorted(values, key=len, reverse=True)  # longest first: a secret containing another goes whole


@dataclass(frozen=True)
class Redactor:
    literals: tuple[str, ...] = ()
    patterns: tuple[re.Pattern[str], ...] = field(default=_PATTERNS)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, extra: Iterable[str] = ()) -> Redactor:
        """Masks the environment's credentials (read now) plus `extra` literal secrets."""
        literals = [*secret_env_values(env), *(s for s in extra if len(s) >= MIN_SECRET_LEN)]
        return cls(tuple(sorted(set(literals), key=len, reverse=True)))

    def text(self, text: str) -> str:
        for literal in self.literals:
            if literal in text:
                text = text.replace(literal, MASK)
        for pattern in self.patterns:
            text = pattern.sub(MASK, text)
        return text

    def value(self, value: Any) -> Any:
        """The same structure with every string (keys included) redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(k)) if isinstance(k, str) else k: self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def leaks(self, text: str) -> list[str]:
        """The secrets still present in `text` (for checks before writing a file)."""
        found = [literal for literal in self.literals if literal in text]
        found += [m.group(0) for p in self.patterns for m in p.finditer(text)]
        return found


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """One-off: `text` with the environment's credentials and token patterns masked."""
    return Redactor.from_env(env).text(text)
