"""A seeded explorer that follows no plan: it calls one server's tools as a curious, careless agent would,
and is recorded live (by `cworld world learn` and by `benchmarks/world_fidelity.py`).

Each step picks a tool (about half of them writes), or retries the tool that just failed (with values it
has seen, as an agent fixing its call would). Arguments come from the tool's input schema: a reference
parameter (`*_id`, `token`, `path`, `name`, `code`, `symbol`, ...) mostly takes a value the explorer saw
in an earlier answer under a matching key (`order_id`, an `id` inside `orders`, `token`), otherwise a
plausible but wrong one (a made-up id of the same shape, or a word); every other parameter comes from the
project's value generator (realistic values, sometimes the probe value). Required parameters always,
optional ones now and then. It logs in only when it happens to pick a login tool, and then reuses the
token it saw like any other value. A task would tell the agent its own credentials (an email and a
password, a customer id and a PIN, a chat handle): `briefing` gives them, used like seen values (and
mistyped as often as any reference).
"""


from __future__ import annotations

import copy
import random
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cworld.data_model import ToolResult, ToolSpec
from cworld.registry.probe_args import bank_keys
from cworld.registry.value_bank import ValueBank
from cworld.schemas.plausible import session_clock
from cworld.schemas.probe import ProbeValues
from cworld.schemas.realistic import RealisticValues
from cworld.schemas.validation import validation_error
from cworld.schemas.walk import resolve_ref

#: Parameters that name something that must exist (or be owned): filled from what answers showed.
REFERENCE = re.compile(
    r"(^|_)(ids?|token|paths?|names?|code|symbol|handle|key|sku|slug|email|sha|branch|entity|entities"
    r"|password|pin|passcode)$"
    r"|^(to|cc|bcc|recipients)$", re.IGNORECASE)
#: Parameters whose values answers show under another key: recipients are emails, a draft is a message.
ALIASES = {"to": ("email",), "cc": ("email",), "bcc": ("email",), "recipients": ("email",),
           "draft_id": ("message_id",), "attendee_ids": ("person_id",), "member_ids": ("user_id",)}
