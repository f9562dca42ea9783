"""The world of the offline real servers (memory, filesystem, git, sqlite): their initial state as a live
episode's launch prepares it, read into records.

A live episode launches each of these servers against scratch space made fresh for it
(`cworld.registry.launch`: `{scratch}` a folder seeded with a few small files, `{scratch:git}` a
repository with one commit, a staged file and an unstaged change, `{scratch:sqlite}` a database with an
`items` table; `registry/servers.yaml`). Their world is exactly that: `real_server_world` resolves the
server's manifest entry in a `LaunchContext` whose scratch root is a temporary folder - the same code the
live backend runs (`controller/backends/real.py`), so the same files, repository and database - and reads
what it made. Paths in the world are shown under `/scratch` (`WORLD_SCRATCH`), where a live episode has
`<workspace>/scratch/episodes/<episode>`: the agent learns them from the server (`list_allowed_directories`)
or the task, as live. A world depends on the seed only through its clock (file times, the commit's date
and so its sha): same seed, same world, in any process.

Layouts (the state each server's rules in `category_cards/_operations/<server>.yaml` run on):

- **filesystem**: `root` (the allowed folder, `/scratch/filesystem`); `files` {relative path: {parent,
  content, size, created, modified}} (`parent` the relative path of its folder, `""` for the root;
  `content` the text a read returns, the bytes decoded as UTF-8 with replacement; `size` in bytes; a file
  whose bytes are not UTF-8, `pixel.png`, also keeps them as `base64`); `directories` {relative path:
  {parent}} (the root itself is no record). A file's name is its key's last part.
- **memory**: the knowledge graph in the server's file (`MEMORY_FILE_PATH`): `entities` {name: {name,
  entityType, observations}} and `relations` {"from|relationType|to": {from, to, relationType}}, in the
  file's order (a second entity of the same name, or a second same relation, which the server keeps when
  one create call gives both, is keyed `<key>\x1f2`); the live launch starts it empty (no file yet).
- **git**: `repo` (the allowed repository, `/scratch/git/repo`); `head` {branch, commit} (`branch` None
  when detached at `commit`); `branches` {name: {commit}}; `commits` {sha: {message, author, email,
  date, parents, tree}} (`tree` {path: {content, blob}}; oldest first, a commit's date orders the log);
  `index` {path: {content, blob}} (what the next commit records); `worktree` {path: {content, blob}}
  (the files on disk; `blob` their git object id). The initial commit's dates are the seed's clock, its
  sha recomputed for them (the scratch commit's own dates are the wall clock's).
- **sqlite**: `path` (the database, `/scratch/sqlite/db.sqlite`); `tables` {name: {sql, columns, rows}}
  (`columns` as `PRAGMA table_info` lists them: {cid, name, type, notnull, dflt_value, pk}; `rows`
  {rowid: {column: value}}) in `sqlite_master`'s order; `memo` {insights: []} (the business-insights
  memo the server keeps in memory, empty at launch).

`read_state(server, paths)` reads a prepared (or live, after an episode) scratch the same way, so a live
end state compares leaf by leaf with the world engine's (`benchmarks/world_fidelity_real.py`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sqlite3
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cworld.data_model import ServerSpec
from cworld.engine.world.base import ServerWorld
from cworld.registry.launch import LaunchContext, resolve

#: The servers whose world is their initial state.
REAL_SERVERS = ("filesystem", "git", "memory", "sqlite")
#: Where a world shows the scratch root (a live episode's is `<workspace>/scratch/episodes/<episode>`).
WORLD_SCRATCH = "/scratch"
#: git's environment for reading a repository: no user or system configuration.
_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent", "PATH": "/usr/bin:/bin:/usr/local/bin",
            "LC_ALL": "C"}
_LOCK = threading.Lock()
_CACHE: dict[tuple[str, int, str], dict[str, Any]] = {}


# --- the world --------------------------------------------------------------------------------------
def real_server_world(server: str, seed: int, spec: ServerSpec | None = None) -> ServerWorld | None:
    """The world of `server` (one of `REAL_SERVERS`) for `seed`: its scratch as the live launch prepares
    it, read into records (module docstring); None for any other server or one the manifest lacks."""
    if server not in REAL_SERVERS:
        return None
    spec = spec or manifest_spec(server)
    if spec is None:
        return None
    key = (server, seed, spec.model_dump_json())
    with _LOCK:
        state = _CACHE.get(key)
        if state is None:
            with tempfile.TemporaryDirectory(prefix=f"cworld-world-{server}-") as tmp:
                root = Path(tmp).resolve()
                paths = prepare(spec, root)
                state = read_state(server, paths, shown={str(root): WORLD_SCRATCH}, now=_world_now(seed))
            _CACHE[key] = state
    return ServerWorld(server=server, state=json.loads(json.dumps(state)), kinds=dict(_KINDS[server]), card=None,
                       ids={}, source=f"initial:{server}", keys=dict(_RECORD_KEYS.get(server, {})))


_KINDS: dict[str, dict[str, str]] = {
    "filesystem": {"file": "files", "directory": "directories"},
    "memory": {"entity": "entities", "relation": "relations"},
    "git": {"commit": "commits", "branch": "branches"},
    "sqlite": {"table": "tables"},
}


#: Collections whose records the state keys by what they hold (`relation_key`: the world is read that way).
_RECORD_KEYS: dict[str, dict[str, list[str]]] = {"memory": {"relations": ["from", "relationType", "to"]}}


def manifest_spec(server: str) -> ServerSpec | None:
    """The server's entry in the environment's manifest (`registry/servers.yaml`; `CWORLD_ENV` or the
    packaged one)."""
    from cworld.environment import Environment
    from cworld.registry.manifest import load_manifest

    return next((s for s in load_manifest(Environment.resolve()) if s.id == server), None)


def prepare(spec: ServerSpec, scratch_root: Path) -> dict[str, Path]:
    """Make the server's scratch under `scratch_root` exactly as a live episode's launch does (the
    manifest entry resolved in a `LaunchContext`, which makes what its placeholders name), and say where
    its state lives: `root` (filesystem), `memory_file`, `repo`, `db`."""
    ctx = LaunchContext(scratch_root, scratch_root / "servers", scratch_root)
    resolved = resolve(spec, ctx)
    return launch_paths(spec.id, resolved)


def launch_paths(server: str, resolved: ServerSpec) -> dict[str, Path]:
    """Where a resolved launch keeps the server's state (its arguments and environment name it)."""
    args = list(resolved.args)
    if server == "filesystem":
        return {"root": Path(args[-1])}
    if server == "memory":
        return {"memory_file": Path(resolved.env["MEMORY_FILE_PATH"])}
    if server == "git":
        return {"repo": Path(args[args.index("--repository") + 1])}
    if server == "sqlite":
        return {"db": Path(args[args.index("--db-path") + 1])}
    raise ValueError(f"no world layout for server '{server}'")


