"""What a server that exited before the handshake asks for, read from its stderr: another start may list.

A server without its credentials often says what it is missing: a variable (`HEVY_API_KEY is required`),
a flag (`--token or -t`, `the following arguments are required: --api-key`), a folder
(`--allowed-directories <dirs>`), or the subcommand that serves MCP (`{info,serve}`, `Run 'x mcp' to start
the MCP server`, a usage line naming `stdio`). `next_start` turns that into one more start: placeholders
for the variables, placeholder values for the flags, the subcommand. Every value is a placeholder: a URL is
`http://127.0.0.1:9`, a closed port on this machine, never the real service.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cworld.registry.harvest.entries import placeholder
from cworld.registry.harvest.variables import not_platform, wanted

_ENV_NAME = re.compile(r"(?<![\w./$-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w/(-])")
_ASKS = re.compile(
    r"required|missing|not set|not found|must be set|must provide|please (?:set|provide)|is needed|"
    r"no (?:api )?(?:key|token|credentials?)|provide (?:it|one|an?)|environment variable|env var|"
    r"invalid|undefined|empty", re.IGNORECASE)
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]{1,40})(?:[ =]<([^>]{1,40})>|[ =]([A-Z][A-Z0-9_-]{1,40}))?")
_REQUIRED_CONTEXT = re.compile(r"required|missing|usage", re.IGNORECASE)
_INSISTS = re.compile(r"environment variable|env var|is required|must be set|not set|is missing", re.IGNORECASE)
_OPTION_REQUIRED = re.compile(r"\(required\)|\[required\]|\brequired\b(?!.*\b(?:with|if|when)\b)",
                              re.IGNORECASE)
"""A help text's option line counts only when it says the option itself is required."""
_CHOICES = re.compile(r"\{([a-z0-9_,-]+)\}")
_RUN_TO_START = re.compile(r"[Rr]un ['\"`]?[\w./@-]+ ([a-z][a-z0-9-]*)['\"`]? to (?:start|run|serve)")
_SERVE_WORDS = ("stdio", "mcp", "serve", "server", "start", "run")
_SKIP_FLAGS = {"--help", "--version", "--verbose", "--debug", "--quiet", "--port", "--host", "--transport",
               "--sse", "--http", "--config", "--log-level", "--json", "--output", "--format"}


@dataclass
class Start:
    """One more start: variables to add (name -> placeholder) and arguments to append."""

    env: dict[str, str] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.env or self.args)


def next_start(stderr: str, env: dict[str, str], args: list[str]) -> Start:
    """What to add to a start with `env` and `args` that exited printing `stderr` (empty: nothing new)."""
    start = Start(env=missing_variables(stderr, env))
    if (sub := subcommand(stderr, args)) is not None:
        start.args.append(sub)
    for flag, value in required_flags(stderr, args):
        start.args += [flag, value]
    return start


def missing_variables(stderr: str, env: dict[str, str]) -> dict[str, str]:
    """Credential-like variables the stderr names on a line that asks for something, not yet set."""
    found: dict[str, str] = {}
    for line in stderr.splitlines():
        if not _ASKS.search(line):
            continue
        insists = bool(_INSISTS.search(line))
        for name in _ENV_NAME.findall(line):
            if name not in env and (wanted(name) or (insists and not_platform(name))):
                found[name] = placeholder(name)
    return found


def subcommand(stderr: str, args: list[str]) -> str | None:
    """The subcommand that serves MCP when the stderr is a usage message offering one (and none is given)."""
    if any(a in _SERVE_WORDS for a in args):
        return None
    if (match := _RUN_TO_START.search(stderr)) and match.group(1) in _SERVE_WORDS:
        return match.group(1)
    lowered = stderr.lower()
    if not any(w in lowered for w in ("usage", "required", "missing command", "commands:", "non-option")):
        return None
    choices = {c for group in _CHOICES.findall(stderr) for c in group.split(",")}
    listed = set(re.findall(r"^\s+(?:\S+\s+)?([a-z][a-z0-9-]*)\s{2,}\S", stderr, re.MULTILINE))
    usage = " ".join(line for line in stderr.splitlines() if "usage" in line.lower())
    for word in _SERVE_WORDS:
        if word in choices or word in listed or (word == "stdio" and re.search(r"\bstdio\b", usage)):
            return word
    return None


def required_flags(stderr: str, args: list[str]) -> list[tuple[str, str]]:
    """Flags an error or usage line says are required (or the lines just after one that says so without
    naming a flag: `The following required arguments are missing:` then `--token or -t`), each with a
    placeholder value. The option lists of a help text are not read: they name every flag."""
    out: dict[str, str] = {}
    after_ask = 0
    for line in stderr.splitlines():
        option_help = line.lstrip().startswith("-")
        asks = bool((_OPTION_REQUIRED if option_help else _REQUIRED_CONTEXT).search(line))
        flags = _FLAG.findall(_without_optional(line))
        if asks or after_ask > 0:
            for flag, metavar, upper in flags:
                if flag not in _SKIP_FLAGS and flag not in args and not flag.startswith("--no-"):
                    out.setdefault(flag, flag_value(flag, metavar or upper))
        says_missing = asks and not option_help and re.search(r"required|missing", line, re.IGNORECASE)
        after_ask = 3 if says_missing and not flags else after_ask - 1
    return list(out.items())[:3]


def _without_optional(line: str) -> str:
    """A usage line without its `[optional ...]` parts (nested ones too)."""
    while (shorter := re.sub(r"\[[^\[\]]*\]", "", line)) != line:
        line = shorter
    return line


def flag_value(flag: str, metavar: str = "") -> str:
    """A placeholder a flag can take: `.` (the scratch folder) for folders, else the variable's."""
    words = f"{flag} {metavar}".lower()
    if re.search(r"dir|folder|root|workspace|allowed|path", words):
        return "."
    return placeholder(flag.strip("-").replace("-", "_").upper())
