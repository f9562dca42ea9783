"""What a tool does, inferred from annotations, its name and its card: operation kind and entity."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import CategoryCard, EntityType

_VERBS: dict[str, tuple[str, ...]] = {
    "search": ("search", "find", "query", "lookup", "look", "grep", "match"),
    "list": ("list", "browse", "all", "recent", "history", "log", "tree", "read_graph"),
    "get": ("get", "read", "show", "view", "describe", "fetch", "open", "retrieve", "check", "status", "info",
            "detail", "details", "diff", "count", "quote", "preview", "download", "inspect", "now", "current"),
    "create": ("create", "add", "new", "post", "send", "write", "insert", "book", "schedule", "compose", "draft",
               "upload", "make", "register", "save", "store", "place", "commit", "push", "fork", "log_activity",
               "reply", "forward", "invite", "append", "comment", "duplicate", "copy"),
    "update": ("update", "edit", "set", "modify", "rename", "change", "move", "patch", "mark", "assign", "reschedule",
               "replace", "reset", "restore", "star", "resolve", "select", "apply", "merge", "respond", "join",
               "leave", "share", "unshare", "lock", "unlock", "close", "reopen", "complete", "dismiss", "confirm",
               "approve", "verify", "accept", "decline", "reject", "enable", "disable", "pause", "resume"),
    "delete": ("delete", "remove", "cancel", "archive", "trash", "drop", "clear", "revoke", "unsubscribe", "purge"),
}
_KIND_OF_VERB: dict[str, str] = {verb: kind for kind, verbs in _VERBS.items() for verb in verbs}

#: Words services use for the same kind of record (a task board's `task` is its `card`): a name naming one names all.
SYNONYMS: tuple[frozenset[str], ...] = (
    frozenset({"issue", "card", "ticket", "task", "item", "story", "bug"}),
    frozenset({"file", "document", "doc", "spreadsheet", "sheet", "page", "note"}),
    frozenset({"message", "msg", "email", "mail", "thread", "conversation", "chat", "channel"}),
    frozenset({"repo", "repository", "project"}),
    frozenset({"user", "member", "person", "contact", "customer", "account", "owner"}),
    frozenset({"event", "meeting", "calendar", "appointment"}),
    frozenset({"order", "product", "listing", "invoice"}),
    frozenset({"paper", "article", "post", "publication"}),
)


def same_entity(a: str, b: str) -> bool:
    """Whether two kind words name the same kind: equal up to a plural `s`, or synonyms (`SYNONYMS`)."""
    a, b = a.rstrip("s"), b.rstrip("s")
    return a == b or any(a in group and b in group for group in SYNONYMS)


def name_tokens(name: str) -> list[str]:
    """`listMessages` / `list_messages` / `list-messages` -> ['list', 'messages']."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [t for t in re.split(r"[^a-zA-Z0-9]+", spaced.lower()) if t]


def operation_kind(tool: ToolSpec) -> str:
    """One of list/get/search/create/update/delete/action. The first verb in the name decides (so
    `git_status` and `brave_web_search` work); annotations override what cannot be."""
    tokens = name_tokens(tool.name)
    kind = verb_kind(tool.name)
    if kind == "create" and _appends_to_named(tokens, tool):
        kind = "update"
    if kind is not None:
        return _agree_with_annotations(kind, tool)
    if tool.annotations.read_only_hint:
        return "list" if tokens and tokens[-1].endswith("s") and not tokens[-1].endswith("ss") else "get"
    if tool.annotations.destructive_hint and _answers_a_new_id(tool):
        return "create"  # a destructive hint alone says a write may overwrite (`navigate`, `rotate_secret`): no delete
    return "action"


#: Name words of a tool about the signed-in user (`get_me`, `whoami`, `getCurrentUser`, `get_my_profile`).
SELF_WORDS = frozenset({"me", "whoami", "current", "self", "my", "myself", "profile", "authorized", "authenticated"})
_WHO = frozenset({"me", "whoami", "self", "myself", "profile"})
_PERSON = frozenset({"user", "profile", "staff", "member", "identity", "account"})
_FILLER = frozenset({"info", "details", "detail", "data"})


