"""Harvest: install each package, start it without real credentials and without the network (a network
namespace of its own, `netns.py`; the provenance says whether it was listed offline), list what it offers,
write its catalog.

Every failure is classified:

| class | what happened |
|---|---|
| `install_failed` | the package did not install, or has nothing to start |
| `exited` | the server exited before finishing the handshake (typically: no credentials) |
| `handshake_timeout` | it did not finish the MCP handshake in time |
| `list_timeout` | it finished the handshake but `tools/list` did not answer in time |
| `crashed` | it broke during the handshake or the listing (bad protocol, died) |
| `list_refused` | `tools/list` answered an error (it wants its credentials or the network to list) |
| `invalid_listing` | `tools/list` answered with tools MCP does not allow (a schema that is not an object...) |
| `listed_nothing` | it answered and listed no tools |
| `needs_network` | listed offline, it failed with a network error (it fetches its tools, or checks a key online) |

One state file per server in `<workspace>/harvest/state/` makes a harvest resumable: a server whose entry
has not changed is not tried again (failures are, with `retry_failed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from cworld.data_model import ToolSpec
from cworld.mcp.session import LiveSession, StartFailure, open_session
from cworld.mcp.targets import stdio_target
from cworld.mcp.toolspec import to_tool_spec
from cworld.registry.harvest.catalog import SUMMARY, server_files, summarize, write_json
from cworld.registry.harvest.entries import HarvestEntry, placeholder
from cworld.registry.harvest.jail import Jail, jail_base
from cworld.registry.harvest.netns import Isolation, network_failure, network_isolation
from cworld.registry.harvest.package import INSTALL_TIMEOUT_S, Installed, install
from cworld.registry.harvest.recover import next_start

HANDSHAKE_TIMEOUT_S = 30.0
LIST_TIMEOUT_S = 30.0
PAGE_CAP = 50
STDERR_TAIL = 600
FAILURES = ("install_failed", "exited", "handshake_timeout", "list_timeout", "crashed", "list_refused",
            "invalid_listing", "listed_nothing", "needs_network")


@dataclass(frozen=True)
class HarvestOptions:
    out: Path
    """Where the catalog files go (the environment's registry/catalogs/harvested)."""
    workspace: Path
    """Where packages, state and scratch go (<workspace>/harvest)."""
    jobs: int = 2
    handshake_timeout_s: float = HANDSHAKE_TIMEOUT_S
    list_timeout_s: float = LIST_TIMEOUT_S
    force: bool = False
    retry_failed: bool = False
    offline: bool = True
    """Start each server in a network namespace of its own (where one can be made, `network_isolation`)."""
    keep_packages: bool = False
    """Keep each installed package in the workspace after its listing (default: installed in the temporary
    jail base and removed, because a harvest is large; kept packages must be readable by other uids)."""


@dataclass
class Outcome:
    """One server's harvest: what `summary.json` and the state file hold."""

    id: str
    registry: str
    package: str
    category: str
    status: str = "failed"
    failure: str | None = None
    detail: str = ""
    stderr_tail: str = ""
    tools: int = 0
    resources: int = 0
    prompts: int = 0
    seconds: float = 0.0
    digest: str = ""
    version: str = ""
    launch: list[str] = field(default_factory=list)
    env: list[str] = field(default_factory=list)
    """The variables it was started with placeholders for (names only)."""
    wrote_outside: list[str] = field(default_factory=list)
    offline: bool = False
    """It was started in a network namespace of its own (no network beyond its loopback)."""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


CLUE_CHARS = 6000
"""How much of a failed start's stderr is read for what it asks for (the catalog keeps `STDERR_TAIL`)."""


class _Failed(Exception):
    def __init__(self, failure: str, detail: str, stderr: str = "", clue: str = "") -> None:
        super().__init__(detail)
        self.failure, self.detail, self.stderr, self.clue = failure, detail, stderr, clue or stderr


def state_dir(options: HarvestOptions) -> Path:
    return options.workspace / "state"


def _state_path(options: HarvestOptions, entry: HarvestEntry) -> Path:
    return state_dir(options) / f"{entry.id}.json"


def previous(options: HarvestOptions, entry: HarvestEntry) -> dict[str, Any] | None:
    try:
        data = json.loads(_state_path(options, entry).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("digest") == entry.digest() else None


def restore_states(entries: list[HarvestEntry], options: HarvestOptions) -> int:
    """State files from the committed `summary.json` for entries that have none (a fresh workspace), so
    a harvest resumes from the committed catalog instead of trying every server again or writing a summary
    without them. A line whose recorded digest differs from its entry's is not restored (the entry
    changed); lines written before digests were kept are taken as the entry's. Returns how many."""
    try:
        summary = json.loads((options.out / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    lines = {str(r.get("id")): r for r in summary.get("servers", []) if isinstance(r, dict)}
    restored = 0
    for entry in entries:
        line = lines.get(entry.id)
        if line is None or _state_path(options, entry).exists() or line.get("package") != entry.package:
            continue
        if line.get("digest", entry.digest()) != entry.digest():
            continue
        if line.get("status") == "ok" and not (options.out / f"{entry.id}.json").is_file():
            continue
        write_json(_state_path(options, entry), {**line, "digest": entry.digest()})
        restored += 1
    return restored


def pending(entries: list[HarvestEntry], options: HarvestOptions) -> list[HarvestEntry]:
    """The entries still to do: never tried, changed since, forced, or failed and retried."""
    if options.force:
        return list(entries)
    todo = []
    for entry in entries:
        done = previous(options, entry)
        if done is None or (options.retry_failed and done.get("status") != "ok"):
            todo.append(entry)
    return todo


# --- one server -------------------------------------------------------------------------------------


async def harvest_one(entry: HarvestEntry, options: HarvestOptions, base: Path, slot: int) -> Outcome:
    """Install, start, list, write the catalog file; every failure becomes the outcome's class."""
    started = time.monotonic()
    outcome = Outcome(entry.id, entry.registry, entry.package, entry.category, digest=entry.digest())
    # In the jail base by default: every harvest uid can read it (a workspace folder may not let them).
    prefix = (options.workspace if options.keep_packages else base) / "packages" / entry.id
    try:
        try:
            installed = await asyncio.to_thread(install, entry, prefix)
        except (RuntimeError, OSError) as exc:
            raise _Failed("install_failed", str(exc)) from None
        outcome.version, outcome.launch = installed.version, installed.launch
        outcome.env = sorted(server_variables(entry, installed))
        listing = await _list_with_retries(entry, installed, options, base, slot, outcome)
        if not listing["tools"]:
            raise _Failed("listed_nothing", "the server answered and listed no tools", listing["stderr"])
        record = catalog_record(entry, installed, listing)
        write_json(options.out / f"{entry.id}.json", record)
        outcome.status, outcome.tools = "ok", len(record["tools"])
        outcome.resources, outcome.prompts = len(record["resources"]), len(record["prompts"])
    except _Failed as failed:
        outcome.failure, outcome.detail, outcome.stderr_tail = _failure_class(failed, outcome), failed.detail[:800], failed.stderr
        (options.out / f"{entry.id}.json").unlink(missing_ok=True)
    finally:
        if not options.keep_packages:
            await asyncio.to_thread(shutil.rmtree, prefix, True)
    outcome.seconds = round(time.monotonic() - started, 2)
    write_json(_state_path(options, entry), outcome.as_dict())
    return outcome


def _failure_class(failed: _Failed, outcome: Outcome) -> str:
    """`needs_network` for a server listed offline whose start or listing failed on a network error."""
    started = failed.failure not in ("install_failed", "invalid_listing", "listed_nothing")
    if outcome.offline and started and network_failure(failed.detail, failed.clue):
        return "needs_network"
    return failed.failure


AWS_ENDPOINT = "AWS_ENDPOINT_URL"
"""AWS's SDKs send every call to this URL when it is set: with placeholder AWS variables it is the closed
port, so a valid placeholder region never makes them reach AWS."""


def server_variables(entry: HarvestEntry, installed: Installed) -> dict[str, str]:
    """Placeholders for every credential-like variable its code reads, under the entry's own values."""
    found = {name: placeholder(name) for name in installed.env_names}
    if any(name.startswith("AWS_") for name in found):
        found[AWS_ENDPOINT] = placeholder(AWS_ENDPOINT)
    return {**found, **entry.env}


MAX_STARTS = 4
"""Starts per server: the first, then one more for each thing its stderr says it is missing."""


async def _list_with_retries(
    entry: HarvestEntry, installed: Installed, options: HarvestOptions, base: Path, slot: int, outcome: Outcome
) -> dict[str, Any]:
    """A server that exits before the handshake often says why: a variable, a flag or the subcommand that
    serves MCP (`server stdio`, `tool mcp`). It is started again with what it asked for
    (`harvest.recover`), up to `MAX_STARTS` times; the catalog records the variables and arguments.
    Arguments are added only to an entry that gives none of its own."""
    for attempt in range(MAX_STARTS):
        try:
            return await _list_in_jail(entry, installed, options, base, slot, outcome)
        except _Failed as failed:
            if failed.failure != "exited" or attempt == MAX_STARTS - 1:
                raise
            given = installed.launch[1:]
            start = next_start(failed.clue, server_variables(entry, installed), given)
            if entry.args:
                start.args = []
            if not start:
                raise
        installed.env_names += [n for n in start.env if n not in installed.env_names]
        installed.command += start.args
        installed.launch += start.args
        outcome.launch, outcome.env = installed.launch, sorted(server_variables(entry, installed))
    raise AssertionError("unreachable")


async def _list_in_jail(
    entry: HarvestEntry, installed: Installed, options: HarvestOptions, base: Path, slot: int, outcome: Outcome
) -> dict[str, Any]:
    jail = Jail.make(base, entry.id, slot, network_isolation() if options.offline else Isolation())
    outcome.offline = jail.offline
    argv = jail.command(installed.command)
    target = stdio_target(argv[0], argv[1:], env=jail.environment(server_variables(entry, installed)),
                          cwd=jail.work)
    try:
        return {**await _list(target, options), "offline": jail.offline}
    finally:
        await asyncio.to_thread(jail.sweep)
        outcome.wrote_outside = jail.strays
        jail.discard()


async def _list(target: Any, options: HarvestOptions) -> dict[str, Any]:
    try:
        live = await open_session(target, options.handshake_timeout_s)
    except StartFailure as failure:
        stderr = _tail(failure.stderr)
        if failure.timed_out:
            raise _Failed("handshake_timeout", f"no MCP handshake within {options.handshake_timeout_s:g}s",
                          stderr) from None
        if failure.returncode is not None and failure.returncode not in (-signal.SIGKILL, -signal.SIGTERM):
            raise _Failed("exited", f"exited with code {failure.returncode} before the handshake", stderr,
                          failure.stderr[-CLUE_CHARS:]) from None
        raise _Failed("crashed", f"the handshake failed: {failure}", stderr) from None
    pid = live.process.pid if live.process is not None else None
    try:
        return await _listing(live, options)
    finally:
        await live.close(kill=True)
        _kill_group(pid)


async def _listing(live: LiveSession, options: HarvestOptions) -> dict[str, Any]:
    client = live.client
    info = client.server_info
    try:
        tools = await _pages(lambda c: client.list_tools(cursor=c), "tools", options.list_timeout_s)
    except TimeoutError:
        raise _Failed("list_timeout", f"tools/list did not answer within {options.list_timeout_s:g}s",
                      _tail(live.stderr_tail())) from None
    except MCPError as exc:
        if live.process is not None:
            await live.process.wait_exited(0.5)  # the pipe closes a moment before the exit is seen
        if live.process_exited or "connection closed" in str(exc).lower():
            raise _Failed("crashed", f"the server died during tools/list ({exc})"[:400],
                          _tail(live.stderr_tail())) from None
        raise _Failed("list_refused", f"tools/list answered an error: {exc}"[:400], _tail(live.stderr_tail())) from None
    except ValidationError as exc:
        raise _Failed("invalid_listing", f"tools/list answered what MCP does not allow: {exc}"[:400],
                      _tail(live.stderr_tail())) from None
    except Exception as exc:
        raise _Failed("crashed", f"tools/list failed: {type(exc).__name__}: {exc}"[:400],
                      _tail(live.stderr_tail())) from None
    caps = client.server_capabilities
    resources = prompts = []
    with contextlib.suppress(Exception):
        if caps.resources is not None:
            resources = await _pages(lambda c: client.list_resources(cursor=c), "resources", options.list_timeout_s)
    with contextlib.suppress(Exception):
        if caps.prompts is not None:
            prompts = await _pages(lambda c: client.list_prompts(cursor=c), "prompts", options.list_timeout_s)
    return {
        "tools": tools,
        "resources": [_plain(r, ("uri", "name", "title", "description", "mimeType")) for r in resources],
        "prompts": [_plain(p, ("name", "title", "description", "arguments")) for p in prompts],
        "server_info": {"name": getattr(info, "name", ""), "version": getattr(info, "version", "")},
        "protocol_version": client.protocol_version,
        "stderr": _tail(live.stderr_tail()),
    }


async def _pages(fetch: Callable[[str | None], Any], key: str, timeout_s: float) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(PAGE_CAP):
        page = await asyncio.wait_for(fetch(cursor), timeout_s)
        items.extend(getattr(page, key))
        cursor = page.next_cursor
        if not cursor:
            break
    return items


def _plain(item: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    data = item.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {k: v for k, v in data.items() if k in keys}


def _kill_group(pid: int | None) -> None:
    """The server's whole process group, whatever the client's shutdown left."""
    if pid is not None:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)


def _tail(text: str) -> str:
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines)[-STDERR_TAIL:]


def catalog_record(entry: HarvestEntry, installed: Installed, listing: dict[str, Any]) -> dict[str, Any]:
    """The committed file: provenance, then the tools in the catalog format, resources and prompts."""
    tools = [_tool_item(to_tool_spec(t, entry.id, "catalog")) for t in listing["tools"]]
    unique = list({t["name"]: t for t in reversed(tools)}.values())[::-1]  # the first of a repeated name
    return {
        "server": entry.id,
        "category": entry.category,
        "summary": entry.summary,
        "provenance": {
            "registry": entry.registry,
            "package": entry.package,
            "version": installed.version,
            "license": installed.license,
            "integrity": installed.integrity,
            "harvested_at": time.strftime("%Y-%m-%d"),
            "launch": installed.launch,
            "env": sorted(server_variables(entry, installed)),
            "pins": installed.pins,
            "server_info": listing["server_info"],
            "protocol_version": listing["protocol_version"],
            "listed_offline": bool(listing.get("offline")),
        },
        "tools": unique,
        "resources": listing["resources"],
        "prompts": listing["prompts"],
    }


def _tool_item(spec: ToolSpec) -> dict[str, Any]:
    item: dict[str, Any] = {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}
    if spec.output_schema is not None:
        item["output_schema"] = spec.output_schema
    annotations = spec.annotations.model_dump(mode="json", exclude_none=True)
    if annotations:
        item["annotations"] = annotations
    return item


# --- the whole list ---------------------------------------------------------------------------------


@dataclass
class HarvestProgress:
    started: Callable[[HarvestEntry], None] = lambda entry: None
    done: Callable[[Outcome], None] = lambda outcome: None


async def harvest(
    entries: list[HarvestEntry], options: HarvestOptions, progress: HarvestProgress | None = None,
    listed: list[HarvestEntry] | None = None,
) -> list[Outcome]:
    """Every pending entry, `jobs` at a time; the summary (of `listed`, the whole list, when only some
    entries are harvested) is rewritten after each server, so a harvest stopped midway loses nothing."""
    progress = progress or HarvestProgress()
    listed = listed or entries
    todo = pending(entries, options)
    slots: asyncio.Queue[int] = asyncio.Queue()
    for slot in range(max(1, options.jobs)):
        slots.put_nowait(slot)
    base = jail_base()
    outcomes: list[Outcome] = []
    budget = INSTALL_TIMEOUT_S + options.handshake_timeout_s + 3 * options.list_timeout_s + 60

    async def one(entry: HarvestEntry) -> None:
        slot = await slots.get()
        try:
            progress.started(entry)
            try:
                outcome = await asyncio.wait_for(harvest_one(entry, options, base, slot), budget)
            except Exception as exc:  # its own failure, whatever it is: the others go on
                what = ("the whole harvest of this server outlasted its budget" if isinstance(exc, TimeoutError)
                        else f"the harvest of this server failed: {type(exc).__name__}: {exc}")
                outcome = Outcome(entry.id, entry.registry, entry.package, entry.category, failure="crashed",
                                  detail=what[:800], digest=entry.digest())
                write_json(_state_path(options, entry), outcome.as_dict())
            outcomes.append(outcome)
            write_summary(listed, options)
            progress.done(outcome)
        finally:
            slots.put_nowait(slot)

    try:
        await asyncio.gather(*(one(e) for e in todo))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    write_summary(listed, options)
    return outcomes


def write_summary(entries: list[HarvestEntry], options: HarvestOptions) -> dict[str, Any]:
    """summary.json from the state of every entry tried so far, in the list's order."""
    results = [done for e in entries if (done := previous(options, e)) is not None]
    listed = {p.stem for p in server_files(options.out)}
    summary = summarize(results)
    summary["catalog_files"] = len(listed)
    write_json(options.out / SUMMARY, summary)
    return summary
