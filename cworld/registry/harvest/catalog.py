"""`registry/catalogs/harvested/`: one JSON file per harvested server (its tools and their provenance) and
`summary.json` (every server tried, failures classified). The registry loads each file as a schema-only
catalog through the same loader as any other (`manifest.load_catalog`)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from cworld.data_model import ServerSpec
from cworld.data_model.jsonl import write_text_atomic
from cworld.environment import Environment
from cworld.errors import ContentError
from cworld.registry.harvest.cards import differing_cards, server_card

HARVESTED_DIR = Path("catalogs") / "harvested"
SUMMARY = "summary.json"



def harvested_dir(env: Environment) -> Path:
    return env.registry / HARVESTED_DIR


def write_json(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False, sort_keys=False) + "\n")


def server_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if p.name != SUMMARY)


def harvested_specs(env: Environment, taken: set[str] | None = None) -> list[ServerSpec]:
    """A schema-only catalog server per harvested file; an id the manifest already uses is an error."""
    folder = harvested_dir(env)
    specs = []
    for path in server_files(folder):
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ContentError(f"{path}: not a readable harvested catalog ({exc})") from None
        if not isinstance(head, dict) or not isinstance(head.get("tools"), list):
            raise ContentError(f"{path}: a harvested catalog is an object with `tools` and `provenance`")
        sid = str(head.get("server") or path.stem)
        if taken and sid in taken:
            raise ContentError(f"{path}: server id '{sid}' is already used in servers.yaml")
        field = str(head.get("category", ""))
        card = server_card(sid, field)
        names = [str(t.get("name")) for t in head["tools"] if isinstance(t, dict) and t.get("name")]
        specs.append(
            ServerSpec(
                id=sid,
                kind="catalog",
                transport="catalog",
                description=str(head.get("summary", "")),
                catalog=str(HARVESTED_DIR / path.name),
                category_hints=[card] if card else [],
                tool_categories=differing_cards(sid, field, names),
            )
        )
    return specs


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over every server tried: ok, tools, failure classes, and categories."""
    ok = [r for r in results if r.get("status") == "ok"]
    return {
        "servers_tried": len(results),
        "servers_ok": len(ok),
        "tools": sum(int(r.get("tools", 0)) for r in ok),
        "listed_offline": sum(1 for r in results if r.get("offline")),
        "failures": dict(sorted(Counter(str(r.get("failure")) for r in results if r.get("failure")).items())),
        "categories": dict(sorted(Counter(str(r.get("category")) for r in ok).items())),
        "registries": dict(sorted(Counter(str(r.get("registry")) for r in ok).items())),
        "servers": results,
    }
