"""cworld tasks inside the evaluation harnesses people already use.

`cworld.harness.inspect_task` is an Inspect AI task over a cworld task file (install `cworld[inspect]`):

    inspect eval cworld/harness/inspect_task.py@cworld --model openai/gpt-4o-mini -T tasks=tasks.jsonl

This package imports no harness itself, so `import cworld` never pulls in inspect_ai. It ranks with the
gym API (13): it drives episodes through `cworld.gym` and scores them with `cworld.judges`.
"""
