"""The small error hierarchy for bugs and bad input in cworld itself.

Tool failures are never raised: they are `ToolResult`s with `is_error` (see `data_model.tools`).
Everything here is something the *user* can act on, so every message says what to do.
"""

from __future__ import annotations


class CworldError(Exception):
    """Base class: the CLI prints `str(err)` on one line and exits non-zero."""

    exit_code = 1


class UsageError(CworldError):
    """A wrong argument, file or option given by the user."""

    exit_code = 2


class ConfigError(CworldError):
    """A wrong or missing configuration value (model names, environment folders, workspace)."""

    exit_code = 2


class ContentError(CworldError):
    """An environment content file (YAML/JSON) that does not validate; names the file and field."""

    exit_code = 2


class ModelError(CworldError):
    """An LLM call failed for good (auth, bad request, unknown model, exhausted repairs)."""


class ReplyCut(ModelError):
    """Every JSON reply was cut at its output budget: the model ran on (a reply too long, not prose), so a
    caller that can go on without the answer (a planner's progress update) may, and says so."""


class MockScriptExhausted(ModelError):
    """The mock provider was asked for more outputs than its script holds."""


class MissingDependency(CworldError):
    """An optional heavy dependency is not installed; the message says what to install."""


class RunStopped(CworldError):
    """A model role failed past its retries mid-run under `on_model_failure: stop`: the run ends, its
    finished episodes kept (`cworld run --resume` goes on once the model is back)."""


class InfraError(CworldError):
    """Infrastructure failed (a server crashed for good, the engine model is down): never the agent's fault."""
