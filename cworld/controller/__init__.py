"""The state controller: middleware between agent and backend that injects faults (paper §2.3).

    controller = build_controller(task, mode="live", policy="default", seed=0, agent="scripted:oracle",
                                  env=env, workspace=ws, tools=environment_tools(env, ws).episode())
    await controller.open()
    outcome = await controller.call(tool_spec, {"query": "x"}, turn=1)   # CallOutcome(raw, observation, ...)
    for text, constraint, record in controller.due_user_messages(turn): ...
    end = await controller.end_state(); await controller.close()
"""

from cworld.controller.alternatives import similar_tools
from cworld.controller.backend import Backend
from cworld.controller.backends import LiveResources
from cworld.controller.controller import CallOutcome, FaultReport, StateController
from cworld.controller.factory import MODES, build_backend, build_controller, default_engine
from cworld.controller.faults import FAULT_TYPES, GARBLE, TRUNCATION_MARKER, Fault, is_login, is_read
from cworld.controller.middleware import CallContext, CallNext, Middleware
from cworld.controller.planning import (
    FaultSchedule,
    PlannedFault,
    ScheduledFault,
    fault_multiset,
    plan_faults,
    time_faults,
)
from cworld.controller.policy import Policy, load_policy, policy_names

__all__ = [
    "FAULT_TYPES",
    "GARBLE",
    "MODES",
    "TRUNCATION_MARKER",
    "Backend",
    "CallContext",
    "CallNext",
    "CallOutcome",
    "Fault",
    "FaultReport",
    "FaultSchedule",
    "LiveResources",
    "Middleware",
    "PlannedFault",
    "Policy",
    "ScheduledFault",
    "StateController",
    "build_backend",
    "build_controller",
    "default_engine",
    "fault_multiset",
    "is_login",
    "is_read",
    "load_policy",
    "plan_faults",
    "policy_names",
    "similar_tools",
    "time_faults",
]
