"""The offline synthesizer's workflow blocks, one module per sandbox app they drive.

A block that calls tools of two apps lives with the app it mainly drives (most of its calls, and the
state it changes): `stock` (bank and calculator) is in `finance`, `locked_doc` (inbox and documents) in
`docs`. Each module `<app>.py` has its sentences in `task_synth/templates/<app>.yaml`, names that file
in `APP`, and lists its blocks in `BLOCKS`.
"""

from __future__ import annotations

from cworld.synth.offline.blocks import (
    calendar,
    chat,
    clock,
    crm,
    dates,
    docs,
    finance,
    mail,
    shop,
    taskboard,
    travel,
    units,
)
from cworld.synth.offline.composer import Block

MODULES = (calendar, chat, clock, crm, dates, docs, finance, mail, shop, taskboard, travel, units)
#: The order the drafter enumerates block combinations in: part of what a seed produces, so new blocks go
#: at the end.
ORDER = (
    "flight",
    "hotel",
    "meeting",
    "trip_event",
    "reminder",
    "email",
    "chat_post",
    "chat_dm",
    "doc_note",
    "purchase",
    "transfer",
    "stock",
    "currency",
    "card",
    "overdue",
    "workdays",
    "locked_doc",
    "crm",
    "hotel_after",
)


def all_blocks() -> list[Block]:
    """Every block, in `ORDER` (then any block `ORDER` does not name yet)."""
    found = {b.name: b for module in MODULES for b in module.BLOCKS}
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(found.values(), key=lambda b: rank.get(b.name, len(rank)))


__all__ = ["MODULES", "ORDER", "all_blocks"]
