"""The text the index sees for each tool: one document per tool, built from its spec.

Retrieval quality depends more on these documents than on the ranking method. A user never says
`list_directory_with_sizes`, so names are split into words ("list directory with sizes"); the server's
own description and category say what world the tool lives in ("a git repository", "the shop"); and the
parameters (names split the same way, with their descriptions) carry the nouns a request mentions. The
fields are kept apart too, so the lexical index can weight a word in the name above one deep in a schema.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from cworld.data_model.tools import ToolSpec

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2,})")
_SEPARATORS = re.compile(r"[_\-./:\s]+")
#: Parameter descriptions are cut to this many characters: long ones drown the tool's own description.
MAX_PARAM_DESCRIPTION = 120
#: How many parameters a document lists (schemas with dozens of options add noise, not meaning).
MAX_PARAMS = 12


def split_identifier(name: str) -> list[str]:
    """`list_directoryWithSizes` -> ["list", "directory", "with", "sizes"]: the words a person would say."""
    words: list[str] = []
    for chunk in _SEPARATORS.split(name):
        words.extend(w.lower() for w in _CAMEL.split(chunk) if w)
    return words


def humanize(name: str) -> str:
    return " ".join(split_identifier(name))


@dataclass(frozen=True)
class ToolDocument:
    """What the index stores per tool: the id, the dense text, the lexical fields and a content hash."""

    tool_id: str
    text: str
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        """Changes exactly when the text or any field changes: the key for incremental rebuilds."""
        payload = json.dumps({"text": self.text, "fields": self.fields}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]

    def to_json(self) -> dict[str, Any]:
        return {"tool_id": self.tool_id, "text": self.text, "fields": self.fields, "hash": self.content_hash}


def _first_sentences(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    stop = cut.rfind(". ")
    return cut[: stop + 1] if stop > limit // 3 else cut.rstrip() + "..."


def parameter_entries(schema: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(humanized name, short description) of each top-level input parameter, required ones first."""
    if not schema:
        return []
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    ordered = sorted(props, key=lambda n: (n not in required, list(props).index(n)))
    entries = []
    for name in ordered[:MAX_PARAMS]:
        spec = props.get(name)
        desc = (spec.get("description") or "") if isinstance(spec, dict) else ""
        entries.append((humanize(name), _first_sentences(str(desc), MAX_PARAM_DESCRIPTION)))
    return entries


def schema_signature(schema: dict[str, Any] | None) -> str:
    """`message id (the message to open); page` — parameter names and what they mean, in one line."""
    parts = [f"{name} ({desc})" if desc else name for name, desc in parameter_entries(schema)]
    return "; ".join(parts)


def tool_document(tool: ToolSpec, server_description: str = "", examples: list[str] | None = None) -> ToolDocument:
    """The document for one tool. `server_description` (from the manifest or the app) adds context;
    `examples` (example_requests.py) become the lexical `examples` field. The dense text never holds them: it
    stays as it was, so the embedding cache keeps serving a registry embedded once (~40 min of CPU)."""
    name_words = humanize(tool.name)
    server_words = humanize(tool.server)
    category = humanize(tool.category) if tool.category else ""
    where = ", ".join(p for p in (server_words, category) if p)
    description = " ".join(tool.description.split())
    params = schema_signature(tool.input_schema)
    server_text = _first_sentences(server_description, 160)
    lines = [f"{name_words} ({where}): {_first_sentences(description, 600)}"]
    if params:
        lines.append(f"Parameters: {params}.")
    if server_text:
        lines.append(f"Server {server_words}: {server_text}")
    fields = {
        "name": name_words,
        "server": " ".join(p for p in (server_words, category, server_text) if p),
        "description": description,
        "params": params,
    }
    if examples:
        fields["examples"] = " ".join(examples)
    return ToolDocument(tool_id=tool.id, text="\n".join(lines), fields=fields)


def tool_documents(tools: list[ToolSpec], server_descriptions: dict[str, str] | None = None,
                   examples: list[list[str]] | None = None) -> list[ToolDocument]:
    """One document per tool; `examples[i]` are tool i's generated requests (none: no `examples` field)."""
    descriptions = server_descriptions or {}
    return [tool_document(t, descriptions.get(t.server, ""), examples[i] if examples else None)
            for i, t in enumerate(tools)]
