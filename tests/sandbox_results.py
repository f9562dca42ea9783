"""Assertions the sandbox app tests share: a call that must succeed, or fail with a given error kind."""

from __future__ import annotations

from typing import Any


def ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def err(result: Any, kind: str) -> str:
    assert result.is_error, result.structured_content
    text = result.content[0].text
    assert text.startswith(f"{kind}:"), text
    return text
