"""The response cache: identical request hits, any change misses, no secret reaches the file."""

from __future__ import annotations

import threading

import pytest

from cworld.config import ModelConfig, ModelsConfig
from cworld.llm import Completion, Gateway, RetryPolicy, mock
from cworld.llm.cache import ResponseCache, request_key

USER = [{"role": "user", "content": "what is 2+2?"}]


@pytest.fixture(autouse=True)
def _clean_scripts():
    yield
    mock.clear()


def cached_gateway(path, cfg: ModelConfig | None = None) -> Gateway:
    cfg = cfg or ModelConfig(model="mock/a")
    return Gateway(ModelsConfig(agent=cfg), cache_path=path, retry=RetryPolicy.immediate())


async def test_identical_request_hits_and_is_counted_not_charged(tmp_path):
    script = mock.script("a", ["4", "four"])
    price = {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6}
    gw = cached_gateway(tmp_path / "c.sqlite", ModelConfig(model="mock/a", extra=price))
    first = await gw.complete("agent", USER, seed=1)
    again = await gw.complete("agent", USER, seed=1)
    assert (first.text, again.text) == ("4", "4")
    assert len(script.calls) == 1
    assert again.cached and not first.cached
    assert again.cost_usd == 0.0 and first.cost_usd > 0
    usage = gw.usage["agent"]
    assert (usage.calls, usage.cache_hits, usage.cost_usd) == (1, 1, first.cost_usd)
    assert usage.prompt_tokens == first.usage.prompt_tokens


@pytest.mark.parametrize(
    "change",
    [
        {"messages": [{"role": "user", "content": "what is 2+3?"}]},
        {"seed": 2},
        {"temperature": 0.5},
        {"max_tokens": 10},
        {"tools": [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]},
        {"tool_choice": "none", "tools": [{"type": "function", "function": {"name": "add"}}]},  # alone: dropped
        {"response_format": {"type": "json_object"}},
        {"model": "mock/b"},
    ],
)
async def test_any_change_to_the_request_misses(tmp_path, change):
    a = mock.script("a", ["4", "again"])
    b = mock.script("b", ["from b"])
    gw = cached_gateway(tmp_path / "c.sqlite")
    await gw.complete("agent", USER, seed=1)
    request = {"messages": USER, "seed": 1, **change}
    messages = request.pop("messages")
    changed = await gw.complete("agent", messages, **request)
    assert not changed.cached
    assert len(a.calls) + len(b.calls) == 2


async def test_cache_is_shared_through_the_file_and_can_be_off(tmp_path):
    script = mock.script("a", ["4", "4 again"])
    await cached_gateway(tmp_path / "c.sqlite").complete("agent", USER)
    assert (await cached_gateway(tmp_path / "c.sqlite").complete("agent", USER)).cached
    assert len(script.calls) == 1
    uncached = Gateway(ModelsConfig(agent=ModelConfig(model="mock/a")), retry=RetryPolicy.immediate())
    assert (await uncached.complete("agent", USER)).text == "4 again"
    assert uncached.cache is None and len(script.calls) == 2


async def test_api_key_never_reaches_the_cache_file(tmp_path, monkeypatch):
    secret = "sk-PLANTED-key-9f8e7d6c5b4a"
    monkeypatch.setenv("CWORLD_TEST_PLANTED_KEY", secret)
    script = mock.script("a", [{"text": "fine", "tool_calls": [{"name": "t", "arguments": {"a": 1}}]}])
    gw = cached_gateway(tmp_path / "c.sqlite", ModelConfig(model="mock/a", api_key_env="CWORLD_TEST_PLANTED_KEY"))
    await gw.complete("agent", USER)
    assert script.calls[0].api_key == secret  # the key did travel to the provider
    assert (await gw.complete("agent", USER)).cached
    gw.close()
    files = list(tmp_path.glob("c.sqlite*"))
    blob = b"".join(f.read_bytes() for f in files)
    assert b"fine" in blob  # the response is there, so the search below is meaningful
    assert secret.encode() not in blob and b"PLANTED" not in blob


def test_request_key_is_canonical_and_ignores_secrets():
    base = {"model": "m", "messages": USER, "seed": 1}
    reordered = {"seed": 1, "messages": USER, "model": "m"}
    assert request_key(base) == request_key(reordered)
    assert request_key(base) == request_key({**base, "api_key": "sk-x", "tools": None, "timeout": 5})
    assert request_key(base) != request_key({**base, "seed": 2})


def test_cache_is_safe_under_concurrent_writers(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")

    def write(worker: int) -> None:
        for i in range(40):
            cache.put(f"{worker}-{i}", Completion(text=f"{worker}:{i}", model="m"))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    other = ResponseCache(tmp_path / "c.sqlite")  # a second handle, as another process would open
    assert len(other) == 160
    hit = other.get("3-39")
    assert hit is not None and hit.text == "3:39"
    cache.close()
    other.close()


def test_an_unusable_cache_file_is_a_config_error_that_names_it(tmp_path):
    from cworld.errors import ConfigError

    bad = tmp_path / "c.sqlite"
    bad.write_bytes(b"this is not a database, just some bytes" * 50)
    with pytest.raises(ConfigError, match=r"LLM cache .*c\.sqlite is not usable"):
        ResponseCache(bad)


def test_cache_is_safe_across_processes(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; from cworld.llm.cache import ResponseCache; from cworld.llm import Completion\n"
        "c = ResponseCache(sys.argv[1])\n"
        "for i in range(100): c.put(f'{sys.argv[2]}-{i}', Completion(text=str(i), model='m'))\n"
    )
    path = str(tmp_path / "shared.sqlite")
    procs = [subprocess.Popen([sys.executable, "-c", code, path, tag]) for tag in ("p", "q")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    cache = ResponseCache(path)
    assert len(cache) == 200 and cache.get("q-99") is not None
    cache.close()
