"""Operation rules: what a tool does to the world, declared in content and validated on load.

A rule has ordered `check` steps (each one of: `auth`, `find`, `fail`, `let`), then `do` effects (each
one of: `set`, `add`, `append`, `create`, `delete`, `each`, `let`, guarded by `if`), an optional `list`
read and an `answer`. Per-tool rules live in `category_cards/_operations/<server>.yaml`; a card's
family rules (`checkout`, `transfer`, ...) in its `rules:` section, matched to tools by name. Rules the
engine infers for a tool with neither (every harvested tool) are the same objects, so they can be
written out as YAML for a person to review (`cworld world rules SERVER`). docs/world-engine.md,
"Operation rules", is the reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cworld.engine.rules.safe import compiled
from cworld.errors import ContentError

#: An app error kind (the sandbox's `AppError` kinds) or a ToolResult error class; kinds map onto classes
#: as the sandbox maps them (`conflict` -> business), and the kind is kept in the answer's meta.
ErrorClass = Literal["invalid", "invalid_args", "not_found", "auth", "conflict", "precondition", "limit",
                     "permission_denied", "insufficient_funds", "business", "rate_limit", "unavailable"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Check(_Strict):
    """One precondition step. `auth`: the argument holding a session token, valid while the token at
    `store` (a `{value, expires_at}` record in the server's state) equals it and has not expired.
    `find`: bind a record (`in` a collection or kind, by the `key` expression); missing -> `error`.
    `fail`: when the condition holds, the call fails with `error` and `message`. `let`: bind values."""

    auth: str | None = None
    store: str = "auth.token"
    find: str | None = None
    in_: str | None = Field(None, alias="in")
    key: str | None = None
    optional: bool = Field(False, description="find: skip when the key is None (an optional argument)")
    fail: str | None = None
    let: dict[str, Any] | None = None
    if_: str | None = Field(None, alias="if")
    error: ErrorClass | None = None
    message: str | None = None
    expired_message: str | None = Field(None, description="auth: the message for a token past its expiry")

    @model_validator(mode="after")
    def _one_kind(self) -> Check:
        kinds = [k for k in ("auth", "find", "fail", "let") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(f"a check step has exactly one of auth, find, fail, let; got {kinds or 'none'}")
        if self.find is not None and not self.in_:
            raise ValueError(f"find '{self.find}' needs 'in' (a collection or entity kind)")
        return self


class Effect(_Strict):
    """One change. `set`/`add`/`append`: the target expression is a record; `to` maps fields to values
    (add: numbers added; append: items appended to a list field), or `key` (an expression) names the one
    field and `value` gives it (`set: last_read, key: args.conversation_id, value: now`). `create`: a collection (name, kind or
    expression giving a map); the key is `key` or the next id with prefix `id`; `record` its fields;
    `as` binds the record (and `<as>_key`). `delete`: remove `key` from the collection. `each`: run `do`
    for every item of an iterable bound to `as`. `let`: bind values. `advance`: move the world's clock on by
    that many seconds (a `sleep`; every server sees the new time). `if`: a guard."""

    set: str | None = None
    add: str | None = None
    append: str | None = None
    to: dict[str, Any] | None = None
    value: Any = None
    create: str | None = None
    id: str | None = None
    key: str | None = None
    record: dict[str, Any] | str | None = None
    as_: str | None = Field(None, alias="as")
    delete: str | None = None
    each: str | None = None
    do: list[Effect] | None = None
    let: dict[str, Any] | None = None
    advance: str | None = None
    if_: str | None = Field(None, alias="if")

    @model_validator(mode="after")
    def _one_kind(self) -> Effect:
        kinds = [k for k in ("set", "add", "append", "create", "delete", "each", "let", "advance")
                 if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError("an effect has exactly one of set, add, append, create, delete, each, let, advance; "
                             f"got {kinds or 'none'}")
        if kinds[0] in ("set", "add", "append") and not self.to and self.key is None:
            raise ValueError(f"{kinds[0]} needs 'to' (field -> value), or 'key' and 'value' (a computed field)")
        if self.create is not None and not (self.id or self.key):
            raise ValueError("create needs 'id' (a prefix) or 'key' (an expression)")
        if self.delete is not None and not self.key:
            raise ValueError("delete needs 'key'")
        if self.each is not None and not (self.do and self.as_):
            raise ValueError("each needs 'as' and 'do'")
        return self


class ListRead(_Strict):
    """A page of records: `from` a collection (name, kind or expression), those `where` holds (with `it`
    the record and `key` its key), sorted by `sort` (an expression of `it` and `key`), paged by the
    `page`/`size` arguments (default size `page_size`), each shown as `item` (default: the record with
    its key), into the answer field `into` with page, page_size, total and has_more."""

    from_: str = Field(alias="from")
    where: str | None = None
    sort: str | None = None
    desc: bool = False
    page: str | None = "page"
    page_base: int = Field(1, ge=0, le=1, description="the first page's number: 1, or 0 for a 0-based page argument")
    offset: str | None = Field(None, description="an argument holding a 0-based item offset (offset, start, skip)")
    cursor: str | None = Field(None, description="an argument holding the cursor an earlier page answered "
                               "(`next_cursor`); the first page without one")
    size: str | None = "page_size"
    page_size: int = 10
    max_page_size: int | None = None
    item: str | None = None
    into: str = "items"
    meta: bool = Field(True, description="add page, page_size, total and has_more to the answer")


class Rule(_Strict):
    """What one tool does."""

    op: str = Field("action", description="operation kind, for people and reports")
    match: list[str] = Field(default_factory=list, description="family rules: tool name words that select it")
    about: Literal["record", "parent"] | None = Field(
        None, description="family rules: 'record' when the tool names one record of its kind by an id argument: "
        "the engine runs the checks inference gives every tool (auth, references), then finds it (`target`, "
        "`target_key`, not_found when missing), then the rule's own steps; 'parent': the record another kind's id "
        "argument names (the card a comment is added to)")
    extends: Literal["inferred"] | None = Field(
        None, description="family rules: 'inferred' adds this rule's checks (and effects) to the rule inference "
        "gives the tool, after its finds: a category's guard (no booking in the past) over any create or update; "
        "its `answer` replaces the inferred read, its `list` (`from: RECORDS`) narrows it (`where`) and shows each "
        "record as its `item` says")
    takes: list[str] = Field(default_factory=list, description="family rules: arguments the tool must take, "
                             "each 'a|b|c' in snake case (any naming style matches); the value is bound as `arg_a`")
    needs: list[str] = Field(default_factory=list, description="family rules: kinds or state entries the server's "
                             "world must hold (a comment family needs `comment`, a logout `auth`)")
    has: list[str] = Field(default_factory=list, description="family rules on a record: fields its kind must have, "
                           "each 'a|b'; the field's name is bound as `field_a`, its enum members as `field_a_values`")
    read_only: bool | None = None
    check: list[Check] = Field(default_factory=list)
    do: list[Effect] = Field(default_factory=list)
    list_: ListRead | None = Field(None, alias="list")
    answer: Any = None
    origin: str = Field("", description="where the rule came from (file, card, inferred); set on load")

    @property
    def writes(self) -> bool:
        return bool(self.do) if self.read_only is None else not self.read_only

    @property
    def refuses(self) -> bool:
        """Whether the rule can refuse a call (a token, a record that must exist, a condition): what "checks
        something" counts; a rule whose steps only bind values checks nothing."""
        return any(c.auth is not None or c.find is not None or c.fail is not None for c in self.check)


class Def(_Strict):
    """A named function rules may call: `params` bound to the call's values, `expr` its result."""

    params: list[str] = Field(default_factory=list)
    expr: str


class ServerRules(_Strict):
    """`category_cards/_operations/<server>.yaml`: a server's per-tool rules, named constants and functions."""

    server: str
    consts: dict[str, Any] = Field(default_factory=dict)
    defs: dict[str, Def] = Field(default_factory=dict)
    tools: dict[str, Rule] = Field(default_factory=dict)


def parse_rule(data: Any, where: str) -> Rule:
    """A rule, validated: its structure, and every expression in it parses (a content error names the
    file, the rule and the expression, before any episode runs)."""
    try:
        rule = Rule.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ContentError(f"{where}: field '{loc}': {first['msg']}") from None
    for text in expressions(rule):
        try:
            compiled(text)
        except ContentError as exc:
            raise ContentError(f"{where}: {exc}") from None
    rule.origin = where
    return rule


#: Fields that hold text, not expressions.
_NOT_EXPRESSIONS = frozenset({"message", "origin", "op", "match", "about", "extends", "takes", "needs", "has", "error", "expired_message", "store", "auth", "find", "id", "as",
                              "into", "page", "size", "in", "offset", "cursor"})


def expressions(rule: Rule) -> list[str]:
    """Every expression string of a rule (for validation and for what a rule may touch)."""
    return _strings(rule.model_dump(by_alias=True, exclude_none=True))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() if k not in _NOT_EXPRESSIONS for t in _strings(v)]
    if isinstance(value, list):
        return [t for v in value for t in _strings(v)]
    return []


