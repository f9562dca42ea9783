"""The documented rules OpenAI's chat completions API enforces on a request, as one checker.

The strict stand-in (`strict_server.py`) answers HTTP 400 with the first refusal found here, so a request
that a real provider would refuse fails in tests first. The rules, from the API reference:

- parameters: only the documented ones; `messages` a non-empty list; `tools` at most 128;
- roles: system, developer, user, assistant, tool, function;
- order: an assistant message with `tool_calls` is followed by one tool message per `tool_call_id`
  before anything else; a tool message only answers such a call;
- functions: name `^[a-zA-Z0-9_-]{1,64}$`, description at most 1024 characters, parameters a JSON Schema
  (valid against the metaschema) of type `object`, every array with `items`, local `$ref`s that resolve,
  and with `strict: true` every object closed (`additionalProperties: false`) and fully required;
- `tool_choice` only with tools, naming one of them;
- `response_format`: `text`, `json_object` (no other key; the messages must say "json") or
  `json_schema` with a valid name and a schema. llama.cpp's `{"type": "json_object", "schema": ...}` is
  refused, as the real API refuses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cworld.llm.metaschema import first_error, subschemas

FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_DESCRIPTION = 1024
MAX_TOOLS = 128
ROLES = ("system", "developer", "user", "assistant", "tool", "function")
PARAMETERS = frozenset({
    "model", "messages", "tools", "tool_choice", "parallel_tool_calls", "response_format", "temperature",
    "top_p", "n", "stream", "stream_options", "stop", "max_tokens", "max_completion_tokens", "presence_penalty",
    "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "user", "seed", "service_tier", "store",
    "metadata", "reasoning_effort", "modalities", "audio", "prediction", "web_search_options", "verbosity",
    "functions", "function_call", "prompt_cache_key", "safety_identifier",
})  # fmt: skip


@dataclass(frozen=True)
class Refusal:
    """One HTTP 400 answer, in OpenAI's error shape."""

    message: str
    param: str | None = None
    code: str | None = None

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": "invalid_request_error", "param": self.param,
                          "code": self.code}}


def refusal(body: Any) -> Refusal | None:
    """The first rule this request body breaks, else None."""
    if not isinstance(body, dict):
        return Refusal("We could not parse the JSON body of your request.")
    unknown = sorted(set(body) - PARAMETERS)
    if unknown:
        return Refusal(f"Unrecognized request argument supplied: {unknown[0]}", unknown[0])
    if not isinstance(body.get("model"), str) or not body["model"]:
        return Refusal("you must provide a model parameter", "model")
    tools = body.get("tools")
    return (_messages_refusal(body.get("messages")) or _tools_refusal(tools)
            or _tool_choice_refusal(body.get("tool_choice"), tools)
            or _response_format_refusal(body.get("response_format"), body.get("messages") or []))


