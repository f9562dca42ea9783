"""Fault types, one small class each, registered by kind (the names policies use).

tool level: timeout, rate_limit, unavailable, deprecated, network_error;
state level: delayed, corrupted, truncated, stale, session_expired;
constraint level: new_constraint.
"""

from cworld.controller.faults import constraint_level, state_level, tool_level
from cworld.controller.faults.base import (
    FAULT_TYPES,
    Fault,
    FaultEnv,
    FaultParams,
    PlanInput,
    Targeting,
    register,
)
from cworld.controller.faults.state_level import GARBLE, TRUNCATION_MARKER, is_login, is_read

__all__ = [
    "FAULT_TYPES",
    "GARBLE",
    "TRUNCATION_MARKER",
    "Fault",
    "FaultEnv",
    "FaultParams",
    "PlanInput",
    "Targeting",
    "constraint_level",
    "is_login",
    "is_read",
    "register",
    "state_level",
    "tool_level",
]
