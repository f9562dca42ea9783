"""The offline synthesizer: tasks from workflow blocks composed against a seeded probe session, no LLM."""

from cworld.synth.offline.drafter import OfflineDrafter, Revision, composable_tools

__all__ = ["OfflineDrafter", "Revision", "composable_tools"]