#: Tools that make something new: a `name` they take is the new thing's name, not a reference.
_CREATES = re.compile(r"^(create|add|new|make|write|insert|register|post|open)_", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_AGAIN = 8
_LOGIN = re.compile(r"^(log_?in|sign_?in|authenticate)$", re.IGNORECASE)
_TOKEN = re.compile(r"(^|_)(token|session)$", re.IGNORECASE)


#: What a task tells the agent about its own account: these keys of the app's user records.
CREDENTIALS = ("password", "pin", "passcode", "customer_id", "email", "handle")


def briefing(state: dict[str, Any]) -> dict[str, Any]:
    """The credentials of an app's own user: its single records (`account`, `customer`, `auth`) and the
    record its `me` names, credential keys only."""
    records = [v for v in state.values() if isinstance(v, dict) and not _is_collection(v)]
    me = state.get("me")
    if isinstance(me, str):
        records += [c[me] for c in state.values() if isinstance(c, dict) and isinstance(c.get(me), dict)]
    return {k: v for record in records for k, v in record.items() if k in CREDENTIALS and isinstance(v, str)}


def _is_collection(value: dict[str, Any]) -> bool:
    return bool(value) and all(isinstance(v, dict) for v in value.values())


@dataclass
class Call:
    """One recorded call: the tool, the arguments it was given and what it answered."""

    tool: ToolSpec
    arguments: dict[str, Any]
    result: ToolResult


@dataclass
class Rates:
    """How the explorer behaves; the defaults are the benchmark's."""

    write: float = 0.5
    """share of picks that are writes (when the server has any)"""
    seen: float = 0.7
    """share of reference parameters filled with a value seen in an answer (else a wrong one)"""
    optional: float = 0.3
    """chance to fill each optional parameter"""
    retry: float = 0.6
    """chance to retry a failed call at once (with seen values)"""
    probe: float = 0.2
    """share of other values taken from the probe generator (else realistic)"""
    hints: bool = False
    """read the values an error lists for the argument it quoted (`no hotels listed in 'Lisbon'. Cities with
    hotels: Auckland, Bangkok, ...`) and give one of them next time, as an agent fixing its call would
    (learning's explorer; off for the benchmarks' one, whose traffic stays as measured)"""
    relogin: bool = False
    """after a call refused for its token (`auth`), log in (a tool named login, sign_in or authenticate, with
    the credentials the task told) and send the refused call again with the newest token, as an agent whose
    session ran out would (learning's explorer; off for the benchmarks' one)"""
    again: float = 0.0
    """chance, after a write the service accepted, to send it again with the same arguments until it is
    refused or answers as the last time (at most `_AGAIN` times): a limit shows itself (a hotel full, a
    balance spent, a duplicate); learning's explorer, off for the benchmarks' one"""


class Explorer:
    """Picks calls over one server's tools, learning values from the answers it is shown."""

    def __init__(self, tools: list[ToolSpec], rng: random.Random, now: datetime | None = None,
                 rates: Rates | None = None, briefing: dict[str, Any] | None = None,
                 again: random.Random | None = None) -> None:
        """`briefing`: what the task told the agent before it started (its own credentials), by key;
        `again`: the rng of the choice to send a write again (`rates.again`; none: never), its own so the
        rest of the exploration draws as without it."""
        self.rng, self.now, self.rates, self.again = rng, now, rates or Rates(), again
        self.reads = [t for t in tools if t.annotations.read_only_hint]
        self.writes = [t for t in tools if not t.annotations.read_only_hint]
        self.bank = ValueBank(now)
        self.bank.seed(briefing or {})
        self._retry: ToolSpec | None = None
        self._retried = False
        self._last: dict[str, Any] = {}
        self._hints: dict[tuple[str, str], list[str]] = {}
        self._again: tuple[ToolSpec, dict[str, Any], str, int] | None = None
        self._told = dict(briefing or {})
        self._login = next((t for t in self.writes if _LOGIN.match(t.name)), None)
        self._resend: tuple[ToolSpec, dict[str, Any]] | None = None
        """the call refused for its token, sent again after the login"""
        self._fresh_token = False
        self._resent = False

    # --- choosing ---------------------------------------------------------------------------------------
    def next_call(self) -> tuple[ToolSpec, dict[str, Any]]:
        """The next tool and its arguments."""
        if self._again is not None:
            tool, args = self._again[0], self._again[1]
            self._retried, self._last = False, copy.deepcopy(args)
            return tool, copy.deepcopy(args)
        if self._fresh_token and self._resend is not None:
            tool, args = self._resend
            self._resend, self._fresh_token, self._retried, self._resent = None, False, True, True
            self._last = {k: self._newest(k, v) for k, v in args.items()}
            return tool, copy.deepcopy(self._last)
        if self._resend is not None and self._login is not None:
            self._retried = True
            with session_clock(self.now):
                self._last = {**self.arguments(self._login, careful=True),
                              **{k: v for k, v in self._told.items() if k in self._props(self._login)}}
            return self._login, copy.deepcopy(self._last)
        self._retried = self._retry is not None
        tool = self._retry or self._pick()
        self._retry = None
        with session_clock(self.now):
            self._last = self.arguments(tool, careful=self._retried)
            return tool, self._last

    def observe(self, tool: ToolSpec, result: ToolResult) -> None:
        """Learn the answer's values; after an error (not of a retry), maybe retry the same tool next."""
        self.bank.learn(result)
        self._again = self._pushed(tool, result)
        self._relogged(tool, result)
        if result.is_error and self.rates.hints:
            self._hints.update({(tool.name, n): v for n, v in listed_values(result.text, self._last).items()})
        if result.is_error and not self._retried and self.rng.random() < self.rates.retry:
            self._retry = tool

    def _relogged(self, tool: ToolSpec, result: ToolResult) -> None:
        """Keep a call refused for its token to send again once a login answered (one login per refusal, none
        for the call sent again)."""
        resent, self._resent = self._resent, False
        if tool is self._login:
            self._fresh_token = self._resend is not None and not result.is_error
            if result.is_error:
                self._resend = None
        elif result.is_error and result.error_class == "auth" and self.rates.relogin and self._login is not None \
                and self._resend is None and not resent:
            self._resend, self._retry = (tool, dict(self._last)), None

    def _newest(self, name: str, value: Any) -> Any:
        """A token argument takes the token the last login gave; any other keeps its value."""
        if not _TOKEN.search(name):
            return value
        fresh = self.bank.candidates(name)
        return fresh[0] if fresh else value

    @staticmethod
    def _props(tool: ToolSpec) -> set[str]:
        return set((tool.input_schema or {}).get("properties") or {})

    def _pushed(self, tool: ToolSpec, result: ToolResult) -> tuple[ToolSpec, dict[str, Any], str, int] | None:
        """The write to send again next (accepted, and answered otherwise than the last time), or None."""
        if result.is_error or tool.annotations.read_only_hint or self.again is None or tool is self._login:
            return None
        if self._again is not None and self._again[0] is tool:
            _, args, text, times = self._again
            return None if text == result.text or times >= _AGAIN else (tool, args, result.text, times + 1)
        return (tool, self._last, result.text, 1) if self.again.random() < self.rates.again else None

    def _pick(self) -> ToolSpec:
        writes = self.writes and (not self.reads or self.rng.random() < self.rates.write)
        return self.rng.choice(self.writes if writes else self.reads)

    # --- arguments --------------------------------------------------------------------------------------
    def arguments(self, tool: ToolSpec, *, careful: bool = False) -> dict[str, Any]:
        """Required parameters, and each optional one with `rates.optional`; `careful` (a retry) uses seen
        values for every reference it can."""
        root = tool.input_schema or {}
        required = set(root.get("required") or [])
        args: dict[str, Any] = {}
        for name, raw in (root.get("properties") or {}).items():
            if name not in required and self.rng.random() >= self.rates.optional:
                continue
            prop = resolve_ref(raw, root)
            hinted = [v for v in self._hints.get((tool.name, name), ()) if _fits(v, prop, root)]
            if hinted and self.rng.random() < self.rates.seen:
                args[name] = self.rng.choice(hinted)
            elif is_reference(tool, name):
                args[name] = self.reference(name, prop, root, careful=careful)
            else:
                args[name] = self.generated(name, prop, root, careful=careful)
        return args

    def reference(self, name: str, prop: dict[str, Any], root: dict[str, Any], *, careful: bool) -> Any:
        seen = self.seen(name, prop, root)
        if seen is not None and (careful or self.rng.random() < self.rates.seen):
            return seen
        return self.wrong(name, prop, root)

    def seen(self, name: str, prop: dict[str, Any], root: dict[str, Any]) -> Any:
        """A value an earlier answer showed under a matching key that fits the schema (a list of one or two
        of them for a list parameter), else None."""
        is_list = _kind(prop, root) == "array"
        pool = [v for key in _keys(name, prop) for v in self.bank.candidates(key)]
        fitting = [v for v in dict.fromkeys(pool) if _fits([v] if is_list else v, prop, root)]
        if not fitting:
            return None
        if is_list:
            return self.rng.sample(fitting, min(len(fitting), self.rng.randint(1, 2)))
        return self.rng.choice(fitting)

    def wrong(self, name: str, prop: dict[str, Any], root: dict[str, Any]) -> Any:
        """A plausible but wrong value: a seen value with other digits (same shape), a made-up id, a word."""
        if _kind(prop, root) == "array":
            return [self.wrong(name.removesuffix("s"), {"type": "string"}, root)]
        if _kind(prop, root) != "string":
            return self.generated(name, prop, root)
        shapes = [v for key in _keys(name, prop) for v in self.bank.candidates(key) if isinstance(v, str)]
        roll = self.rng.random()
        if shapes and roll < 0.6:
            made = self._reshaped(self.rng.choice(shapes))
        elif roll < 0.8 and name.endswith("_id"):
            made = f"{name.removesuffix('_id')}_{self.rng.randint(1, 9999):04d}"
        else:
            made = str(RealisticValues(self._sub_rng()).string({"type": "string"}, "word", 0))
        return made if _fits(made, prop, root) else self.generated(name, prop, root)

    def _reshaped(self, value: str) -> str:
        """`value` with its digits redrawn (`ord_0003` -> `ord_0718`); a digitless one gets a suffix."""
        if not _DIGITS.search(value):
            return f"{value}-{self.rng.randint(2, 99)}"
        return _DIGITS.sub(lambda m: "".join(str(self.rng.randint(0, 9)) for _ in m.group()), value)

    def generated(self, name: str, prop: dict[str, Any], root: dict[str, Any], *, careful: bool = False) -> Any:
        """The value generator: realistic values (an rng of their own per call, so values vary), sometimes
        (and when the realistic one misses the schema's pattern, or on a retry, when the agent reads the
        description's formats) the probe value."""
        probe = careful or self.rng.random() < self.rates.probe
        made = None if probe else RealisticValues(self._sub_rng()).value(prop, name)
        return ProbeValues(root, self.now).value(prop, name) if probe or not _fits(made, prop, root) else made

    def _sub_rng(self) -> random.Random:
        return random.Random(self.rng.getrandbits(64))


_LISTED = re.compile(r":\s*((?:[^,:;.'\n]{1,40},\s*){2,}[^,:;.'\n]{1,40})")


def listed_values(text: str, arguments: dict[str, Any]) -> dict[str, list[str]]:
    """The values an error lists (`Cities with hotels: Auckland, Bangkok, Barcelona`) for the string
    argument whose value it quoted, by argument name."""
    quoted = [n for n, v in arguments.items() if isinstance(v, str) and v and f"'{v}'" in text]
    found = _LISTED.search(text)
    if not quoted or found is None:
        return {}
    values = [v.strip() for v in found.group(1).split(",") if v.strip()]
    return {quoted[0]: values}


def is_reference(tool: ToolSpec, name: str) -> bool:
    """A parameter that names an existing thing: ids, tokens, paths, codes; a name unless the tool makes
    something new (`create_folder(name)`)."""
    if not REFERENCE.search(name):
        return False
    return not (name in ("name", "names") and _CREATES.match(tool.name))


def _keys(name: str, prop: dict[str, Any]) -> list[str]:
    """Answer keys whose values may fill the parameter (`bank_keys`, then its aliases)."""
    return [*bank_keys(name, prop), *ALIASES.get(name, ())]


def _kind(prop: dict[str, Any], root: dict[str, Any]) -> str:
    """The JSON type a parameter takes (its first non-null option for a composite)."""
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind:
        return str(kind)
    for key in ("anyOf", "oneOf"):
        options = [resolve_ref(o, root) for o in prop.get(key) or []]
        real = [o for o in options if o.get("type") != "null"]
        if real:
            return _kind(real[0], root)
    return "string"


def _fits(value: Any, prop: dict[str, Any], root: dict[str, Any]) -> bool:
    schema = {**prop, "$defs": root["$defs"]} if "$defs" in root else prop
    return validation_error(schema, value) is None
