"""Reports over runs: the leaderboard (markdown), the self-contained HTML report, reliability statistics
and judge accountability. Everything written goes through the redaction of `cworld.redact`.

    result = build_report([run_dir], out_dir)   # leaderboard.md + report.html
"""

from cworld.report.build import HTML_FILE, MARKDOWN_FILE, ReportResult, build_report
from cworld.report.stats import Estimate, bootstrap_mean, flip_share, pass_at_k, pass_hat_k, spearman

__all__ = [
    "HTML_FILE",
    "MARKDOWN_FILE",
    "Estimate",
    "ReportResult",
    "bootstrap_mean",
    "build_report",
    "flip_share",
    "pass_at_k",
    "pass_hat_k",
    "spearman",
]