def _world_now(seed: int) -> str:
    from cworld.engine.world.build import world_now

    return world_now(seed)


# --- reading a scratch ------------------------------------------------------------------------------
def read_state(server: str, paths: Mapping[str, Path], shown: Mapping[str, str] | None = None,
               now: str | None = None) -> dict[str, Any]:
    """The server's state read from its scratch (`paths` as `launch_paths` gives them). `shown` maps a
    real folder to the one the state names (a temporary folder -> `/scratch`); `now` stamps file times
    and the commits' dates (a world's clock), else they are read from disk (a live end state)."""
    shown = dict(shown or {})
    if server == "filesystem":
        return read_folder(paths["root"], _shown(paths["root"], shown), now)
    if server == "memory":
        return read_memory(paths["memory_file"])
    if server == "git":
        return read_repo(paths["repo"], _shown(paths["repo"], shown), now)
    if server == "sqlite":
        return read_database(paths["db"], _shown(paths["db"], shown))
    raise ValueError(f"no world layout for server '{server}'")


def _shown(path: Path, shown: Mapping[str, str]) -> str:
    text = str(path)
    for real, alias in shown.items():
        if text == real or text.startswith(real.rstrip("/") + "/"):
            return alias.rstrip("/") + text[len(real.rstrip("/")):]
    return text


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_folder(root: Path, shown_root: str, now: str | None = None) -> dict[str, Any]:
    """`{root, files, directories}` of a folder (module docstring), sorted by path."""
    files: dict[str, Any] = {}
    directories: dict[str, Any] = {}
    for path in sorted(root.rglob("*"), key=lambda p: p.relative_to(root).as_posix()):
        rel = path.relative_to(root).as_posix()
        parent = rel.rpartition("/")[0]
        if path.is_dir():
            directories[rel] = {"parent": parent}
            continue
        data = path.read_bytes()
        stat = path.stat()
        record: dict[str, Any] = {"parent": parent, "content": data.decode("utf-8", errors="replace"),
                                  "size": len(data), "created": now or _iso(stat.st_ctime),
                                  "modified": now or _iso(stat.st_mtime)}
        if not _is_utf8(data):
            record["base64"] = base64.b64encode(data).decode("ascii")
        files[rel] = record
    return {"root": shown_root, "files": files, "directories": directories}


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def read_memory(path: Path) -> dict[str, Any]:
    """`{entities, relations}` of the server's JSONL file (empty when it does not exist yet), as the
    server loads it."""
    entities: dict[str, Any] = {}
    relations: dict[str, Any] = {}
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    for line in text.split("\n"):
        if not line.strip():
            continue
        item = json.loads(line)
        if item.get("type") == "entity":
            entities[_nth(str(item["name"]), entities)] = {
                "name": item["name"], "entityType": item.get("entityType"),
                "observations": list(item.get("observations") or [])}
        elif item.get("type") == "relation":
            relation = {"from": item.get("from"), "to": item.get("to"), "relationType": item.get("relationType")}
            relations[_nth(relation_key(relation), relations)] = relation
    return {"entities": entities, "relations": relations}


