"""The verifiers environment module `cworld-env` (the `cworld[verifiers]` extra):

    vf-eval cworld-env --env.taskset.tasks tasks.jsonl --model NAME --client.base-url URL

verifiers finds an environment by a top-level module name (`cworld-env` -> `cworld_env`); the environment
itself is `cworld.harness.verifiers_env`.
"""

from cworld.harness.verifiers_env import CworldEnv, CworldHarness, CworldTaskset, load_environment

__all__ = ["CworldEnv", "CworldHarness", "CworldTaskset", "load_environment"]
