"""One place that makes a request acceptable to its provider: `prepare(cfg, request)` before every call.

The gateway runs it on every request (the agent's, the engine's, the synthesizer's, the judges'), and the
cache key is computed on what it returns, so a cached answer is the answer to what was really sent.

- tools: each function's parameters rewritten for the provider family (`schema_rules.py`), its name
  kept within the family's pattern (a renamed function is renamed back in the model's tool calls, and in
  earlier assistant turns of the conversation, so callers never see the provider's name), its description
  within the family's limit (OpenAI: 1024 characters);
- `tool_choice` only with tools, naming the sent name; for a local model server cworld started, `"auto"`
  when the caller gave none (OpenAI's default with tools; llama-cpp-python's `chatml-function-calling`
  renders the prompt without any tool unless `tool_choice` is given, so the model never saw them); its
  template renders no `tool` message, so there a tool's result goes as a user message naming the call;
- `response_format` in the provider's documented form (`response_format_for`): OpenAI's `json_schema`
  where litellm says the model takes a response schema, else `json_object` where it takes JSON mode,
  else nothing; llama.cpp's `{"type": "json_object", "schema": ...}` only for a local model server
  cworld started (`local_server.py`). OpenAI refuses `json_object` unless the messages say "json", so
  a line saying it is added to the system message when none does.

Capabilities come from litellm's own model data (`supports_response_schema`, `get_supported_openai_params`),
read once per model; the mock provider takes every form.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

from cworld.config import ModelConfig
from cworld.data_model.tool_names import hashed_name
from cworld.llm import local_server
from cworld.llm._loader import MOCK_PROVIDER, load_litellm
from cworld.llm.completion import Completion
from cworld.llm.schema_rules import EMPTY_OBJECT, Family, sanitize_parameters

NAME_PATTERNS: dict[Family, re.Pattern[str]] = {
    "openai": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    "anthropic": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    "gemini": re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$"),
}
DESCRIPTION_LIMITS: dict[Family, int | None] = {"openai": 1024, "anthropic": None, "gemini": None}
_PREFIXES: dict[str, Family] = {"anthropic": "anthropic", "gemini": "gemini", "vertex_ai": "gemini",
                                "vertex_ai_beta": "gemini"}
JSON_NOTE = "Reply in JSON."


@dataclass
class Prepared:
    """The request to send (and to key the cache on), and the functions renamed on the way: sent -> asked."""

    request: dict[str, Any]
    renamed: dict[str, str] = field(default_factory=dict)

    def restore(self, completion: Completion) -> Completion:
        """The completion with the caller's function names in its tool calls."""
        if not self.renamed or not any(c.name in self.renamed for c in completion.tool_calls):
            return completion
        calls = [c.model_copy(update={"name": self.renamed.get(c.name, c.name)}) for c in completion.tool_calls]
        return completion.model_copy(update={"tool_calls": calls})


@dataclass(frozen=True)
class Capabilities:
    json_mode: bool
    response_schema: bool


def family_of(model: str) -> Family:
    """The provider family of a litellm model string (Claude on Bedrock is Anthropic's, too)."""
    provider, _, name = model.partition("/") if "/" in model else ("", "", model)
    if provider in _PREFIXES:
        return _PREFIXES[provider]
    if "claude" in name and provider in ("", "bedrock"):
        return "anthropic"
    if provider == "" and name.startswith("gemini"):
        return "gemini"
    return "openai"


