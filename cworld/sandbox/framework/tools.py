"""The `@tool` decorator and the business error every sandbox tool raises.

A sandbox tool is a plain (sync) method with type hints: parameters use `Annotated[T, Field(description=...)]`,
the return type is a pydantic model or a typed value, so the MCP server derives input and output schemas.
The decorator records the MCP annotations, which must be true (a read-only tool never changes state;
the conformance test checks it).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

AppErrorKind = Literal[
    "not_found", "permission_denied", "conflict", "insufficient_funds", "auth", "invalid", "precondition", "limit"
]

#: How an app error kind maps onto cworld's ToolResult error classes.
ERROR_CLASS_OF_KIND: dict[str, str] = {
    "not_found": "not_found",
    "auth": "auth",
    "invalid": "invalid_args",
    "permission_denied": "business",
    "conflict": "business",
    "insufficient_funds": "business",
    "precondition": "business",
    "limit": "business",
}


class AppError(Exception):
    """A business error: returned to the agent as an `isError` result; the call changes nothing."""

    def __init__(self, kind: AppErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True)
class ToolMeta:
    name: str
    description: str
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool = False


def tool(
    *,
    read_only: bool,
    destructive: bool = False,
    idempotent: bool | None = None,
    name: str | None = None,
) -> Callable[[F], F]:
    """Mark a method as an MCP tool. The docstring's text is the tool description."""

    def mark(fn: F) -> F:
        doc = inspect.getdoc(fn) or ""
        if not doc:
            raise TypeError(f"tool {fn.__qualname__} needs a docstring: it is the description agents read")
        fn.__cworld_tool__ = ToolMeta(  # type: ignore[attr-defined]
            name=name or fn.__name__,
            description=doc,
            read_only=read_only,
            destructive=destructive and not read_only,
            idempotent=read_only if idempotent is None else idempotent,
        )
        return fn

    return mark


def tool_meta(fn: Any) -> ToolMeta | None:
    return getattr(fn, "__cworld_tool__", None)