# --- messages ------------------------------------------------------------------------------------
def _messages_refusal(messages: Any) -> Refusal | None:
    if not isinstance(messages, list) or not messages:
        return Refusal("Invalid 'messages': empty array. Expected an array with minimum length 1.", "messages",
                       "empty_array")
    pending: list[str] = []
    opened_at = 0
    for index, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ROLES:
            allowed = ", ".join(f"'{r}'" for r in ROLES)
            return Refusal(f"Invalid value: '{role}'. Supported values are: {allowed}.", f"messages[{index}].role",
                           "invalid_value")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                return Refusal("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                               "message with 'tool_calls'.", f"messages.[{index}].role")
            pending.remove(call_id)
            continue
        if pending:
            return _unanswered(pending, opened_at)
        problem = _content_refusal(message, index)
        if problem is not None:
            return problem
        if role == "assistant" and message.get("tool_calls"):
            pending, opened_at = _call_ids(message["tool_calls"]), index
    return _unanswered(pending, opened_at) if pending else None


def _content_refusal(message: dict[str, Any], index: int) -> Refusal | None:
    content = message.get("content")
    if message["role"] == "assistant":
        if content is None and not message.get("tool_calls") and not message.get("function_call"):
            return Refusal("Invalid value for 'content': expected a string, got null.", f"messages.[{index}].content")
        return None
    if not isinstance(content, str | list):
        return Refusal(f"Invalid value for 'content': expected a string, got {_json_type(content)}.",
                       f"messages.[{index}].content")
    return None


def _call_ids(calls: Any) -> list[str]:
    return [str(c.get("id")) for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _unanswered(pending: list[str], index: int) -> Refusal:
    return Refusal("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                   f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(pending)}",
                   f"messages.[{index}].role")


# --- tools ---------------------------------------------------------------------------------------
def _tools_refusal(tools: Any) -> Refusal | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return Refusal(f"Invalid type for 'tools': expected an array, but got {_json_type(tools)} instead.", "tools",
                       "invalid_type")
    if len(tools) > MAX_TOOLS:
        return Refusal(f"Invalid 'tools': array too long. Expected an array with maximum length {MAX_TOOLS}, but got "
                       f"an array with length {len(tools)} instead.", "tools", "array_above_max_length")
    for index, tool in enumerate(tools):
        problem = function_refusal(tool, index)
        if problem is not None:
            return problem
    return None


def function_refusal(tool: Any, index: int = 0) -> Refusal | None:
    """The first rule one `{"type": "function", "function": {...}}` entry breaks, else None."""
    where = f"tools[{index}]"
    function = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
        return Refusal(f"Missing required parameter: '{where}.function'.", f"{where}.function", "missing_required_parameter")
    name = function.get("name")
    if not isinstance(name, str) or not FUNCTION_NAME.match(name):
        return Refusal(f"Invalid '{where}.function.name': string does not match pattern. Expected a string that "
                       "matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.", f"{where}.function.name", "invalid_value")
    description = function.get("description")
    if description is not None and (not isinstance(description, str) or len(description) > MAX_DESCRIPTION):
        size = len(description) if isinstance(description, str) else 0
        return Refusal(f"Invalid '{where}.function.description': string too long. Expected a string with maximum "
                       f"length {MAX_DESCRIPTION}, but got a string with length {size} instead.",
                       f"{where}.function.description", "string_above_max_length")
    problem = schema_problem(function.get("parameters", {"type": "object", "properties": {}}),
                             strict=function.get("strict") is True)
    if problem is not None:
        return Refusal(f"Invalid schema for function '{name}': {problem}", f"{where}.function.parameters",
                       "invalid_function_parameters")
    return None


def schema_problem(schema: Any, *, strict: bool = False) -> str | None:
    """Why OpenAI would refuse this function-parameters (or response) schema, else None."""
    if not isinstance(schema, dict):
        return f"{schema!r} is not of type 'object'."
    found = first_error(schema)
    if found is not None:
        path, error = found
        return f"In context={path}, {error.message}" if path else error.message
    if schema.get("type") != "object":
        return f"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{schema.get('type')}\"'."
    for path, node in subschemas(schema):
        problem = _node_problem(node, schema, strict) if isinstance(node, dict) else None
        if problem is not None:
            return f"In context={path}, {problem}"
    return None


def _node_problem(node: dict[str, Any], root: dict[str, Any], strict: bool) -> str | None:
    kind = node.get("type")
    if (kind == "array" or (isinstance(kind, list) and "array" in kind)) and "items" not in node:
        return "array schema missing items."
    ref = node.get("$ref")
    if isinstance(ref, str) and not _resolves(ref, root):
        return f"reference to component '{ref}' which was not found in the schema."
    if strict and (kind == "object" or "properties" in node):
        if node.get("additionalProperties") is not False:
            return "'additionalProperties' is required to be supplied and to be false."
        missing = sorted(set(node.get("properties") or {}) - set(node.get("required") or []))
        if missing:
            return f"'required' is required to be supplied and to be an array including every key in properties. " \
                   f"Missing '{missing[0]}'."
    return None


def _resolves(ref: str, root: dict[str, Any]) -> bool:
    if ref == "#":
        return True
    if not ref.startswith("#/"):
        return False
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return isinstance(node, dict | bool)


# --- tool choice and response format -------------------------------------------------------------
def _tool_choice_refusal(choice: Any, tools: Any) -> Refusal | None:
    if choice is None:
        return None
    if not tools:
        return Refusal("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
                       "tool_choice")
    if isinstance(choice, str):
        if choice in ("none", "auto", "required"):
            return None
        return Refusal(f"Invalid value: '{choice}'. Supported values are: 'none', 'auto', and 'required'.",
                       "tool_choice", "invalid_value")
    name = ((choice.get("function") or {}).get("name")) if isinstance(choice, dict) else None
    names = {(t.get("function") or {}).get("name") for t in tools if isinstance(t, dict)}
    if name not in names:
        return Refusal(f"Invalid value for 'tool_choice': function '{name}' is not among the tools.", "tool_choice")
    return None


def _response_format_refusal(form: Any, messages: list[Any]) -> Refusal | None:
    if form is None:
        return None
    kind = form.get("type") if isinstance(form, dict) else None
    if kind not in ("text", "json_object", "json_schema"):
        return Refusal(f"Invalid value: '{kind}'. Supported values are: 'text', 'json_object', and 'json_schema'.",
                       "response_format.type", "invalid_value")
    extra = sorted(set(form) - {"type", kind})
    if extra:
        return Refusal(f"Unrecognized request argument supplied: response_format.{extra[0]}",
                       f"response_format.{extra[0]}")
    if kind == "json_object" and not any("json" in _text(m).lower() for m in messages):
        return Refusal("'messages' must contain the word 'json' in some form, to use 'response_format' of type "
                       "'json_object'.", "messages")
    if kind == "json_schema":
        return _json_schema_refusal(form.get("json_schema"))
    return None


def _json_schema_refusal(spec: Any) -> Refusal | None:
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not FUNCTION_NAME.match(spec["name"]):
        return Refusal("Invalid 'response_format.json_schema.name': expected a string that matches the pattern "
                       "'^[a-zA-Z0-9_-]{1,64}$'.", "response_format.json_schema.name", "invalid_value")
    problem = schema_problem(spec.get("schema"), strict=spec.get("strict") is True)
    if problem is not None:
        return Refusal(f"Invalid schema for response_format '{spec['name']}': {problem}",
                       "response_format.json_schema.schema", "invalid_json_schema")
    return None


def _text(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "an integer",
             float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
