"""The leaderboard as markdown: printed in the terminal and written to `leaderboard.md`."""

from __future__ import annotations

from cworld.judges.overall import BASIS_VERIFIABLE
from cworld.judges.runs import RunData
from cworld.report import fmt
from cworld.report.accountability import Accountability
from cworld.report.leaderboard import Column, Row

MAIN = ("overall", "success", "subgoals", "R_c", "schema_compliance", "constraints", "recovery", "flexibility", "tool_calls")
COMPACT = ("overall", "success", "subgoals", "R_c", "constraints", "recovery")
MORE = ("R_b", "order", "diversity", "efficiency", "turns", "calls_valid", "calls_execution_failure",
        "calls_syntactic_error")


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def render(runs: list[RunData], rows: list[Row], columns: list[Column], acc: Accountability) -> str:
    by_key = {c.key: c for c in columns}
    judge_cols = [c for c in columns if c.key.startswith("judge:")]
    parts = ["# cworld leaderboard", "", *run_lines(runs), "", *basis_lines(rows), ""]
    parts += ["## Leaderboard", "", _leaderboard(rows, [by_key[k] for k in MAIN] + judge_cols), ""]
    parts += ["Means with bootstrap 95% intervals over tasks. pass@k and pass^k use k = the fewest verdicts any "
              "task has; flips = share of repeated tasks whose verdict changed between runs.", ""]
    parts += ["## Process metrics and call statistics (ComplexMCP table 2)", "",
              _metrics_table(rows, [by_key[k] for k in MORE]), ""]
    parts += ["## Judge accountability", "", *_accountability(acc), ""]
    return "\n".join(parts)


def render_compact(runs: list[RunData], rows: list[Row], columns: list[Column]) -> str:
    """The terminal version: the ranking with the headline numbers; the full tables are in the file."""
    by_key = {c.key: c for c in columns}
    cols = [by_key[k] for k in COMPACT] + [c for c in columns if c.key == "judge:completeness"]
    body = [[str(rank), r.label, str(r.episodes - r.infra), *[fmt.estimate(r.estimates[c.key], c.kind) for c in cols],
             fmt.share(r.pass_hat_k) + (f" (k={r.k})" if r.k else "")] for rank, r in enumerate(rows, 1)]
    board = table(["#", "Agent · mode · policy", "Episodes", *[c.label for c in cols], "pass^k"], body)
    return "\n".join(["# cworld leaderboard", "", *run_lines(runs), "", *basis_lines(rows), "", board])


def run_lines(runs: list[RunData]) -> list[str]:
    lines = []
    for run in runs:
        infra = sum(1 for e in run.episodes if not e.counted)
        judged = f"judged by {', '.join(run.judges)}" if run.judges else "no LLM judge"
        extra = f"; {run.scored_on_the_fly} scored here (verifiable only)" if run.scored_on_the_fly else ""
        infra_note = f"; {infra} infrastructure failure(s) not counted" if infra else ""
        lines.append(f"- run `{run.name}`: {len(run.episodes)} episode(s), {judged}{extra}{infra_note}")
    return lines


PRIVILEGED_NOTE = ("Agents marked **(privileged)** read the task's answer key (the gold plan and the final-answer "
                   "hints); the others see only the request, the tools and the observations.")


def basis_lines(rows: list[Row]) -> list[str]:
    lines = [PRIVILEGED_NOTE] if any(r.privileged for r in rows) else []
    return lines + _basis(rows)


def _basis(rows: list[Row]) -> list[str]:
    if rows and all(r.basis == BASIS_VERIFIABLE for r in rows):
        return ["**Judge dimensions are unscored** (no judge ran or none answered usably): the overall score "
                "uses the verifiable metrics only."]
    mixed = [r.label for r in rows if r.basis in (BASIS_VERIFIABLE, "mixed")]
    if mixed:
        return [f"Overall scores of {', '.join(mixed)} rest wholly or partly on verifiable metrics only "
                "(judge dimensions unscored for some episodes): compare them with care."]
    return []


def _leaderboard(rows: list[Row], columns: list[Column]) -> str:
    header = ["#", "Agent", "Mode", "Policy", "Episodes", *[c.label for c in columns[:2]],
              "pass@1", "pass@k (k)", "pass^k", "Flips", *[c.label for c in columns[2:]]]
    body = []
    for rank, r in enumerate(rows, 1):
        cells = [fmt.estimate(r.estimates[c.key], c.kind) for c in columns]
        body.append([str(rank), r.display_agent, r.mode, r.policy, f"{r.episodes - r.infra}", *cells[:2],
                     fmt.share(r.pass_at_1), f"{fmt.share(r.pass_at_k)} ({r.k})" if r.k else fmt.DASH,
                     fmt.share(r.pass_hat_k), fmt.share(r.flips), *cells[2:]])
    return table(header, body)


def _metrics_table(rows: list[Row], columns: list[Column]) -> str:
    body = [[r.label, *[fmt.estimate(r.estimates[c.key], c.kind) for c in columns]] for r in rows]
    return table(["Agent", *[c.label for c in columns]], body)


def _accountability(acc: Accountability) -> list[str]:
    if not acc.votes:
        return ["No judge votes in these runs.", "", acc.counts_line]
    body = []
    for judge in acc.judges:
        u = acc.usage.get(judge)
        body.append([judge, str(acc.votes[judge]), str(acc.unscored_votes.get(judge, 0)),
                     str(u.calls if u else 0), f"{u.prompt_tokens}+{u.completion_tokens}" if u else "0",
                     f"${u.cost_usd:.4f}" if u else "$0", str(u.cache_hits if u else 0)])
    lines = [table(["Judge", "Votes", "Unscored", "Calls", "Tokens (in+out)", "Cost", "Cache hits"], body), ""]
    if acc.pairs:
        pairs = [[f"{p.a} vs {p.b}", str(p.pairs), fmt.number(p.spearman), fmt.share(p.exact)] for p in acc.pairs]
        lines += [table(["Judge pair", "Items", "Spearman", "Exact vote agreement"], pairs), ""]
    lines.append(f"Split majority: {fmt.share(acc.split_rate)} of {acc.verdicts} verdict(s); "
                 f"{acc.unscored_dimensions} dimension verdict(s) unscored.")
    lines += ["", acc.counts_line]
    return lines
