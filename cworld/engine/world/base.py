"""The world of one seed: every server's records, built before any task and independent of every task.

A `World` holds, per server, a state in the layout that server keeps: for a sandbox app its seeded state
(`{collection: {key: record}, ...}` plus app-level values such as the shop's cart), for any other server
a generated state of the entity kinds its card declares (`{collection: {key: record}}`, one collection
per kind). `kinds` names, per server, the collection that holds each card entity kind, so card-level
rules written in the card's vocabulary (`product`, `order`) reach the server's own layout (`catalog`,
`orders`). `ids` continues each server's id sequences (`ord` -> 3 means the next order is `ord_0004`),
and `now` is the seed's clock: the moment the world starts at.

Nothing in a world is read from a task, a gold plan or ground truth: tasks are drawn over worlds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cworld.data_model.jsonl import write_text_atomic
from cworld.engine.world.layout import at, resolved
from cworld.errors import UsageError

#: Bumped whenever what a world holds changes: a saved world of another format is rebuilt (loaded
#: records, a user's own data, are kept).
WORLD_FORMAT = 11
#: The file of a seed's folder that says which seed and clock its server files belong to.
META_FILE = "_world.json"


@dataclass
class ServerWorld:
    """One server's records at the start of every episode of a seed."""

    server: str
    state: dict[str, Any]
    #: card entity kind -> the state collection holding its records
    kinds: dict[str, str] = field(default_factory=dict)
    #: card the server's world was generated for (None for sandbox apps, whose layout is their own)
    card: str | None = None
    #: id prefix -> the last number used (the next id is `prefix_{n+1:04d}`)
    ids: dict[str, int] = field(default_factory=dict)
    #: where the records came from: "sandbox", "generated" or "loaded:<file name>"
    source: str = "generated"
    #: what the service knows beyond its records, from the seed alone (finance's market): rules' constants
    reference: dict[str, Any] = field(default_factory=dict)
    #: kinds the server's tools name that its card lacks (`world/named.py`), as card entity definitions
    named_kinds: list[dict[str, Any]] = field(default_factory=list)
    #: collection -> the fields whose values, joined by `|`, key its records where the service keys them by what
    #: they hold (a knowledge graph's relation by its ends and type: `from|relationType|to`)
    keys: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # a kind naming a value held once reaches the collection inside it (`cart` -> `cart.items`, layout.py),
        # for worlds saved before layouts named paths too
        self.kinds = resolved(self.state, self.kinds)

    def collection(self, kind_or_name: str) -> dict[str, Any] | None:
        """The `{key: record}` map of a card entity kind, a state collection name or a layout path (`cart.items`);
        None if absent."""
        found = at(self.state, self.kinds.get(kind_or_name, kind_or_name))
        return found if isinstance(found, dict) else None

    def sizes(self) -> dict[str, int]:
        """Records per collection (top-level maps of records)."""
        return {name: len(value) for name, value in self.state.items()
                if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())}

    def to_json(self) -> dict[str, Any]:
        return {"format": WORLD_FORMAT, "server": self.server, "card": self.card, "source": self.source,
                "kinds": self.kinds, "ids": self.ids, "state": self.state,
                **({"reference": self.reference} if self.reference else {}),
                **({"named_kinds": self.named_kinds} if self.named_kinds else {}),
                **({"keys": self.keys} if self.keys else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "world file") -> ServerWorld:
        if not isinstance(data, dict) or not isinstance(data.get("state"), dict) or "server" not in data:
            raise UsageError(f"{where} is not a cworld world (needs 'server' and a 'state' object); "
                             "write it with `cworld world build` or `cworld world load`")
        return cls(server=str(data["server"]), state=data["state"], kinds=dict(data.get("kinds") or {}),
                   card=data.get("card"), ids={k: int(v) for k, v in (data.get("ids") or {}).items()},
                   source=str(data.get("source") or "generated"), reference=dict(data.get("reference") or {}),
                   named_kinds=list(data.get("named_kinds") or []), keys=_keys(data.get("keys"), where))


def _keys(value: Any, where: str) -> dict[str, list[str]]:
    """A world file's `keys`: collection -> the fields that key its records; a one-line error otherwise."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(f, list) and f and all(isinstance(x, str) for x in f)
                                              for f in value.values()):
        raise UsageError(f"{where}: 'keys' must map a collection to the fields that key its records, "
                         'for example {"relations": ["from", "relationType", "to"]}')
    return {str(k): list(v) for k, v in value.items()}


@dataclass
class World:
    """Every server's world for one seed, and the moment it starts at (ISO 8601, UTC)."""

    seed: int
    now: str
    servers: dict[str, ServerWorld] = field(default_factory=dict)

    def server(self, name: str) -> ServerWorld | None:
        return self.servers.get(name)

    def save(self, folder: Path) -> Path:
        """One JSON file per server under `folder/seed-N/`, written atomically (a crash keeps the old one)."""
        out = folder / f"seed-{self.seed}"
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out / META_FILE, {"format": WORLD_FORMAT, "seed": self.seed, "now": self.now})
        for name, sw in self.servers.items():
            write_json_atomic(out / f"{_file_name(name)}.json", sw.to_json())
        return out

    @classmethod
    def load(cls, folder: Path, seed: int, servers: Iterable[str] | None = None) -> World | None:
        """The saved world of `seed`, or None when none was built; `servers` reads only those servers'
        files (a saved world of every harvested server is tens of megabytes)."""
        where = folder / f"seed-{seed}"
        meta_file = where / META_FILE
        if not meta_file.is_file():
            return None
        meta = _read_json(meta_file)
        world = cls(seed=seed, now=str(meta.get("now", "")) if isinstance(meta, dict) else "")
        if not world.now:
            raise UsageError(f"{meta_file}: not a cworld world (no 'now'); rebuild it with `cworld world build`")
        paths = (sorted(p for p in where.glob("*.json") if p.name != META_FILE) if servers is None
                 else [where / f"{_file_name(s)}.json" for s in servers])
        for path in paths:
            if path.is_file():
                data = _read_json(path)
                sw = ServerWorld.from_json(data, str(path))
                if data.get("format") == WORLD_FORMAT or sw.source.startswith("loaded:"):
                    world.servers[sw.server] = sw
        return world


def _read_json(path: Path) -> Any:
    """A saved world file; a damaged one is one line naming it, not a traceback."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a readable world file ({exc}); rebuild it with `cworld world build`") from None


def _file_name(server: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in server)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write beside `path`, then rename: a crash leaves the old file whole. Keys keep their order (it is
    deterministic), so a loaded world lists its records as the built one did (`2` before `10`)."""
    write_text_atomic(path, json.dumps(data, ensure_ascii=False))


#: Fields that hold a secret a login checks (a record holding one is an account someone logs in to).
SECRET_FIELDS = ("password", "pin", "passcode", "passphrase", "secret")
