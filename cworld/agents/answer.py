"""A scripted agent's final answer, shaped by the constraints it knows about.

Machine-checkable answer constraints (`verification.kind`) are honoured: `final_answer_contains`
(add a line starting with the required text), `final_answer_format: bullets`, and
`final_answer_max_words` (keep the body short, never dropping a required line). An agent that does not
re-plan passes only the task's original constraints, so a requirement added mid-episode is missed.
"""

from __future__ import annotations

from collections.abc import Sequence

from cworld.data_model import Constraint


def compose_final(lines: Sequence[str], constraints: Sequence[Constraint], summary: str = "") -> str:
    checks = [c.verification or {} for c in constraints]
    body = [line for line in lines if line.strip()]
    required = [_required_line(str(v.get("value")), summary) for v in checks if v.get("kind") == "final_answer_contains"]
    if any(v.get("kind") == "final_answer_format" and v.get("value") == "bullets" for v in checks):
        body = [f"- {line.lstrip('- ')}" for line in body]
        required = [f"- {line}" for line in required]
    limits = [int(v["value"]) for v in checks if v.get("kind") == "final_answer_max_words" and _is_int(v.get("value"))]
    if limits:
        body = trim_to_words(body, min(limits) - sum(len(line.split()) for line in required))
    return "\n".join([*body, *required])


def _required_line(value: str, summary: str) -> str:
    return f"{value} {summary}".strip()


def trim_to_words(lines: Sequence[str], budget: int) -> list[str]:
    """Keep whole lines while they fit in `budget` words; cut the first line that does not."""
    out: list[str] = []
    left = max(0, budget)
    for line in lines:
        words = line.split()
        if len(words) <= left:
            out.append(line)
            left -= len(words)
        else:
            if left > 0:
                out.append(" ".join(words[:left]))
            break
    return out


def _is_int(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
