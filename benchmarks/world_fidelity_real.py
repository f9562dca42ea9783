"""Does the world engine behave like the offline real servers (memory, filesystem, git, sqlite) off the gold
path? Verdicts and end states, per server: `world_fidelity.py`'s measurement for the real servers.

Run: `python benchmarks/world_fidelity_real.py [--seeds 0 1 2] [--calls-per-server 40]
[--servers filesystem memory git sqlite] [--json PATH] [--show-diffs] [--learned]`. Offline, a minute or two.

1. Explore live. Per (seed, server), the server is launched as the live backend launches it
   (`controller.backends.real.RealServerBackend`: the manifest entry resolved against a fresh scratch
   folder, repository or database), and a seeded explorer (`_explorer.Explorer`, rng
   `bench:explorer:<server>`) calls its tools, reads and writes, with values it saw or made up. The
   explorer is `_explorer.Explorer` taught the few things these servers need that their schemas do not say
   (`RealExplorer`): it knows what the scratch holds when it starts (the task would say: the allowed
   folder and its files, the repository path, the `items` table), learns paths, names, branches and shas
   from answers that are text (a listing, a log), writes SQL a task would send (SELECT with a WHERE,
   INSERT, UPDATE, DELETE, CREATE TABLE, some of them wrong) and fills nested arguments (a knowledge
   graph's entities, a file's edits) with the names and text it has seen. The server's state is read
   before and after (`engine.world.real.read_state`, as `real_server_world` reads the initial state).
2. Replay the same calls, in order, through the world engine: `RulesEngine(cards, tools, world=World(seed,
   now, {server: real_server_world(server, seed)}), operations=category_cards/_operations,
   overrides=True|False, fallback=SchemaEngine)`, one `SessionLog` per (seed, server). Values are
   translated as the explorer would have seen them in synthesized mode: the live scratch folder is the
   world's `/scratch`, a live commit sha is the engine's (the initial commit's by order, a new one where
   the two answers print it).
3. Per server and ALL, with the per-tool rules and with card rules only: verdict agreement (is_error as
   live), error-class agreement where both erred, and end state: the leaves (`collection/key/field`) that
   differ from the initial state (volatile ones left out: file times, a commit's date and author, which
   live are the wall clock's and the machine's git identity, and sqlite's insights memo, which the live
   server keeps in memory only); R_c = share of live's changed leaves the engine reproduced with the same
   value; unwanted = leaves the engine changed that live did not, as a share of live's changed leaves.
4. With `--learned`, a third engine: each server's rules learned live by `cworld world learn`'s code
   (`controller.learn.learn_server_live`) from `--learn-calls` calls on each of `--learn-seeds` (keep them apart
   from `--seeds`), driven by `RealExplorer` (rng `learn:explorer:<server>:0`; `--learn-explorer generic`: the
   learner's own explorer) and loaded alone as the operations: no hand-written rule file shows through.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _explorer import Call, Explorer  # noqa: E402
from world_fidelity import (  # noqa: E402
    Tally,
    changed_leaves,
    count_end_state,
    count_verdicts,
    pct,
    print_call_diff,
    translated,
    verdicts_differ,
)

from cworld.data_model import ToolResult, ToolSpec  # noqa: E402
from cworld.engine.world.real import (  # noqa: E402
    REAL_SERVERS,
    WORLD_SCRATCH,
    launch_paths,
    read_state,
    real_server_world,
)
from cworld.sandbox.statediff.world import WORLD_KEY  # noqa: E402
from cworld.seeding import derive_rng  # noqa: E402

#: Leaves that are not the servers' behaviour: times, the machine's git identity, an in-memory memo.
VOLATILE = re.compile(r"^(files/.*/(created|modified)|commits/[^/]+/(date|author|email)|memo/.*)$")
_SHA = re.compile(r"\b[0-9a-f]{40}\b")
_SHORT_SHA = re.compile(r"detached at ([0-9a-f]{7})\b")


# --- the explorer ----------------------------------------------------------------------------------------
class RealExplorer(Explorer):
    """`Explorer` for a real server: seeded with what the scratch holds, learning from text answers, and
    filling what the schemas leave open (SQL, nested entities and edits, glob patterns, git revisions)."""

    def __init__(self, tools: list[ToolSpec], rng: random.Random, now: Any, server: str, paths: dict[str, Path],
                 initial: dict[str, Any]) -> None:
        super().__init__(tools, rng, now)
        self.server = server
        self.paths = {k: str(v) for k, v in paths.items()}
        self.known_paths: list[str] = []  # absolute paths seen to exist (files and folders)
        self.contents: list[str] = []  # file contents seen
        self.texts: dict[str, str] = {}  # absolute path -> the content it was seen or written with
        self.names: list[str] = []  # knowledge-graph entity names seen
        self.branches: list[str] = []
        self.shas: list[str] = []
        self.tables: dict[str, list[str]] = {}
        self.pending: tuple[str, Any] | None = None
        self._seed(initial)

    def _seed(self, state: dict[str, Any]) -> None:
        if self.server == "filesystem":
            root = self.paths["root"]
            self.known_paths = [root, *(f"{root}/{p}" for p in state["files"]),
                                *(f"{root}/{p}" for p in state["directories"])]
            self.contents = [f["content"] for f in state["files"].values() if "base64" not in f]
            self.texts = {f"{root}/{p}": f["content"] for p, f in state["files"].items() if "base64" not in f}
        elif self.server == "git":
            self.branches = list(state["branches"])
        elif self.server == "sqlite":
            self.tables = {name: [c["name"] for c in t["columns"]] for name, t in state["tables"].items()}
        elif self.server == "memory":
            self.names = list(state["entities"])

    # --- learning -----------------------------------------------------------------------------------------
    def observe(self, tool: ToolSpec, result: ToolResult) -> None:
        super().observe(tool, result)
        pending, self.pending = self.pending, None
        if result.is_error:
            return
        text = result.text
        if self.server == "filesystem":
            self._learn_paths(tool, text, pending)
        elif self.server == "memory":
            for value in _values(result.structured_content, "name"):
                if isinstance(value, str) and value not in self.names:
                    self.names.append(value)
        elif self.server == "git":
            for sha in _SHA.findall(text):
                if sha not in self.shas:
                    self.shas.append(sha)
            for name in re.findall(r"Created branch '([^']+)'", text):
                self.branches.append(name)
            if tool.name == "git_branch":
                for line in text.splitlines():
                    name = line.strip().lstrip("* ").strip()
                    if name and " " not in name and name not in self.branches:
                        self.branches.append(name)
        elif self.server == "sqlite" and pending and pending[0] == "table" and "successfully" in text:
            name, columns = pending[1]
            self.tables.setdefault(name, columns)

    def _learn_paths(self, tool: ToolSpec, text: str, pending: Any) -> None:
        root = self.paths["root"]
        found = re.findall(r"(?:Successfully wrote to|Successfully created directory) (\S.*)$", text, re.M)
        found += [p for pair in re.findall(r"^Successfully moved (.+) to (.+)$", text, re.M) for p in pair[1:]]
        if tool.name == "search_files":
            found += [line for line in text.splitlines() if line.startswith(root)]
        if tool.name == "list_directory" and pending:
            found += [f"{pending[1].rstrip('/')}/{m}" for m in re.findall(r"^\[(?:FILE|DIR)\] (.+)$", text, re.M)]
        for path in found:
            absolute = path if path.startswith("/") else f"{root}/{path}"
            if absolute not in self.known_paths:
                self.known_paths.append(absolute)
        if tool.name in ("read_text_file", "read_file") and text and text not in self.contents:
            self.contents.append(text)
        if tool.name == "write_file" and pending:
            path, content = pending[1]
            self.texts[path if path.startswith("/") else f"{root}/{path}"] = content
        if tool.name == "edit_file" and pending:
            self.texts.pop(pending[1] if pending[1].startswith("/") else f"{root}/{pending[1]}", None)

    # --- arguments ------------------------------------------------------------------------------------------
    def arguments(self, tool: ToolSpec, *, careful: bool = False) -> dict[str, Any]:
        args = super().arguments(tool, careful=careful)
        fill = getattr(self, f"_{self.server}", None)
        return fill(tool, args, careful) if fill else args

    def _chance(self, p: float, careful: bool = False) -> bool:
        return careful or self.rng.random() < p

    def _word(self) -> str:
        return self.rng.choice(["report", "draft", "budget", "notes", "archive", "plan", "todo", "summary",
                                "alpha", "beta", "log", "data", "q3", "ideas", "final"])

    # filesystem
    def _path(self, careful: bool, exists: float = 0.75) -> str:
        root = self.paths["root"]
        roll = self.rng.random()
        if careful or roll < exists:
            path = self.rng.choice(self.known_paths)
        elif roll < exists + 0.12:
            path = f"{root}/{self._word()}.{self.rng.choice(['txt', 'md'])}"
        elif roll < exists + 0.18:
            path = self.rng.choice([f"{self._word()}.txt", "notes.txt", "docs/readme.md", "docs"])
        else:
            path = self.rng.choice(["/etc/hosts", f"/home/user/{self._word()}.txt", f"{root}/../outside.txt",
                                    f"{root}/{self._word()}/{self._word()}.txt", "~/notes.txt"])
        return path

    def _new_path(self) -> str:
        root = self.paths["root"]
        folders = [p for p in self.known_paths if "." not in p.rsplit("/", 1)[-1]] or [root]
        base = self.rng.choice(folders)
        return f"{base}/{self._word()}-{self.rng.randint(1, 99)}.{self.rng.choice(['txt', 'md', 'csv'])}"

    def _filesystem(self, tool: ToolSpec, args: dict[str, Any], careful: bool) -> dict[str, Any]:
        name = tool.name
        folders = [p for p in self.known_paths if p not in self.texts and "." not in p.rsplit("/", 1)[-1]]
        if "path" in args:
            if name in ("list_directory", "list_directory_with_sizes", "directory_tree", "search_files") \
                    and folders and self._chance(0.6, careful):
                args["path"] = self.rng.choice(folders)
            elif name == "edit_file" and self.texts and self._chance(0.7, careful):
                args["path"] = self.rng.choice(sorted(self.texts))
            elif name == "write_file":
                args["path"] = self._new_path() if self._chance(0.5) else self._path(careful)
            elif name == "create_directory":
                args["path"] = (f"{self.rng.choice(self.known_paths[:1] + self.known_paths)}/{self._word()}"
                                if self._chance(0.7, careful) else self._path(careful))
            else:
                args["path"] = self._path(careful)
            self.pending = ("path", args["path"])
        if "paths" in args:
            args["paths"] = [self._path(careful) for _ in range(self.rng.randint(1, 3))]
        if name == "move_file":
            args["source"] = self._path(careful)
            args["destination"] = self._new_path() if self._chance(0.7, careful) else self._path(careful)
        if name == "edit_file":
            text = self.texts.get(args["path"]) if isinstance(args.get("path"), str) else None
            args["edits"] = [self._edit(careful, text) for _ in range(self.rng.choice([1, 1, 1, 2]))]
        if name in ("read_file", "read_text_file"):
            for key in ("head", "tail"):
                if key in args:
                    args[key] = self.rng.choice([1, 2, 3, 5])
        if "pattern" in args:
            args["pattern"] = self.rng.choice(["*.txt", "**/*.md", "*", "**", "notes*", "**/readme*", "*.png",
                                               self._word(), f"*{self._word()}*", "docs/*"])
        if "excludePatterns" in args:
            args["excludePatterns"] = self.rng.choice([[], ["*.png"], ["docs"], ["**/*.md"]])
        if name == "write_file" and self._chance(0.3):
            args["content"] = self.rng.choice(["hello\n", "line one\nline two\n", "# Title\n\nSome text.\n", ""])
        if name == "write_file":
            self.pending = ("write", (args["path"], args.get("content", "")))
        return args

    def _edit(self, careful: bool, text: str | None) -> dict[str, str]:
        if self.contents and self._chance(0.75, careful):
            lines = [line for c in ([text] if text else self.contents) for line in c.splitlines() if line.strip()]
            old = self.rng.choice(lines) if lines else "first line"
            if self._chance(0.2):
                old = "  " + old + " "  # whitespace differs: the server's line-by-line fallback
        else:
            old = self._word() + " " + self._word()
        return {"oldText": old, "newText": self.rng.choice([old.upper(), f"{old} (edited)", "", self._word()])}

    # memory
    def _name(self, careful: bool) -> str:
        if self.names and self._chance(0.7, careful):
            return self.rng.choice(self.names)
        return self.rng.choice(["Ada Lovelace", "Acme Corp", "Paris", "Project X", self._word().title()])

    def _memory(self, tool: ToolSpec, args: dict[str, Any], careful: bool) -> dict[str, Any]:
        name = tool.name
        if name == "create_entities":
            args["entities"] = [self._entity() for _ in range(self.rng.randint(1, 3))]
        elif name in ("create_relations", "delete_relations"):
            args["relations"] = [{"from": self._name(careful), "to": self._name(careful),
                                  "relationType": self.rng.choice(["knows", "works_at", "lives_in", "owns"])}
                                 for _ in range(self.rng.randint(1, 2))]
        elif name == "add_observations":
            args["observations"] = [{"entityName": self._name(careful or self._chance(0.5)),
                                     "contents": [self._observation() for _ in range(self.rng.randint(1, 2))]}
                                    for _ in range(self.rng.choice([1, 1, 1, 2]))]
        elif name == "delete_observations":
            args["deletions"] = [{"entityName": self._name(careful), "observations": [self._observation()]}]
        elif name == "delete_entities":
            args["entityNames"] = [self._name(careful) for _ in range(self.rng.randint(1, 2))]
        elif name == "open_nodes":
            args["names"] = [self._name(careful) for _ in range(self.rng.randint(1, 3))]
        elif name == "search_nodes":
            pool = [*self.names, "person", "organization", "likes", "zzz-nothing"]
            pick = self.rng.choice(pool)
            args["query"] = pick[: self.rng.randint(3, max(3, len(pick)))] if self._chance(0.4) else pick
        return args

    def _entity(self) -> dict[str, Any]:
        kind = self.rng.choice(["person", "organization", "place", "project"])
        name = self.rng.choice(self.names) if self.names and self._chance(0.2) else self.rng.choice(
            {"person": ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Linus Pauling"],
             "organization": ["Acme Corp", "Globex", "Initech"], "place": ["Paris", "Lagos", "Osaka"],
             "project": ["Project X", "Apollo", "Roadmap 2026"]}[kind]) + self.rng.choice(["", "", f" {self.rng.randint(2, 9)}"])
        return {"name": name, "entityType": kind, "observations": [self._observation() for _ in range(self.rng.randint(0, 2))]}

    def _observation(self) -> str:
        return self.rng.choice(["likes tea", "speaks French", "works remotely", "founded in 1999", "has 40 staff",
                                "prefers email", "visited in March", f"rated {self.rng.randint(1, 5)} stars"])

    # git
    def _git(self, tool: ToolSpec, args: dict[str, Any], careful: bool) -> dict[str, Any]:
        repo = self.paths["repo"]
        if "repo_path" in args:
            args["repo_path"] = repo if self._chance(0.88, careful) else self.rng.choice(
                [repo + "/..", f"/tmp/{self._word()}", repo.replace("repo", "other"), repo + "/"])
        name = tool.name
        if name == "git_add":
            pool = ["README.md", "CHANGELOG.md", ".", "README.md", f"{self._word()}.md"]
            args["files"] = self.rng.sample(pool, self.rng.randint(1, 2)) if not careful else ["README.md"]
        if name in ("git_create_branch", "git_checkout"):
            fresh = f"{self._word()}-{self.rng.randint(1, 9)}"
            if name == "git_create_branch":
                args["branch_name"] = fresh if self._chance(0.75, careful) else self.rng.choice(self.branches)
                if "base_branch" in args:
                    args["base_branch"] = self.rng.choice([*self.branches, "develop"])
            else:
                args["branch_name"] = self.rng.choice(self.branches) if self._chance(0.75, careful) else fresh
        if "revision" in args or "target" in args:
            key = "revision" if "revision" in args else "target"
            pool = ["HEAD", "HEAD", "main", "HEAD~1", "HEAD:README.md", *self.branches, *self.shas, "v1.0",
                    *(s[:7] for s in self.shas)]
            args[key] = self.rng.choice(pool)
        if "branch_type" in args:
            args["branch_type"] = self.rng.choice(["local", "local", "all", "remote", "everything"])
        for key in ("contains", "not_contains"):
            if key in args:
                args[key] = self.rng.choice(self.shas or ["HEAD"]) if self._chance(0.6) else None
        if "max_count" in args:
            args["max_count"] = self.rng.choice([1, 3, 5, 10])
        if "context_lines" in args:
            args["context_lines"] = self.rng.choice([0, 1, 3])
        for key in ("start_timestamp", "end_timestamp"):
            if key in args:
                args[key] = None
        if name == "git_commit":
            args["message"] = self.rng.choice(["Update README", "Add changelog entry", "Fix typo", "wip"])
        return args

    # sqlite
    def _sqlite(self, tool: ToolSpec, args: dict[str, Any], careful: bool) -> dict[str, Any]:
        name = tool.name
        if name == "read_query":
            args["query"] = self._select(careful) if self._chance(0.85, careful) else self._write_sql(careful)
        elif name == "write_query":
            args["query"] = self._write_sql(careful) if self._chance(0.9, careful) else self._select(careful)
        elif name == "create_table":
            args["query"] = self._create(careful)
        elif name == "describe_table":
            args["table_name"] = self.rng.choice(list(self.tables)) if self._chance(0.75, careful) else self._word()
        elif name == "append_insight":
            args["insight"] = self.rng.choice(["Washers are running low.", "Bolts sell best.", "Stock is fine."])
        return args

    def _table(self, careful: bool) -> tuple[str, list[str]]:
        if self._chance(0.9, careful):
            name = self.rng.choice(list(self.tables))
            return name, self.tables[name]
        return self._word(), ["id", "name"]

    def _column(self, columns: list[str], careful: bool) -> str:
        return self.rng.choice(columns) if self._chance(0.93, careful) else "colour"

    def _literal(self, column: str) -> str:
        if column in ("qty", "id", "amount", "count", "price", "score") or column.endswith(("_id", "qty")):
            return str(self.rng.choice([1, 2, 3, 5, 10, 50, 80, 100, 120]))
        return "'" + self.rng.choice(["bolt", "nut", "washer", "screw", "gear", "O'Brien"]).replace("'", "''") + "'"

    def _where(self, columns: list[str], careful: bool) -> str:
        column = self._column(columns, careful)
        op = self.rng.choice(["=", "=", ">", "<", ">=", "!=", "LIKE", "IN"])
        if op == "LIKE":
            return f"{column} LIKE '%{self.rng.choice(['o', 'bo', 'er', 'x'])}%'"
        if op == "IN":
            return f"{column} IN ({self._literal(column)}, {self._literal(column)})"
        clause = f"{column} {op} {self._literal(column)}"
        if self._chance(0.2):
            other = self._column(columns, careful)
            clause += f" {self.rng.choice(['AND', 'OR'])} {other} {self.rng.choice(['=', '>', '<'])} {self._literal(other)}"
        return clause

    def _select(self, careful: bool) -> str:
        table, columns = self._table(careful)
        if not careful and self._chance(0.1):  # what a task may send beyond one table's SELECT
            column = self._column(columns, careful)
            return self.rng.choice([
                f"SELECT {column}, COUNT(*) FROM {table} GROUP BY {column}",
                f"SELECT {column}, COUNT(*) AS n FROM {table} GROUP BY {column} HAVING COUNT(*) > 1",
                f"SELECT a.{column} FROM {table} a JOIN {table} b ON a.{column} = b.{column}",
                f"SELECT * FROM {table} WHERE {column} IN (SELECT {column} FROM {table})",
                f"SELECT UPPER({column}), LENGTH({column}) FROM {table}"])
        projection = self.rng.choice(["*", "*", ", ".join(self.rng.sample(columns, min(2, len(columns)))),
                                      "COUNT(*)", self._column(columns, careful)])
        query = f"SELECT {projection} FROM {table}"
        if self._chance(0.6):
            query += f" WHERE {self._where(columns, careful)}"
        if self._chance(0.3):
            query += f" ORDER BY {self._column(columns, careful)}{self.rng.choice(['', ' DESC'])}"
        if self._chance(0.2):
            query += f" LIMIT {self.rng.choice([1, 2, 5])}"
        if self._chance(0.05) and not careful:
            query = query.replace("SELECT", "SELEC", 1)
        return self.rng.choice([query, query.lower()]) if self._chance(0.1) else query

    def _write_sql(self, careful: bool) -> str:
        table, columns = self._table(careful)
        kind = self.rng.choice(["insert", "insert", "update", "update", "delete"])
        settable = [c for c in columns if c != "id"] or columns
        if kind == "insert":
            chosen = settable if self._chance(0.8, careful) else self.rng.sample(settable, max(1, len(settable) - 1))
            values = ", ".join(self._literal(c) for c in chosen)
            return f"INSERT INTO {table} ({', '.join(chosen)}) VALUES ({values})"
        if kind == "update" and not careful and self._chance(0.05):
            return f"UPDATE {table} SET {settable[0]} = {settable[0]} || '-x'"
        if kind == "update":
            column = self._column(settable, careful)
            value = f"{column} + 1" if column == "qty" and self._chance(0.3) else self._literal(column)
            query = f"UPDATE {table} SET {column} = {value}"
            return query + (f" WHERE {self._where(columns, careful)}" if self._chance(0.85, careful) else "")
        return f"DELETE FROM {table}" + (f" WHERE {self._where(columns, careful)}" if self._chance(0.9, careful) else "")

    def _create(self, careful: bool) -> str:
        name = self.rng.choice(list(self.tables)) if self._chance(0.15) and not careful else \
            f"{self._word()}_{self.rng.randint(1, 99)}"
        columns = ["id INTEGER PRIMARY KEY", "name TEXT NOT NULL",
                   *self.rng.sample(["qty INTEGER", "price REAL", "note TEXT", "owner TEXT DEFAULT 'me'"], 2)]
        query = f"CREATE TABLE {name} ({', '.join(columns)})"
        if self._chance(0.08) and not careful:
            query = f"CREATE INDEX idx_{name} ON items (name)"
        self.pending = ("table", (name, [c.split()[0] for c in columns]))
        return query


def _values(data: Any, *keys: str) -> list[Any]:
    out: list[Any] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            out.extend(item[k] for k in keys if k in item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


# --- 1. live ----------------------------------------------------------------------------------------------
@dataclass
class Episode:
    seed: int
    server: str
    calls: list[Call]
    initial: dict[str, Any]
    end: dict[str, Any]
    scratch: str
    now: str

    @property
    def name(self) -> str:
        return self.server


@dataclass
class Setup:
    env: Any
    workspace: Any
    cards: dict[str, Any]
    tools: dict[str, list[ToolSpec]]
    specs: dict[str, Any]
    operations: dict[str, Any]

    @classmethod
    def resolve(cls) -> Setup:
        from cworld.engine.cards.card import load_cards
        from cworld.engine.rules.spec import load_operations
        from cworld.environment import Environment, Workspace
        from cworld.registry.tools import environment_tools

        env, ws = Environment.resolve(), Workspace.resolve()
        listed = environment_tools(env, ws)
        tools: dict[str, list[ToolSpec]] = {}
        for tool in [*listed.recorded, *(listed.built or [])]:
            if tool.server in REAL_SERVERS and all(t.name != tool.name for t in tools.get(tool.server, [])):
                tools.setdefault(tool.server, []).append(tool)
        return cls(env, ws, load_cards(env.category_cards), tools, listed.servers,
                   load_operations(env.category_cards / "_operations"))


async def explore_live(setup: Setup, seed: int, server: str, calls: int) -> Episode:
    """`calls` explorer calls on a fresh launch of `server`, its state read before and after."""
    from cworld.controller.backends.real import RealServerBackend
    from cworld.engine.world.build import world_now
    from cworld.registry.launch import LaunchContext, resolve

    spec = setup.specs[server]
    backend = RealServerBackend({server: spec}, setup.workspace, episode=f"fidelity-real-{server}")
    await backend.open(seed)
    try:
        assert backend.scratch_root is not None
        # The scratch the backend launches the server on (its resolve makes it; existing targets are kept).
        ctx = LaunchContext(setup.workspace.root, setup.workspace.servers, backend.scratch_root)
        paths = launch_paths(server, await asyncio.to_thread(resolve, spec, ctx))
        initial = read_state(server, paths)
        now = world_now(seed)
        from datetime import datetime

        explorer = RealExplorer(setup.tools[server], derive_rng(seed, f"bench:explorer:{server}"),
                                datetime.fromisoformat(now.replace("Z", "+00:00")), server, paths, initial)
        out: list[Call] = []
        for _ in range(calls):
            tool, arguments = explorer.next_call()
            result = await backend.call(tool, copy.deepcopy(arguments))
            if result.is_infra_error:
                raise RuntimeError(f"{server}: {result.error_class}: {result.text[:300]}")
            explorer.observe(tool, result)
            out.append(Call(tool, arguments, result))
        end = read_state(server, paths)
        return Episode(seed, server, out, initial, end, str(backend.scratch_root), now)
    finally:
        await backend.close()


# --- 2. replay --------------------------------------------------------------------------------------------
@dataclass
class Replay:
    results: list[ToolResult]
    arguments: list[dict[str, Any]]
    initial: dict[str, Any]
    end: dict[str, Any]
    ids: dict[str, str] = field(default_factory=dict)
    rule_errors: list[str] = field(default_factory=list)
    engine_s: float = 0.0


def engine_for(setup: Setup, episode: Episode, overrides: bool,
               operations: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    from cworld.engine.rules import RulesEngine
    from cworld.engine.schema.engine import SchemaEngine
    from cworld.engine.world.base import World

    server_world = real_server_world(episode.server, episode.seed)
    assert server_world is not None
    world = World(seed=episode.seed, now=episode.now, servers={episode.server: server_world})
    tools = setup.tools[episode.server]
    engine = RulesEngine(setup.cards, tools, world=world, overrides=overrides,
                         operations=setup.operations if operations is None else operations,
                         fallback=SchemaEngine(setup.cards, tools))
    return engine, copy.deepcopy(server_world.state)


def initial_ids(live: dict[str, Any], world: dict[str, Any]) -> dict[str, str]:
    """Live value -> the world's for what both start with but name differently (the initial commit)."""
    ids: dict[str, str] = {}
    if "commits" in live:  # the same commits in the same order (the world's dates are the seed's clock)
        for sha, other in zip(live["commits"], world["commits"], strict=False):
            ids[sha] = other
            ids[sha[:7]] = other[:7]
    return ids


