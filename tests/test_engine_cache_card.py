"""The cloud card's key-value cache families (issue 33), written from memcached's protocol: `set` stores whether
or not the key is held, `add` refuses a held key, `append`/`prepend` and `incr`/`decr` need one, and a
decrement stops at zero."""

from __future__ import annotations

from typing import Any

from engine_helpers import rules_caller, tool_spec

STR, INT = {"type": "string"}, {"type": "integer"}
KV = {"key": STR, "value": STR}
TOOLS = [tool_spec("cache", "cache_set", KV, ["key", "value"]), tool_spec("cache", "cache_add", KV, ["key", "value"]),
         tool_spec("cache", "cache_append", KV, ["key", "value"]),
         tool_spec("cache", "cache_prepend", KV, ["key", "value"]),
         tool_spec("cache", "cache_incr", {"key": STR, "value": INT}, ["key"]),
         tool_spec("cache", "cache_decr", {"key": STR, "value": INT}, ["key"]),
         tool_spec("cache", "cache_get", {"key": STR}, ["key"])]


def cache() -> Any:
    items = {"greeting": {"key": "greeting", "value": "hello", "expires_in_s": 0}}
    return rules_caller("cache", "cloud_infrastructure", {"cache_items": items}, {"cache_item": "cache_items"}, TOOLS)


def value(call: Any, key: str) -> Any:
    return (call("cache_get", key=key).structured_content or {}).get("value")


def test_set_stores_a_new_key_and_overwrites_a_held_one() -> None:
    call = cache()
    assert not call("cache_set", key="visits", value="1").is_error
    assert value(call, "visits") == "1"
    assert not call("cache_set", key="greeting", value="hi").is_error
    assert value(call, "greeting") == "hi"


def test_add_refuses_a_held_key_and_append_needs_one() -> None:
    call = cache()
    assert call("cache_add", key="greeting", value="x").error_class in ("conflict", "business")  # NOT_STORED
    assert not call("cache_add", key="fresh", value="x").is_error
    assert call("cache_append", key="missing", value="!").error_class == "not_found"
    call("cache_append", key="greeting", value=" world")
    call("cache_prepend", key="greeting", value="> ")
    assert value(call, "greeting") == "> hello world"


def test_incr_and_decr_count_a_held_number_and_stop_at_zero() -> None:
    call = cache()
    call("cache_set", key="n", value="5")
    assert (call("cache_incr", key="n", value=3).structured_content or {}).get("value") == "8"
    assert (call("cache_decr", key="n", value=20).structured_content or {}).get("value") == "0"
    assert call("cache_incr", key="greeting").error_class in ("invalid", "invalid_args")


def test_batch_sets_reads_and_deletes_keep_to_the_keys_held() -> None:
    tools = [*TOOLS, tool_spec("cache", "cache_set_many", {"mapping": {"type": "object"}}, ["mapping"]),
             tool_spec("cache", "cache_get_many", {"keys": {"type": "array", "items": STR}}, ["keys"]),
             tool_spec("cache", "cache_delete_many", {"keys": {"type": "array", "items": STR}}, ["keys"])]
    items = {"greeting": {"key": "greeting", "value": "hello", "expires_in_s": 0}}
    call = rules_caller("cache", "cloud_infrastructure", {"cache_items": items}, {"cache_item": "cache_items"}, tools)
    assert not call("cache_set_many", mapping={"a": 1, "b": "two"}).is_error
    got = call("cache_get_many", keys=["a", "b", "zz"]).text
    assert '"a": "1"' in got and '"b": "two"' in got and "zz" not in got, got
    assert not call("cache_delete_many", keys=["a", "zz"]).is_error
    assert call("cache_get", key="a").error_class == "not_found" and value(call, "b") == "two"