def reads_signed_in_user(tool: ToolSpec, token_args: Iterable[str] = ()) -> bool:
    """A read of the signed-in user and nothing else: `get_me`, `whoami`, `get_current_user`, `get_my_profile`,
    `get_authorized_user`, or `get_user` with no arguments at all; never a read of one's other things
    (`get_my_status`, `read_my_design`). It takes nothing a person must say (a session token at most)."""
    props = tool.input_schema.get("properties") or {}
    tokens = name_tokens(tool.name)
    said = verb_kind(tool.name)  # `whoami` says no verb: it reads
    reads = said == "get" or (said is None and (operation_kind(tool) == "get" or tokens[-1:] == ["whoami"]))
    if not reads or set(tool.input_schema.get("required") or []) - set(token_args):
        return False
    while len(tokens) > 1 and tokens[-1] in _FILLER:  # `get_current_user_info`
        tokens = tokens[:-1]
    last = singular_word(tokens[-1]) if tokens else ""
    if last in _WHO and (last != "profile" or len(tokens) < 2 or tokens[-2] in SELF_WORDS or
                         _KIND_OF_VERB.get(tokens[-2]) == "get"):  # `get_profile`, never `get_business_profile`
        return True
    if last in _PERSON and SELF_WORDS & set(tokens[:-1]):
        return True
    return last == "user" and not props and _KIND_OF_VERB.get(tokens[0]) == "get"


def verb_kind(name: str) -> str | None:
    """The operation kind a tool's name says by its first verb (`get_quote` -> get); None when none does."""
    tokens = name_tokens(name)
    return _KIND_OF_VERB.get("_".join(tokens)) or next((_KIND_OF_VERB[t] for t in tokens if t in _KIND_OF_VERB), None)


def _answers_a_new_id(tool: ToolSpec) -> bool:
    """A verbless write whose answer leads with an id it was not given makes that record (`checkout`
    answers an `order_id`): its destructive hint is about what it uses up (the cart), not a delete."""
    props = (tool.output_schema or {}).get("properties") or {}
    first = next((p for p in props if re.fullmatch(r"[a-z][a-z0-9_]*_id", p)), None)
    return first is not None and first not in (tool.input_schema.get("properties") or {})


def _appends_to_named(tokens: list[str], tool: ToolSpec) -> bool:
    """`append_to_document(document_id, text)` changes the document it names; `append_insight(insight)`
    still makes a record."""
    if "append" not in tokens:
        return False
    named = {p.removesuffix("_id") for p in tool.input_schema.get("properties", {}) if p.endswith("_id")}
    return any(singular_word(t) in named for t in tokens)


def _agree_with_annotations(kind: str, tool: ToolSpec) -> str:
    """A read-only tool never writes: a 'create'-looking name on a read-only tool is a read."""
    if tool.annotations.read_only_hint and kind in ("create", "update", "delete"):
        return "get"
    return kind


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
ID_ARG = re.compile(r"^(.+?)_(?:id|gid|iid|uid|uuid|identifier)(s?)$")
"""An id argument in snake case: `order_id`, `tag_gid` (Asana), `issue_iid` (GitLab), `user_uuid`,
`gateway_identifier` (AWS); `_ids` for several."""
KEY_ARG = re.compile(r"^(.+?)_(?:key|slug)(s?)$")
"""A key argument: `issue_key` (Jira), `space_key` (Confluence), `repo_slug` (Bitbucket). It names a record only
where its stem is a kind the server holds (`api_key`, `sort_key` name none)."""


@lru_cache(maxsize=16384)
def snake(name: str) -> str:
    """An argument name as snake case, whatever its style: `cardId`, `vault-id`, `page.size` -> `card_id`,
    `vault_id`, `page_size`. Rules match on it; the argument is still read under its own name."""
    return re.sub(r"[-.\s]+", "_", _CAMEL.sub("_", name)).lower()


def id_stem(arg: str) -> tuple[str, bool] | None:
    """(the kind an id argument names, in the singular, whether it holds several ids): `orderIds` -> ('order',
    True); None for an argument that is no id."""
    match = ID_ARG.match(snake(arg))
    # `symbol_or_id` names a symbol by itself or by its id
    return (singular_word(match.group(1).removesuffix("_or")), bool(match.group(2))) if match else None


def key_stem(arg: str) -> tuple[str, bool] | None:
    """(the kind a key argument may name, in the singular, whether it holds several): `issueKey` -> ('issue',
    False); None for an argument that is no key."""
    match = KEY_ARG.match(snake(arg))
    return (singular_word(match.group(1)), bool(match.group(2))) if match else None


def names_kind(stem: str, entity: EntityType) -> bool:
    """Whether an id argument's stem names the kind: the kind itself, or ending in it (`from_account` -> account)."""
    return stem == entity.name or stem.endswith(f"_{entity.name}")


