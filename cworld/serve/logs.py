"""Episode events as MCP log messages (`notifications/message`), so a client can watch an episode: the
faults the controller injects, the user's mid-episode messages, the episode starting and ending.

The events are read off the results the client gets (`start_episode`'s episode, a step's `_meta.cworld`,
the ended episode's summary), so the log never tells more than the results do. Each session picks its
level with `logging/setLevel` (default `info`; `debug` adds one entry per tool call). The logging
capability belongs to the handshake era (up to 2025-11-25) that `cworld serve` speaks; the 2026-07-28
protocol deprecates it (SEP-2577), which is why the server registers and sends it through the SDK's
generic request and notification calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp.types as types

LEVELS: tuple[types.LoggingLevel, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert",
                                          "emergency")
"""Syslog severities, lowest first (RFC 5424, as MCP orders them)."""
DEFAULT_LEVEL: types.LoggingLevel = "info"
EPISODE, FAULTS, USER, CALLS = "cworld.episode", "cworld.faults", "cworld.user", "cworld.calls"
ENDED_LEVEL: dict[str, types.LoggingLevel] = {"turn_limit": "notice", "infra_error": "error"}


@dataclass(frozen=True)
class LogEntry:
    level: types.LoggingLevel
    logger: str
    data: dict[str, Any]

    def notification(self) -> types.LoggingMessageNotification:
        params = types.LoggingMessageNotificationParams(level=self.level, logger=self.logger, data=self.data)
        return types.LoggingMessageNotification(params=params)


def shown(entry: LogEntry, threshold: types.LoggingLevel) -> bool:
    """Whether a session that asked for `threshold` and above gets `entry`."""
    return LEVELS.index(entry.level) >= LEVELS.index(threshold)


def entries(tool: str, result: types.CallToolResult, *, started: bool, ended: bool) -> list[LogEntry]:
    """What one tool call tells about its episode: `started` for a `start_episode` that opened one, `ended`
    for a call whose result is the ended episode's summary."""
    structured = result.structured_content or {}
    if started:
        return [_started(structured)]
    if ended:
        return [_ended(structured)]
    meta = (result.meta or {}).get("cworld")
    return _step(tool, meta) if isinstance(meta, dict) else []


def _started(episode: dict[str, Any]) -> LogEntry:
    keys = ("episode_id", "task_id", "seed", "mode", "policy", "access", "agent", "max_turns")
    data = {"event": "episode_started", **{k: episode.get(k) for k in keys},
            "message": f"episode {episode.get('episode_id')} of {episode.get('task_id')} started "
                       f"({episode.get('mode')}, policy {episode.get('policy')}, seed {episode.get('seed')})"}
    return LogEntry("info", EPISODE, data)


def _ended(summary: dict[str, Any]) -> LogEntry:
    status = str(summary.get("status"))
    keys = ("episode_id", "task_id", "status", "reward", "reward_known", "success", "turns")
    data = {"event": "episode_ended", **{k: summary.get(k) for k in keys if k in summary},
            "message": f"episode {summary.get('episode_id')} ended ({status}); reward {summary.get('reward')}"}
    return LogEntry(ENDED_LEVEL.get(status, "info"), EPISODE, data)


def _step(tool: str, meta: dict[str, Any]) -> list[LogEntry]:
    turn = meta.get("turn")
    out = [LogEntry("debug", CALLS, {"event": "tool_call", "turn": turn, "tool": tool,
                                     "error_class": meta.get("error_class"),
                                     "message": f"turn {turn}: {tool} -> {meta.get('error_class') or 'ok'}"})]
    for fault in meta.get("interventions") or []:
        where = f" on {fault.get('tool')}" if fault.get("tool") else ""
        out.append(LogEntry("warning", FAULTS, {"event": "fault", **fault,
                                                "message": f"turn {fault.get('turn')}: {fault.get('kind')} "
                                                           f"injected{where}"}))
    for text in meta.get("user_messages") or []:
        out.append(LogEntry("info", USER, {"event": "user_message", "turn": turn, "text": text,
                                           "message": f"turn {turn}: the user says: {text}"}))
    return out
