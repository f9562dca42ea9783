"""Reports over runs: the leaderboard (markdown), the self-contained HTML report, reliability statistics,
judge accountability, and the redaction every human-readable output goes through.

    result = build_report([run_dir], out_dir)   # leaderboard.md + report.html

`build_report` is loaded on first use: the judges import `cworld.report.redact`, and the report builder
imports the judges, so importing it here eagerly would be circular.
"""

from typing import Any

from cworld.report.redact import MASK, Redactor, redact
from cworld.report.stats import Estimate, bootstrap_mean, flip_share, pass_at_k, pass_hat_k, spearman

_LAZY = {"HTML_FILE", "MARKDOWN_FILE", "ReportResult", "build_report"}

__all__ = [
    "HTML_FILE",
    "MARKDOWN_FILE",
    "MASK",
    "Estimate",
    "Redactor",
    "ReportResult",
    "bootstrap_mean",
    "build_report",
    "flip_share",
    "pass_at_k",
    "pass_hat_k",
    "redact",
    "spearman",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from cworld.report import build

        return getattr(build, name)
    raise AttributeError(f"module 'cworld.report' has no attribute {name!r}")