def entity_named(card: CategoryCard, stem: str) -> EntityType | None:
    """The card kind an id argument's stem names (`names_kind`), else None."""
    return next((e for e in card.entities if names_kind(stem, e)), None)


def kind_named(card: CategoryCard, stem: str) -> str | None:
    """The name of the card kind the stem names, else None."""
    entity = entity_named(card, stem)
    return entity.name if entity is not None else None


def singular(word: str) -> str:
    if word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


#: Plurals `singular` cannot undo; only the engine's entity inference uses them.
_IRREGULAR = {"people": "person", "children": "child", "men": "man", "women": "woman", "indices": "index",
              # acronyms ending in s are no plurals (a CAD drawing's UCS, a domain's DNS)
              "ucs": "ucs", "dns": "dns", "gps": "gps", "sms": "sms", "aws": "aws", "ios": "ios"}


def singular_word(word: str) -> str:
    return _IRREGULAR.get(word, singular(word))


def names_many(tool: ToolSpec) -> bool:
    """A name whose last word is a plural (`get_sections`, `getMarketingEvents`): a get of it is a list by
    another verb."""
    tokens = name_tokens(tool.name)
    return bool(tokens) and len(tokens[-1]) > 3 and tokens[-1] != singular_word(tokens[-1])


def _last_mention(entity: EntityType, words: list[str]) -> int:
    """Where in `words` the entity's name (possibly several words, e.g. pull_request) last ends; -1 if absent."""
    parts = entity.name.split("_")
    best = -1
    for i in range(len(words) - len(parts) + 1):
        if words[i : i + len(parts)] == parts:
            best = i + len(parts) - 1
    if best < 0 and entity.id_prefix.lower() in words:
        best = words.index(entity.id_prefix.lower())
    return best


def _head_mention(entity: EntityType, words: list[str]) -> int:
    """Where the first word of a compound entity name stands alone (`view_cart` -> cart_item); -1 if absent."""
    parts = entity.name.split("_")
    if len(parts) < 2 or parts[0] not in words:
        return -1
    return max(i for i, w in enumerate(words) if w == parts[0])


def _keyed_by_its_tail(tool: ToolSpec, card: CategoryCard, words: list[str]) -> EntityType | None:
    """The compound kind a key argument names whose last word ends the tool's name
    (`create_inventory_location(merchantLocationKey)` -> merchant_location): the head noun, named in full by the
    argument; before a compound whose first word the name mentions (`inventory_item_group`)."""
    if not words:
        return None
    for arg in tool.input_schema.get("properties", {}):
        stem = key_stem(arg)
        kind = entity_named(card, stem[0]) if stem is not None else None
        if kind is not None and "_" in kind.name and kind.name.rsplit("_", 1)[-1] == words[-1]:
            return kind
    return None


def _produced_entity(tool: ToolSpec, card: CategoryCard) -> EntityType | None:
    """What a create makes: the kind its answer's first `<kind>_id` names, passing over ids it was given of kinds
    its name does not mention (`bookAppointment` answers the `client_id` it was given beside its own;
    `reply_to_message` answers the new message's `message_id`)."""
    props = (tool.output_schema or {}).get("properties") or {}
    given = {"_".join(name_tokens(p)) for p in tool.input_schema.get("properties") or {}}
    named = {singular_word(t) for t in name_tokens(tool.name)}
    first = next((p for p in props if re.fullmatch(r"[a-z][a-z0-9_]*_id", p)
                  and (p not in given or singular_word(p[:-3]) in named)), None)
    return card.entity(first[:-3]) if first else None


def _object_tokens(tokens: list[str]) -> list[str]:
    """The name's words without its verb (the first word that names an operation): `list_projects` is about
    projects, not about a task board's lists; `get_list` still names a list."""
    verb = next((i for i, t in enumerate(tokens) if t in _KIND_OF_VERB), None)
    rest = [t for i, t in enumerate(tokens) if i != verb]
    return rest or tokens


#: Words that end a name's object: `get_cards_by_list_id` is about cards, `add_card_to_list` makes a card.
LINK_WORDS = frozenset({"by", "for", "from", "in", "of", "with", "on", "to", "and", "or", "at", "via"})


#: Words a following `on`/`in` belongs to (`power_on_droplet`, `check_in_guest`): no link there.
_PHRASAL = frozenset({"power", "turn", "log", "sign", "check", "switch", "opt", "plug", "clock"})