def _nth(key: str, taken: Mapping[str, Any]) -> str:
    """`key`, or `key\x1fN` for the N-th record of the same name (the server keeps both of two same-named
    entities, or same relations, given in one create call)."""
    n = 1
    found = key
    while found in taken:
        n += 1
        found = f"{key}\x1f{n}"
    return found


def relation_key(relation: Mapping[str, Any]) -> str:
    """A relation's key: `from|relationType|to` (the server keeps one relation per triple; `_RECORD_KEYS`)."""
    return "|".join(str(relation.get(f)) for f in _RECORD_KEYS["memory"]["relations"])


def read_database(path: Path, shown_path: str) -> dict[str, Any]:
    """`{path, tables, memo}` of a SQLite file, tables in `sqlite_master`'s order, rows by rowid."""
    tables: dict[str, Any] = {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type='table' ORDER BY rowid"):
            quoted = '"' + str(name).replace('"', '""') + '"'
            columns = [dict(zip(("cid", "name", "type", "notnull", "dflt_value", "pk"), row, strict=True))
                       for row in db.execute(f"PRAGMA table_info({quoted})")]
            rows: dict[str, Any] = {}
            try:
                cursor = db.execute(f"SELECT rowid, * FROM {quoted}")
            except sqlite3.OperationalError:  # a WITHOUT ROWID table: numbered in order
                cursor = db.execute(f"SELECT NULL, * FROM {quoted}")
            for i, row in enumerate(cursor, start=1):
                key = str(row[0] if row[0] is not None else i)
                rows[key] = {c["name"]: _plain_value(v) for c, v in zip(columns, row[1:], strict=False)}
            tables[str(name)] = {"sql": sql, "columns": columns, "rows": rows}
    return {"path": shown_path, "tables": tables, "memo": {"insights": []}}


def _plain_value(value: Any) -> Any:
    return value.hex() if isinstance(value, bytes) else value


# --- git ----------------------------------------------------------------------------------------------
def _git(repo: Path, *args: str, raw: bool = False) -> Any:
    out = subprocess.run(["git", *args], cwd=repo, env=_GIT_ENV, check=True, capture_output=True, timeout=30).stdout
    return out if raw else out.decode("utf-8", errors="replace")


def blob_id(data: bytes) -> str:
    """git's object id of a file's content (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 - git's own id


def _file(data: bytes) -> dict[str, Any]:
    return {"content": data.decode("utf-8", errors="replace"), "blob": blob_id(data)}


def read_repo(repo: Path, shown_repo: str, now: str | None = None) -> dict[str, Any]:
    """`{repo, head, branches, commits, index, worktree}` of a repository (module docstring). With `now`,
    every commit's dates are that moment and the shas are recomputed for them (a world's repository is
    the same in every process); without, as on disk (a live end state)."""
    order = [s for s in _git(repo, "rev-list", "--all", "--topo-order", "--reverse").split() if s]
    renamed: dict[str, str] = {}
    commits: dict[str, Any] = {}
    for sha in order:
        body = _git(repo, "cat-file", "commit", sha, raw=True)
        if now is not None:
            body = _restamped(body, now, renamed)
            new_sha = hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest()  # noqa: S324 - git's own id
            renamed[sha] = new_sha
        else:
            new_sha = sha
        commits[new_sha] = {**_commit_fields(body), "tree": _tree(repo, sha)}
    branches = {}
    for line in _git(repo, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads").splitlines():
        name, _, sha = line.rpartition(" ")
        branches[name] = {"commit": renamed.get(sha, sha)}
    head_ref = subprocess.run(["git", "symbolic-ref", "-q", "--short", "HEAD"], cwd=repo, env=_GIT_ENV,
                              capture_output=True, timeout=30).stdout.decode().strip()
    head = {"branch": head_ref, "commit": None} if head_ref else \
        {"branch": None, "commit": renamed.get(s := _git(repo, "rev-parse", "HEAD").strip(), s)}
    index = {}
    for line in _git(repo, "ls-files", "--stage", "-z").split("\0"):
        if line:
            meta, _, path = line.partition("\t")
            blob = meta.split()[1]
            index[path] = _file(_git(repo, "cat-file", "blob", blob, raw=True))
    worktree = {}
    for path in sorted(p for p in repo.rglob("*") if p.is_file() and ".git" not in p.relative_to(repo).parts):
        worktree[path.relative_to(repo).as_posix()] = _file(path.read_bytes())
    return {"repo": shown_repo, "head": head, "branches": branches, "commits": commits,
            "index": dict(sorted(index.items())), "worktree": worktree}


_PERSON = re.compile(rb"^(author|committer) (.*) <(.*)> (\d+) ([+-]\d{4})$")


def _restamped(body: bytes, now: str, renamed: dict[str, str]) -> bytes:
    """A commit object with its author and committer dates set to `now` (UTC) and its parents renamed."""
    stamp = int(datetime.fromisoformat(now.replace("Z", "+00:00")).timestamp())
    head, _, message = body.partition(b"\n\n")
    lines = []
    for line in head.split(b"\n"):
        match = _PERSON.match(line)
        if match:
            line = b"%s %s <%s> %d +0000" % (match.group(1), match.group(2), match.group(3), stamp)
        elif line.startswith(b"parent "):
            old = line[7:].decode()
            line = b"parent " + renamed.get(old, old).encode()
        lines.append(line)
    return b"\n".join(lines) + b"\n\n" + message


def _commit_fields(body: bytes) -> dict[str, Any]:
    head, _, message = body.partition(b"\n\n")
    fields: dict[str, Any] = {"message": message.decode("utf-8", errors="replace"), "parents": []}
    for line in head.split(b"\n"):
        if line.startswith(b"parent "):
            fields["parents"].append(line[7:].decode())
        match = _PERSON.match(line)
        if match and match.group(1) == b"author":
            fields["author"] = match.group(2).decode("utf-8", errors="replace")
            fields["email"] = match.group(3).decode("utf-8", errors="replace")
            fields["date"] = _iso(int(match.group(4)))
    return {k: fields.get(k) for k in ("message", "author", "email", "date", "parents")}


def _tree(repo: Path, sha: str) -> dict[str, Any]:
    out = {}
    for line in _git(repo, "ls-tree", "-r", "-z", sha).split("\0"):
        if line:
            meta, _, path = line.partition("\t")
            out[path] = _file(_git(repo, "cat-file", "blob", meta.split()[2], raw=True))
    return dict(sorted(out.items()))


# --- functions the rule language lacks (suggested for cworld/engine/rules/expr.py FUNCTIONS) ---------------
#: The statements the sqlite server commits (mcp_server_sqlite `_execute_query`); any other is rolled back.
_SQL_WRITES = ("INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER")


def sql_exec(tables: dict[str, Any], query: str) -> dict[str, Any]:
    """Run one SQL statement on a sqlite world's `tables` as the sqlite server runs it, on an in-memory
    SQLite database loaded from them: {'result': rows as dicts, or [{'affected_rows': n}] for a statement
    the server commits; None on error, 'error': "Database error: <sqlite's message>" or None, 'tables':
    the tables afterwards (the same object when nothing was committed)}. Exact where the rules' SQL subset
    (category_cards/_operations/sqlite.yaml) is approximate: joins, GROUP BY/HAVING, subqueries, functions,
    views, triggers. Not callable from rules until it is in `expr.FUNCTIONS`."""
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    dumps = {name: table for name, table in tables.items() if _is_table_dump(table)}
    try:
        _load_tables(db, dumps)
        try:
            cursor = db.execute(query)
            if query.strip().upper().startswith(_SQL_WRITES):
                db.commit()
                result: list[dict[str, Any]] = [{"affected_rows": cursor.rowcount}]
                others = {name: table for name, table in tables.items() if name not in dumps}
                return {"result": result, "error": None, "tables": {**others, **_dump_tables(db)}}
            return {"result": [{k: _plain_value(v) for k, v in dict(row).items()} for row in cursor.fetchall()],
                    "error": None, "tables": tables}
        except sqlite3.Error as exc:
            return {"result": None, "error": f"Database error: {exc}", "tables": tables}
    finally:
        db.close()


def _is_table_dump(table: Any) -> bool:
    """Whether a world's `tables` entry is a SQLite table as `read_database` dumps it. A service that lists
    tables as records (a dashboard's table metadata) holds no statement to recreate them: SQLite then finds
    no such table, as the service's database would not hold one its world never made."""
    return isinstance(table, dict) and isinstance(table.get("sql"), str) and isinstance(table.get("rows"), dict)


def _load_tables(db: sqlite3.Connection, tables: dict[str, Any]) -> None:
    """Recreate the world's tables (their own CREATE statements, rows at their rowids)."""
    for name, table in tables.items():
        if name == "sqlite_sequence":
            continue
        db.execute(table["sql"])
    for name, table in tables.items():
        columns = [c["name"] for c in table["columns"]]
        quoted = '"' + name.replace('"', '""') + '"'
        marks = ", ".join("?" for _ in range(len(columns) + 1))
        names = ", ".join(["rowid", *('"' + c.replace('"', '""') + '"' for c in columns)])
        if name == "sqlite_sequence":
            db.executemany("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)",
                           [(r["name"], r["seq"]) for r in table["rows"].values()])
            continue
        db.executemany(f"INSERT INTO {quoted} ({names}) VALUES ({marks})",  # noqa: S608 - the world's own names
                       [(int(key), *(row.get(c) for c in columns)) for key, row in table["rows"].items()])
    db.commit()


def _dump_tables(db: sqlite3.Connection) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="cworld-sql-") as tmp:
        path = Path(tmp) / "db.sqlite"
        with sqlite3.connect(path) as out:
            db.backup(out)
        out.close()
        return read_database(path, "")["tables"]


def b64encode(text: str) -> str:
    """A text file's bytes as base64 (filesystem's read_media_file on a file written during a session)."""
    return base64.b64encode(text.encode("utf-8")).decode("ascii")