def translate_text(value: Any, scratch: str, ids: dict[str, str]) -> Any:
    """Arguments as synthesized mode's explorer would give them: the world's scratch folder, its shas."""
    if isinstance(value, str):
        value = value.replace(scratch, WORLD_SCRATCH)
        return ids.get(value, _SHA.sub(lambda m: ids.get(m.group(), m.group()), value))
    if isinstance(value, dict):
        return {k: translate_text(v, scratch, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [translate_text(v, scratch, ids) for v in value]
    return value


async def replay(setup: Setup, episode: Episode, overrides: bool, operations: dict[str, Any] | None = None) -> Replay:
    from cworld.engine.protocol import SessionLog

    engine, initial = engine_for(setup, episode, overrides, operations)
    session = SessionLog(seed=episode.seed)
    ids = initial_ids(episode.initial, initial)
    results, arguments = [], []
    spent = 0.0
    for call in episode.calls:
        args = translate_text(call.arguments, episode.scratch, ids)
        started = time.process_time()
        result = await engine.respond(call.tool, args, session)
        spent += time.process_time() - started
        session.record(call.tool.id, args, result)
        if not call.result.is_error and not result.is_error:
            for live_sha, sha in zip(_SHA.findall(call.result.text), _SHA.findall(result.text), strict=False):
                ids.setdefault(live_sha, sha)
                ids.setdefault(live_sha[:7], sha[:7])
            for live_sha, sha in zip(_SHORT_SHA.findall(call.result.text), _SHORT_SHA.findall(result.text), strict=False):
                ids.setdefault(live_sha, sha)
        results.append(result)
        arguments.append(args)
    end = applied(initial, engine.end_state(session).get(WORLD_KEY, {}).get(episode.server, {}))
    return Replay(results, arguments, initial, end, ids, list(engine.stats.rule_errors), spent)


def applied(initial: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """The server's end state: its initial state with the session's `world_delta` (per changed collection,
    the records before and after; a record only before was deleted) laid over it."""
    end = copy.deepcopy(initial)
    for name, change in delta.items():
        if not change["records"]:
            end[name] = change["after"]
            continue
        records = end.setdefault(name, {})
        for key in change["before"].keys() - change["after"].keys():
            records.pop(key, None)
        records.update(change["after"])
    return end


# --- 3. scoring ------------------------------------------------------------------------------------------------
def _keys_too(value: Any, scratch: str) -> Any:
    """Keys that name the live scratch folder name the world's."""
    if isinstance(value, dict):
        return {str(k).replace(scratch, WORLD_SCRATCH): _keys_too(v, scratch) for k, v in value.items()}
    if isinstance(value, list):
        return [_keys_too(v, scratch) for v in value]
    return value


def skip_volatile(leaves: dict[str, str]) -> dict[str, str]:
    return {path: value for path, value in leaves.items() if not VOLATILE.match(path)}


def end_state_diff(episode: Episode, rep: Replay) -> tuple[dict[str, str], dict[str, str]]:
    """(live's changed leaves in the engine's names, the engine's changed leaves)."""
    live_end = _keys_too(translate_text(translated(episode.end, rep.ids), episode.scratch, rep.ids), episode.scratch)
    live_initial = _keys_too(translate_text(translated(episode.initial, rep.ids), episode.scratch, rep.ids),
                             episode.scratch)
    wanted = skip_volatile(changed_leaves(live_initial, live_end, None))
    made = skip_volatile(changed_leaves(rep.initial, rep.end, None))
    return wanted, made


def score(episode: Episode, rep: Replay) -> Tally:
    tally = Tally(calls=len(episode.calls), episodes=1, engine_s=rep.engine_s)
    count_verdicts(tally, [(call.result, sim) for call, sim in zip(episode.calls, rep.results, strict=True)])
    count_end_state(tally, *end_state_diff(episode, rep))
    return tally


def same_answer(episode: Episode, live: ToolResult, sim: ToolResult, ids: dict[str, str]) -> bool:
    """Both succeeded with the same answer: the structured content when live has one, else the text."""
    if live.is_error or sim.is_error:
        return False
    if live.structured_content is not None:
        return translate_text(live.structured_content, episode.scratch, ids) == sim.structured_content
    return translate_text(live.text, episode.scratch, ids) == sim.text


def show_diffs(episode: Episode, rep: Replay) -> None:
    for i, (call, sim, args) in enumerate(zip(episode.calls, rep.results, rep.arguments, strict=True)):
        live = call.result
        if verdicts_differ(live, sim):
            print_call_diff(f"[{episode.seed} {episode.server} #{i}]", call.tool.name, args, live, sim,
                            f"{sim.meta.get('rule')} ")
        elif not live.is_error and not same_answer(episode, live, sim, rep.ids):
            print(f"[{episode.seed} {episode.server} #{i}] ANSWER {call.tool.name} {json.dumps(args)[:200]}\n"
                  f"    live:  {translate_text(live.text, episode.scratch, rep.ids)[:300]!r}\n"
                  f"    world: {sim.text[:300]!r}")
    wanted, made = end_state_diff(episode, rep)
    for path, value in wanted.items():
        if made.get(path) != value:
            print(f"[{episode.seed} {episode.server}] MISSING {path} live={value[:120]} world={str(made.get(path))[:120]}")
    for path in set(made) - set(wanted):
        print(f"[{episode.seed} {episode.server}] EXTRA {path} world={made[path][:120]}")
    for error in rep.rule_errors[:5]:
        print(f"[{episode.seed} {episode.server}] RULE ERROR {error[:300]}")


# --- learned rules ----------------------------------------------------------------------------------------------
def learned_rules(setup: Setup, opts: argparse.Namespace, folder: Path) -> tuple[dict[str, Any], dict[str, float]]:
    """Each server's rules learned live (`cworld world learn`'s code: `controller.learn.learn_server_live`) from
    `--learn-calls` calls on each of `--learn-seeds`, written to `folder` as `SERVER.learned.yaml`, and the
    operations of that folder alone: no hand-written rule file shows through. The explorer learned from is
    `RealExplorer` (what a task tells the agent about the scratch) with rng `learn:explorer:SERVER:0`, or,
    with `--learn-explorer generic`, the generic one told only where the state lives."""
    from cworld.controller.learn import learn_server_live
    from cworld.engine.learn.files import document, write
    from cworld.engine.rules.spec import load_operations

    seconds: dict[str, float] = {}
    for server in opts.servers:
        tools = setup.tools[server]

        def real(driver: Any, rng: random.Random, tools: list[ToolSpec] = tools, server: str = server) -> Explorer:
            from datetime import UTC, datetime

            state = driver.state()
            return RealExplorer(tools, rng, datetime.now(UTC), server,
                                {k: Path(v) for k, v in driver.shown_paths().items()}, state)

        started = time.perf_counter()
        run = learn_server_live(setup.specs[server], setup.workspace, tools, setup.cards, calls=opts.learn_calls,
                                seeds=opts.learn_seeds, make_explorer=real if opts.learn_explorer == "real" else None)
        seconds[server] = time.perf_counter() - started
        write(document(run.learning, run.how), folder / f"{server}.learned.yaml")
        learned = sum(t.source in ("traffic", "model") for t in run.learning.tools)
        print(f"learned {server}: {learned} of {len(run.learning.tools)} tools from {len(run.traffic.calls)} live "
              f"calls ({opts.learn_explorer} explorer, seeds {opts.learn_seeds}) in {seconds[server]:.1f} s")
    return load_operations(folder), seconds


# --- running ---------------------------------------------------------------------------------------------------
def table(tallies: dict[str, Tally], answers: dict[str, list[int]]) -> list[str]:
    lines = [f"{'server':<11} {'calls':>6} {'live err':>9} {'verdict':>8} {'class':>7} {'agree':>7} "
             f"{'R_c':>7} {'unwanted':>9} {'equal end':>10} {'same answer':>12} {'calls/s':>8}"]
    for server, tally in tallies.items():
        f = tally.figures()
        same, ok = answers.get(server, [0, 0])
        lines.append(f"{server:<11} {f['calls']:>6} {pct(f['live_error_share']):>9} {pct(f['verdict']):>8} "
                     f"{pct(f['error_class']):>7} {pct(f['agreement']):>7} {pct(f['r_c']):>7} "
                     f"{pct(f['unwanted']):>9} {f'{tally.equal}/{tally.episodes}':>10} {pct(same / ok if ok else None):>12} "
                     f"{f['engine_calls_per_s'] or 0:>8,.0f}")
    return lines


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--calls-per-server", type=int, default=40)
    parser.add_argument("--servers", nargs="+", choices=REAL_SERVERS, default=list(REAL_SERVERS))
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--show-diffs", action="store_true", help="print every call and leaf that differs")
    parser.add_argument("--learned", action="store_true", help="add the learned column: each server's rules "
                        "learned live from --learn-seeds (keep them apart from --seeds), used alone")
    parser.add_argument("--learn-calls", type=int, default=300, help="live calls per learning seed")
    parser.add_argument("--learn-seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--learn-explorer", choices=["real", "generic"], default="real",
                        help="real: RealExplorer (knows the scratch, SQL, nested arguments); generic: the learner's")
    parser.add_argument("--learned-out", type=Path, help="keep the learned rule files in this folder")
    parser.add_argument("--operations", type=Path, help="a folder of rule files read over category_cards/_operations "
                        "(drafts: a file here replaces the server's file there)")
    return parser.parse_args(argv)


async def run(opts: argparse.Namespace) -> dict[str, Any]:
    setup = Setup.resolve()
    if opts.operations:
        from cworld.engine.rules.spec import load_operations

        setup.operations.update(load_operations(opts.operations))
    missing = [s for s in opts.servers if s not in setup.specs or s not in setup.tools]
    if missing:
        raise SystemExit(f"not in the manifest or without recorded tools: {', '.join(missing)}")
    episodes = []
    for seed in opts.seeds:
        for server in opts.servers:
            episodes.append(await explore_live(setup, seed, server, opts.calls_per_server))
    calls = sum(len(e.calls) for e in episodes)
    if opts.show_diffs:
        from collections import Counter

        for server in opts.servers:
            used = Counter(f"{c.tool.name}{'!' if c.result.is_error else ''}" for e in episodes if e.server == server
                           for c in e.calls)
            print(f"{server} calls (! = erred live): {dict(sorted(used.items()))}")
    errors = sum(c.result.is_error for e in episodes for c in e.calls)
    print(f"live: {calls} explorer calls over {len(opts.servers)} servers x {len(opts.seeds)} seeds "
          f"({pct(errors / calls if calls else None)} errors)")
    print("columns: verdict = is_error as live; class = same error class where both erred; agree = same verdict "
          "and class; R_c = live's changed state leaves reproduced with the same value; unwanted = leaves the "
          "engine changed that live did not (share of live's); equal end = (seed, server) end states equal; "
          "same answer = calls live answered without error that the engine answered alike (structured content, "
          "else text); calls/s = the engine's calls per CPU second")
    out: dict[str, Any] = {"seeds": opts.seeds, "calls_per_server": opts.calls_per_server, "engines": {}}
    engines: list[tuple[str, str, bool, dict[str, Any] | None]] = [
        ("world", "world (per-tool rules)", True, None), ("world-cards", "world-cards (card rules only)", False, None)]
    if opts.learned:
        with tempfile.TemporaryDirectory() as tmp:
            folder = opts.learned_out or Path(tmp)
            folder.mkdir(parents=True, exist_ok=True)
            learned, seconds = learned_rules(setup, opts, folder)
        out["learning_s"] = seconds
        engines.append(("world-learned", "world-learned (learned rules only)", True, learned))
    for key, label, overrides, operations in engines:
        tallies: dict[str, Tally] = {}
        answers: dict[str, list[int]] = {}
        for episode in episodes:
            rep = await replay(setup, episode, overrides, operations)
            if opts.show_diffs:
                print(f"-- {label}")
                show_diffs(episode, rep)
            tallies.setdefault(episode.server, Tally()).add(score(episode, rep))
            for call, sim in zip(episode.calls, rep.results, strict=True):
                if not call.result.is_error:
                    for where in (episode.server, "ALL"):  # not `key`: that names the engine in the JSON
                        pair = answers.setdefault(where, [0, 0])
                        pair[0] += same_answer(episode, call.result, sim, rep.ids)
                        pair[1] += 1
        tallies["ALL"] = sum(tallies.values(), Tally())
        print(f"\nengine {label}")
        for line in table(tallies, answers):
            print(line)
        out["engines"][key] = {
            s: {**t.figures(), "same_answer": answers[s][0] / answers[s][1] if answers.get(s, [0, 0])[1] else None}
            for s, t in tallies.items()}
    return out


def main(argv: list[str] | None = None) -> int:
    opts = parse(argv)
    started = time.perf_counter()
    out = asyncio.run(run(opts))
    print(f"\n({time.perf_counter() - started:.0f} s)")
    if opts.json:
        opts.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
