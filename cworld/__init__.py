"""cworld: create environments for LLM tool-using agents and run agents in them."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "make"]


def __getattr__(name: str) -> Any:
    """`cworld.make` loads lazily: it pulls in the controller, agents and rollout code."""
    if name == "make":
        from cworld.gym import make

        return make
    raise AttributeError(f"module 'cworld' has no attribute {name!r}")
