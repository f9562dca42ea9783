"""Task synthesis (C-World §2.2): sample tools → draft → check → revise → fuzzy rewrite → verify by execution.

    result, summary = await synthesize(Environment.resolve(), Workspace.resolve(), SynthOptions(n=50))

Without a `synth` model the offline synthesizer drafts from workflow blocks over the seeded sandbox; with
one, the LLM drafts, revises, critiques and rewrites. See docs/task-synthesis.md.
"""

from cworld.synth.api import prepare, run_prepared, synth_model, synthesize
from cworld.synth.draft import Draft
from cworld.synth.options import SynthOptions
from cworld.synth.scheduler import Hooks, RunResult
from cworld.synth.summary import SynthSummary, render_lines

__all__ = [
    "Draft",
    "Hooks",
    "RunResult",
    "SynthOptions",
    "SynthSummary",
    "prepare",
    "render_lines",
    "run_prepared",
    "synth_model",
    "synthesize",
]
