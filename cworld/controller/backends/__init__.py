"""Backends behind the one `Backend` protocol: live (sandbox + real servers), synthesized, hybrid."""

from cworld.controller.backends.hybrid import HybridBackend
from cworld.controller.backends.live import LiveBackend, is_live
from cworld.controller.backends.real import LiveResources, RealServerBackend
from cworld.controller.backends.sandbox import SandboxBackend
from cworld.controller.backends.synthesized import EngineBackend

__all__ = [
    "EngineBackend",
    "HybridBackend",
    "LiveBackend",
    "LiveResources",
    "RealServerBackend",
    "SandboxBackend",
    "is_live",
]
