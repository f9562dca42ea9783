"""The app template: `SandboxApp`, `@tool`, `AppError`, `SandboxSession`, `SandboxWorld`, the knowledge base."""

from cworld.sandbox.framework.app import Prerequisite, SandboxApp
from cworld.sandbox.framework.session import SandboxSession, SandboxWorld, VirtualClock
from cworld.sandbox.framework.tools import AppError, ToolMeta, tool

__all__ = ["AppError", "Prerequisite", "SandboxApp", "SandboxSession", "SandboxWorld", "ToolMeta", "VirtualClock", "tool"]
