"""`make bench`: every benchmark script in turn, each in its own process so one's imports and caches
do not colour another's figures. Pass names to run a subset: `python benchmarks/run_all.py sandbox llm`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ("foundation", "bench_sandbox", "bench_index", "retrieval", "engine_fidelity", "bench_controller",
           "bench_rollout", "bench_synth")


def main(only: list[str]) -> int:
    failed = []
    for name in SCRIPTS:
        if only and not any(o in name for o in only):
            continue
        print(f"\n===== {name}", flush=True)
        if subprocess.call([sys.executable, str(HERE / f"{name}.py")]) != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