def _before_link(words: list[str], card: CategoryCard) -> list[str]:
    """The name's words up to its first link word, where a kind of the card is named before it; else all."""
    cut = next((i for i, w in enumerate(words) if w in LINK_WORDS and not (i and words[i - 1] in _PHRASAL)), None)
    if cut is None or not any(_last_mention(e, words[:cut]) >= 0 for e in card.entities):
        return words
    return words[:cut]


def names_its_kind(tool: ToolSpec, card: CategoryCard) -> bool:
    """Whether the tool says what it touches: `entity_for` finds its kind by more than the card's default (a
    name, an id argument or the answer's id names it), its name's object words are none but a verb (`send`),
    or they name the default by a synonym (`send_email` makes a message). Else the default is a guess:
    `create_change_request` on a devops card names no pod."""
    if named_entity(tool, card) is not None:
        return True
    words = [singular_word(t) for t in _object_tokens(name_tokens(tool.name))]
    default = _default_entity(card).name
    return all(verb_kind(w) is not None for w in words) or any(same_entity(w, default) for w in words)


#: Key fields that name no one kind: a `name`, `path` or `symbol` argument is as often a new value or a
#: filter as a reference, and many kinds share them.
_COMMON_KEYS = frozenset({"id", "name", "title", "path", "url", "key", "type", "code", "number", "ref", "package",
                          "full_name", "a1", "type_code", "uid", "symbol", "branch", "username", "asset"})


def keyed_by(arg: str, card: CategoryCard) -> tuple[EntityType, bool] | None:
    """For an argument named by the key field only one kind of the card has (`handle` of a CAD entity, and
    `target_handle`, `handle1`, `handles`): that kind, and whether it holds several."""
    plain = snake(arg)
    shared = Counter(e.key_field for e in card.entities)
    for entity in card.entities:
        field = entity.key_field
        if field in _COMMON_KEYS or shared[field] > 1:
            continue
        found = re.fullmatch(rf"(?:[a-z0-9]+_)?{re.escape(field)}(s|_?\d)?", plain)
        if found:
            return entity, found.group(1) == "s"
    return None


def _param_stems(tool: ToolSpec) -> list[str]:
    """The tool's argument names as kind words, any naming style (`invoiceId` -> invoice, `order_ids` -> order)."""
    return [singular_word(re.sub(r"_?ids?$", "", snake(p))) for p in tool.input_schema.get("properties", {})]


def entity_for(tool: ToolSpec, card: CategoryCard) -> EntityType:
    """The card entity the tool touches. A create makes what its answer's first id names (`book_flight`
    answers a `booking_id`: it makes a booking, of the flight it is given). Otherwise the last entity its
    name mentions (the head noun: `add_issue_comment` -> comment; `find_people` -> person), else a compound entity whose first word it
    mentions (`view_cart` -> cart_item), else the one an id parameter names, else the card's first."""
    return named_entity(tool, card) or _default_entity(card)


def named_entity(tool: ToolSpec, card: CategoryCard) -> EntityType | None:
    """`entity_for`'s finds short of the card's default: None where nothing about the tool names a kind."""
    made = _produced_entity(tool, card) if operation_kind(tool) == "create" else None
    if made is not None:
        return made
    words = _before_link([singular_word(t) for t in _object_tokens(name_tokens(tool.name))], card)
    ranked = sorted(((_last_mention(e, words), len(e.name), e) for e in card.entities), key=lambda x: x[:2])
    if ranked and ranked[-1][0] >= 0:
        return ranked[-1][2]
    tail = _keyed_by_its_tail(tool, card, words)
    if tail is not None:
        return tail
    heads = sorted(((_head_mention(e, words), len(e.name), e) for e in card.entities), key=lambda x: x[:2])
    if heads and heads[-1][0] >= 0:
        return heads[-1][2]
    for param in _param_stems(tool):
        for entity in card.entities:
            if names_kind(param, entity) or param.startswith(f"{entity.name}_"):
                return entity
    # the kind whose own key field an argument is named by (`hatch_edit(handle)` edits a CAD entity)
    return next((keyed[0] for p in tool.input_schema.get("properties", {}) if (keyed := keyed_by(p, card))), None)


def _default_entity(card: CategoryCard) -> EntityType:
    """The kind a tool that names none is filed under: the card's first."""
    if card.entities:
        return card.entities[0]
    return EntityType(name="item", id_prefix="item", fields={"name": "string", "description": "text"})
