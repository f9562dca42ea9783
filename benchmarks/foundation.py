"""Issue 2's figures in one run: per-call cost of an in-memory and a stdio MCP call, and the LLM gateway's
overhead on a mock completion against a bare litellm call. Ratios compare numbers taken in the same run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_llm  # noqa: E402
import bench_mcp  # noqa: E402


def main() -> None:
    print(json.dumps({"mcp": bench_mcp.run(), "llm_gateway": bench_llm.run()}, indent=2))


if __name__ == "__main__":
    main()
