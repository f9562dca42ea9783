"""SFT export (paper §5.5): trajectories -> chat fine-tuning data in the `openai`, `sharegpt` or `hf` format.

    summary = export_sft([run_dir], "openai", Path("sft.jsonl"), ExportFilters(first_round=True), catalog)
    assert check_openai_file(Path("sft.jsonl")) == []

Formats, filters and choices are documented in docs/export-and-fidelity.md.
"""

from cworld.data_model.tool_names import ToolNames, split_name
from cworld.export.check_openai import check_openai_file, check_openai_record
from cworld.export.conversation import Conversation, ConversationBuilder, Turn
from cworld.export.selection import Episode, ExportFilters, FirstRound, judge_agreement, load_runs
from cworld.export.sft import FORMATS, export_sft, summary_path
from cworld.export.sharegpt import check_sharegpt_record

__all__ = [
    "FORMATS",
    "Conversation",
    "ConversationBuilder",
    "Episode",
    "ExportFilters",
    "FirstRound",
    "ToolNames",
    "Turn",
    "check_openai_file",
    "check_openai_record",
    "check_sharegpt_record",
    "export_sft",
    "judge_agreement",
    "load_runs",
    "split_name",
    "summary_path",
]
