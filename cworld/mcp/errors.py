"""Errors of the connection layer that the user (not the agent) has to act on."""

from __future__ import annotations

from cworld.errors import InfraError, UsageError


class ServerStartError(InfraError):
    """An MCP server did not complete its start and handshake: wrong command, missing key, crash at start.

    The message is one line: which server, what happened, the tail of its stderr when there is one.
    """


class NotConnectableError(UsageError):
    """A server spec that cannot be connected to as given (no command, no URL, a schema-only catalog)."""
