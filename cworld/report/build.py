"""Build a report over one or more runs: `leaderboard.md` and `report.html` in the output folder.

    result = build_report([run_a, run_b], out_dir)
    print(result.markdown)

Secrets are masked in everything written (see `cworld.redact`); as a last guard the finished
files are scanned again and any survivor is masked before writing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cworld.data_model import ToolSpec
from cworld.judges.content import JudgeContent
from cworld.judges.runs import RunData, load_runs
from cworld.redact import Redactor
from cworld.report import html, markdown
from cworld.report.accountability import Accountability, accountability
from cworld.report.drilldown import Text
from cworld.report.leaderboard import Row, build_rows

MARKDOWN_FILE = "leaderboard.md"
HTML_FILE = "report.html"


@dataclass
class ReportResult:
    out: Path
    markdown: str
    compact: str
    """The short leaderboard for a terminal."""
    markdown_path: Path
    html_path: Path
    runs: list[RunData]
    rows: list[Row]
    accountability: Accountability


def build_report(paths: list[Path], out: Path, *, content: JudgeContent | None = None,
                 tools: Mapping[str, ToolSpec] | None = None, redactor: Redactor | None = None,
                 extra_sections: Sequence[str] = ()) -> ReportResult:
    """Leaderboard markdown + self-contained HTML; `extra_sections` (e.g. the fidelity section) go at the end."""
    redactor = redactor or Redactor.from_env()
    runs = load_runs(paths, content or JudgeContent.from_environment(), tools or {})
    rows, columns = build_rows(runs)
    acc = accountability([e for run in runs for e in run.episodes])
    md = _safe(markdown.render(runs, rows, columns, acc), redactor)
    compact = _safe(markdown.render_compact(runs, rows, columns), redactor)
    page = _safe(html.render(runs, rows, columns, acc, Text(redactor), extra_sections), redactor)
    out.mkdir(parents=True, exist_ok=True)
    md_path, html_path = out / MARKDOWN_FILE, out / HTML_FILE
    md_path.write_text(md, encoding="utf-8")
    html_path.write_text(page, encoding="utf-8")
    return ReportResult(out, md, compact, md_path, html_path, runs, rows, acc)


def _safe(text: str, redactor: Redactor) -> str:
    return redactor.text(text) if redactor.leaks(text) else text