def prepare(cfg: ModelConfig, request: dict[str, Any]) -> Prepared:
    """`request` (litellm arguments) as the provider of `cfg` accepts it; the input is not changed."""
    family = family_of(cfg.model)
    local = serves_llama_cpp(cfg)  # reads the server's record once per request
    out = dict(request)
    renamed: dict[str, str] = {}
    if out.get("tools"):
        out["tools"], renamed = _tools(out["tools"], family)
        if renamed:
            out["messages"] = _renamed_history(out["messages"], renamed)
            out["tool_choice"] = _renamed_choice(out.get("tool_choice"), renamed)
        if out.get("tool_choice") is None and local:
            out["tool_choice"] = "auto"
    else:
        out.pop("tools", None)
        out.pop("tool_choice", None)
    if out.get("messages") and local:
        out["messages"] = _as_chatml_function_calling_renders(out["messages"])
    if out.get("response_format") is not None:
        out["response_format"] = _response_format(cfg, out["response_format"])
    if out.get("response_format") is None:
        out.pop("response_format", None)
    elif out["response_format"].get("type") == "json_object" and family == "openai":
        out["messages"] = _saying_json(out["messages"])
    return Prepared({k: v for k, v in out.items() if v is not None}, renamed)


# --- tools ---------------------------------------------------------------------------------------
def sanitize_tool(tool: dict[str, Any], family: Family, name: str | None = None) -> dict[str, Any]:
    """One `{"type": "function", "function": {...}}` entry as `family` accepts it (under `name` if given)."""
    function = dict(tool.get("function") or {})
    function["name"] = name or function.get("name") or "tool"
    function["parameters"] = sanitize_parameters(function.get("parameters") or EMPTY_OBJECT, family)
    limit = DESCRIPTION_LIMITS[family]
    description = function.get("description")
    if isinstance(description, str) and limit is not None and len(description) > limit:
        function["description"] = description[: limit - 1] + "…"
    return {**tool, "type": "function", "function": function}


def valid_name(name: str, family: Family) -> bool:
    return bool(NAME_PATTERNS[family].match(name))


def _tools(tools: list[dict[str, Any]], family: Family) -> tuple[list[dict[str, Any]], dict[str, str]]:
    asked = [str((t.get("function") or {}).get("name") or "") for t in tools]
    taken = {n for n in asked if valid_name(n, family)}
    renamed: dict[str, str] = {}
    out = []
    for tool, name in zip(tools, asked, strict=True):
        if tool.get("type", "function") != "function":
            out.append(tool)  # a provider's own tool kind: not ours to rewrite
            continue
        sent = name if valid_name(name, family) else _new_name(name, family, taken)
        if sent != name:
            renamed[sent] = name
            taken.add(sent)
        out.append(json.loads(_sanitized(json.dumps(tool, sort_keys=True, default=str), family, sent)))
    return out, renamed


@lru_cache(maxsize=4096)
def _sanitized(tool_json: str, family: Family, name: str) -> str:
    """Callers resend the same tools every turn: each is rewritten once and kept as JSON, read back per call
    (a fresh copy: the caller may change it; reading JSON is 5x faster than `copy.deepcopy`)."""
    return json.dumps(sanitize_tool(json.loads(tool_json), family, name))


def _new_name(name: str, family: Family, taken: set[str]) -> str:
    candidate = hashed_name(name or "tool")
    if not valid_name(candidate, family):
        candidate = f"t_{candidate}"[:64]
    while candidate in taken:
        candidate = hashed_name(candidate)
    return candidate


def _renamed_history(messages: list[Any], renamed: dict[str, str]) -> list[Any]:
    """Earlier assistant tool calls under the names the provider now knows the functions by."""
    sent_as = {asked: sent for sent, asked in renamed.items()}
    out = []
    for message in messages:
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        if calls and any(_call_name(c) in sent_as for c in calls):
            message = {**message, "tool_calls": [_renamed_call(c, sent_as) for c in calls]}
        out.append(message)
    return out


def _call_name(call: Any) -> str | None:
    function = call.get("function") if isinstance(call, dict) else None
    return function.get("name") if isinstance(function, dict) else None


def _renamed_call(call: Any, sent_as: dict[str, str]) -> Any:
    name = _call_name(call)
    if name not in sent_as:
        return call
    return {**call, "function": {**call["function"], "name": sent_as[name]}}


