"""The records that cross boundaries between cworld's parts; their JSON form is documented in docs/data-model.md."""

from cworld.data_model.jsonl import (
    append_jsonl,
    iter_jsonl,
    read_json,
    read_jsonl,
    write_jsonl_atomic,
    write_text_atomic,
)
from cworld.data_model.scores import DimensionScore, JudgeVote, Score
from cworld.data_model.tasks import (
    Constraint,
    PlanStep,
    PublicTask,
    Scenario,
    ScenarioEntity,
    ScenarioRelation,
    SubGoal,
    Task,
)
from cworld.data_model.tools import (
    ErrorClass,
    InstallSpec,
    ServerSpec,
    ToolAnnotations,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from cworld.data_model.trajectory import InfraErrorRecord, Intervention, ModelCall, Step, Trajectory, Usage
from cworld.data_model.versioning import SCHEMA_VERSION, Versioned

__all__ = [
    "SCHEMA_VERSION",
    "Constraint",
    "DimensionScore",
    "ErrorClass",
    "InfraErrorRecord",
    "InstallSpec",
    "Intervention",
    "JudgeVote",
    "PlanStep",
    "Score",
    "ServerSpec",
    "Step",
    "SubGoal",
    "PublicTask",
    "Scenario",
    "ScenarioEntity",
    "ScenarioRelation",
    "Task",
    "ToolAnnotations",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "Trajectory",
    "Usage",
    "ModelCall",
    "Versioned",
    "append_jsonl",
    "iter_jsonl",
    "read_json",
    "read_jsonl",
    "write_jsonl_atomic",
    "write_text_atomic",
]
