"""The Inspect AI task `cworld` (needs the `cworld[inspect]` extra):

    inspect eval cworld/harness/inspect_task.py@cworld --model mockllm/model -T tasks=FILE -T mode=synthesized
    inspect eval cworld/cworld --model openai/gpt-4o-mini -T tasks=FILE       # via the inspect_ai entry point

The machinery (dataset, the episode solver, the judges' scorer) is in `cworld.harness.inspect_bridge`.
"""

from __future__ import annotations

from inspect_ai import Task, task

from cworld.harness.inspect_bridge import SYSTEM_PROMPT, cworld_task


@task
def cworld(tasks: str | None = None, mode: str = "synthesized", policy: str = "default", access: str = "full",
           seed: int = 0, max_turns: int | None = None, out: str | None = None,
           system_prompt: str = SYSTEM_PROMPT) -> Task:
    """cworld tasks as an Inspect task.

    Args:
      tasks: a cworld tasks JSONL (default: the workspace's latest tasks file).
      mode: live, synthesized or hybrid (how the tools answer).
      policy: the fault policy (controller/policies/).
      access: tool access: full, search or rag-K.
      seed: the episode seed of epoch 1 (epoch e plays seed + e - 1).
      max_turns: turn limit per episode (default: the task's own budget).
      out: the run folder for the trajectories (default: a new runs/inspect-<time> in the workspace).
      system_prompt: the system message ("" for none).
    """
    return cworld_task(tasks, mode, policy, access, seed, max_turns, out, system_prompt)
