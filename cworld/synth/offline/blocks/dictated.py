"""The texts a block writes on the person's behalf (a mail, a post, a note, a comment) are said word for word
in the request, so an agent that reads only the request can write the very text the end state holds.

A text that quotes a result (a reference the plan resolves when it runs: a price, a booking's number) cannot
be dictated without giving that result away, and a double quote would end the dictation early.
"""

from __future__ import annotations

from cworld.synth.offline.composer import BlockFailed


def dictated(text: str) -> str:
    """`text`, checked to be sayable as it stands; `BlockFailed` when it quotes a result or a double quote."""
    if "{{" in text or '"' in text:
        raise BlockFailed(f"a dictated text must hold only what the request states: {text[:60]!r}")
    return text
