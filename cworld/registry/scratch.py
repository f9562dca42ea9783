"""Scratch targets for real servers that write: a folder, a git repository, a SQLite database.

Each is made fresh for one server for one run, under the run's scratch root, and seeded with a few
small, known things (a text file, a commit, an `items` table), so that validation probes and agents
have something real to read, and so that a tool that writes never touches the user's own files.
"""

from __future__ import annotations

import base64
import sqlite3
import subprocess
from pathlib import Path

#: The same three rows go into the SQLite scratch database and the throwaway PostgreSQL cluster.
SEED_ITEMS: tuple[tuple[int, str, int], ...] = ((1, "bolt", 120), (2, "nut", 80), (3, "washer", 5))

#: A 1x1 transparent PNG, so tools that read media have a real image to read.
_PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

_SEED_FILES: dict[str, str] = {
    "notes.txt": "first line\nsecond line\nthird line\n",
    "move-me.txt": "this file exists to be moved\n",
    "docs/readme.md": "# Scratch\n\nA folder made by cworld for one run. Nothing here is yours.\n",
}


def make_folder(path: Path) -> Path:
    """An empty-but-seeded folder; an existing one is left as it is (one scratch per server per run)."""
    if path.is_dir():
        return path
    path.mkdir(parents=True)
    for rel, text in _SEED_FILES.items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    (path / "pixel.png").write_bytes(_PIXEL_PNG)
    return path


_GIT_ENV = {
    "GIT_AUTHOR_NAME": "cworld",
    "GIT_AUTHOR_EMAIL": "cworld@localhost",
    "GIT_COMMITTER_NAME": "cworld",
    "GIT_COMMITTER_EMAIL": "cworld@localhost",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def make_git_repo(path: Path) -> Path:
    """A repository with one commit of README.md (history for log/show), a staged CHANGELOG.md and an unstaged
    README.md change (something for diffs and a commit)."""
    if (path / ".git").is_dir():
        return path
    path.mkdir(parents=True, exist_ok=True)
    (path / "README.md").write_text("# probe repository\n\nMade by cworld for one run.\n", encoding="utf-8")
    env = {**_GIT_ENV, "PATH": "/usr/bin:/bin:/usr/local/bin"}
    for cmd in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "README.md"],
        ["git", "commit", "-q", "-m", "initial commit"],
    ):
        subprocess.run(cmd, cwd=path, env=env, check=True, capture_output=True, timeout=30)
    # One staged change and one unstaged change, so diffs show something and a commit has work to do.
    (path / "CHANGELOG.md").write_text("# Changes\n\n- first entry\n", encoding="utf-8")
    subprocess.run(
        ["git", "add", "CHANGELOG.md"], cwd=path, env=env, check=True, capture_output=True, timeout=30
    )
    (path / "README.md").write_text(
        "# probe repository\n\nMade by cworld for one run.\nA change not staged yet.\n"
    )
    return path


def make_sqlite_db(path: Path) -> Path:
    """A database with an `items(id, name, qty)` table holding SEED_ITEMS."""
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL)")
        db.executemany("INSERT INTO items VALUES (?, ?, ?)", SEED_ITEMS)
    return path