def load_server_rules(path: Path) -> ServerRules:
    """A per-server rule file; a bad file is one line naming it and the field."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ContentError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict):
        raise ContentError(f"{path}: an operations file is a mapping with server, consts and tools")
    tools = {name: parse_rule(rule, f"{path}: tools.{name}") for name, rule in (raw.get("tools") or {}).items()}
    for name, fn in (raw.get("defs") or {}).items():
        text = fn.get("expr", "") if isinstance(fn, dict) else ""
        try:
            compiled(str(text))
        except ContentError as exc:
            raise ContentError(f"{path}: defs.{name}: {exc}") from None
    try:
        return ServerRules(server=str(raw.get("server") or path.stem), consts=raw.get("consts") or {},
                           defs=raw.get("defs") or {}, tools=tools)
    except ValidationError as exc:
        raise ContentError(f"{path}: {exc.errors()[0]['msg']}") from None


LEARNED_SUFFIX = ".learned.yaml"


def load_operations(folder: Path, *learned: Path) -> dict[str, ServerRules]:
    """Every `<server>.yaml` under an environment's `category_cards/_operations/` (none is fine), and the
    rules `cworld world learn` wrote (`<server>.learned.yaml` there and in the `learned` folders): a learned
    rule serves a tool no hand-written rule of its server covers (docs/world-engine.md, "Learning rules")."""
    if not folder.is_dir():
        return _with_learned({}, learned)
    found = (load_server_rules(p) for p in sorted(folder.glob("*.yaml"))
             if not p.name.startswith("_") and not p.name.endswith(LEARNED_SUFFIX))
    return _with_learned({r.server: r for r in found}, (folder, *learned))


def _with_learned(written: dict[str, ServerRules], folders: tuple[Path, ...]) -> dict[str, ServerRules]:
    for folder in folders:
        for path in sorted(folder.glob(f"*{LEARNED_SUFFIX}")) if folder.is_dir() else []:
            rules = load_server_rules(path)
            own = written.get(rules.server)
            if own is None:
                written[rules.server] = rules
                continue
            own.tools = {**rules.tools, **own.tools}
            own.consts = {**rules.consts, **own.consts}
            own.defs = {**rules.defs, **own.defs}
    return written


def rule_yaml(rules: dict[str, Rule]) -> str:
    """Rules as the YAML a person reviews (aliases as written in files)."""
    data = {name: r.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True, exclude={"origin"})
            for name, r in rules.items()}
    return yaml.safe_dump({"tools": data}, sort_keys=False, allow_unicode=True, width=110)