def _renamed_choice(choice: Any, renamed: dict[str, str]) -> Any:
    name = _call_name(choice)
    sent_as = {asked: sent for sent, asked in renamed.items()}
    return _renamed_call(choice, sent_as) if name in sent_as else choice


# --- structured output ---------------------------------------------------------------------------
def response_format_for(cfg: ModelConfig, schema: dict[str, Any] | None = None, name: str = "reply") -> dict[str, Any] | None:
    """The `response_format` asking `cfg`'s provider for JSON (matching `schema` where it can), or None."""
    if schema is not None and serves_llama_cpp(cfg):
        return {"type": "json_object", "schema": schema}
    caps = capabilities(cfg.model)
    if schema is not None and caps.response_schema:
        family = family_of(cfg.model)
        schema_name = name if NAME_PATTERNS["openai"].match(name) else "reply"
        return {"type": "json_schema", "json_schema": {
            "name": schema_name, "schema": sanitize_parameters(schema, family), "strict": False}}
    return {"type": "json_object"} if caps.json_mode else None


def serves_llama_cpp(cfg: ModelConfig) -> bool:
    """The api_base is a local model server cworld started (llama.cpp's server: it takes `schema`)."""
    port = local_server.local_port(cfg.api_base)
    return port is not None and local_server.read_record(port) is not None


def _response_format(cfg: ModelConfig, form: Any) -> dict[str, Any] | None:
    """A caller's response_format in the form this provider documents."""
    if not isinstance(form, dict):
        return None
    kind = form.get("type")
    if kind == "json_object" and isinstance(form.get("schema"), dict):
        return response_format_for(cfg, form["schema"])
    if kind == "json_schema":
        spec = form.get("json_schema") or {}
        return response_format_for(cfg, spec.get("schema") if isinstance(spec, dict) else None,
                                   str(spec.get("name") or "reply"))
    return form


def _as_chatml_function_calling_renders(messages: list[Any]) -> list[Any]:
    """The conversation in the roles llama-cpp-python's `chatml-function-calling` template renders: it has no
    branch for `tool` messages (a tool's result never reached the model) and fails on an assistant message
    without `content`. A result goes as a user message naming its call; a missing content is ""."""
    names = {call.get("id"): call.get("function", {}).get("name") for m in messages if isinstance(m, dict)
             for call in m.get("tool_calls") or [] if isinstance(call, dict)}
    out: list[Any] = []
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "tool":
            called = message.get("name") or names.get(message.get("tool_call_id")) or "the tool call"
            out.append({"role": "user", "content": f"[result of {called}]\n{_text(message)}"})
        elif isinstance(message, dict) and message.get("role") == "assistant" and message.get("content") is None:
            out.append({**message, "content": ""})
        else:
            out.append(message)
    return out


def _saying_json(messages: list[Any]) -> list[Any]:
    if any("json" in _text(m).lower() for m in messages):
        return messages
    first = messages[0] if messages else None
    if isinstance(first, dict) and first.get("role") == "system" and isinstance(first.get("content"), str):
        return [{**first, "content": f"{first['content']}\n\n{JSON_NOTE}"}, *messages[1:]]
    return [{"role": "system", "content": JSON_NOTE}, *messages]


def _text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


@cache
def capabilities(model: str) -> Capabilities:
    """What litellm's model data says the model takes; an unknown model takes neither form."""
    if model.startswith(f"{MOCK_PROVIDER}/"):
        return Capabilities(json_mode=True, response_schema=True)
    litellm = load_litellm()
    try:
        name, provider, _, _ = litellm.get_llm_provider(model)
        params = litellm.get_supported_openai_params(model=name, custom_llm_provider=provider) or []
    except Exception:  # an odd model string: the call itself will report it properly
        return Capabilities(json_mode=False, response_schema=False)
    try:
        schema = bool(litellm.supports_response_schema(model=name, custom_llm_provider=provider))
    except Exception:
        schema = False
    return Capabilities(json_mode="response_format" in params, response_schema=schema and "response_format" in params)
