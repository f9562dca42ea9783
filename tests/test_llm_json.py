"""JSON replies: extraction from fences and prose, repair by feeding the error back, a clear give-up."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from cworld.config import ModelConfig, ModelsConfig
from cworld.errors import ModelError
from cworld.llm import Gateway, RetryPolicy, extract_json, mock
from cworld.llm.jsonrepair import NoJSON

ASK = [{"role": "user", "content": "Grade the answer."}]


class Verdict(BaseModel):
    score: int
    reason: str


@pytest.fixture(autouse=True)
def _clean_scripts():
    yield
    mock.clear()


def judge_gateway() -> Gateway:
    return Gateway(ModelsConfig(judge=[ModelConfig(model="mock/j")]), retry=RetryPolicy.immediate())


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Here you go:\n```\n[1, 2]\n```\nanything else?', [1, 2]),
        ('Sure! The result is {"a": {"b": "}"}} as requested.', {"a": {"b": "}"}}),
        ('I think {not json} but then {"ok": true}', {"ok": True}),
    ],
)
def test_extract_json_finds_the_value(text, value):
    assert extract_json(text) == value


@pytest.mark.parametrize("text", ["", "   ", "no json here", "{broken: "])
def test_extract_json_says_when_there_is_none(text):
    with pytest.raises(NoJSON):
        extract_json(text)


async def test_invalid_then_valid_is_repaired():
    script = mock.script("j", ['{"score": "high"}', "```json\n{\"score\": 4, \"reason\": \"correct\"}\n```"])
    verdict = await judge_gateway().complete_json("judge", ASK, Verdict)
    assert verdict == Verdict(score=4, reason="correct")
    assert len(script.calls) == 2
    first, repair = script.calls[0], script.calls[1]
    assert first.params["response_format"] == {"type": "json_object"}
    assert "JSON schema" in first.messages[0]["content"] and '"score"' in first.messages[0]["content"]
    assert repair.messages[-2] == {"role": "assistant", "content": '{"score": "high"}'}
    feedback = repair.messages[-1]["content"]
    assert repair.messages[-1]["role"] == "user"
    assert "score: Input should be a valid integer" in feedback and "reason: Field required" in feedback


async def test_repairs_exhausted_raise_one_clear_line():
    script = mock.script("j", ["nope", "still nope", '{"score": 1}'])
    with pytest.raises(ModelError) as info:
        await judge_gateway().complete_json("judge", ASK, Verdict, max_repairs=2)
    message = str(info.value)
    assert message.startswith("model 'mock/j' for role 'judge': no valid Verdict JSON after 3 attempt(s)")
    assert "reason: Field required" in message and "\n" not in message
    assert len(script.calls) == 3


async def test_existing_system_message_keeps_its_place_and_hint_can_be_off():
    script = mock.script("j", ['{"score": 2, "reason": "ok"}', '{"score": 3, "reason": "ok"}'])
    gw = judge_gateway()
    system = [{"role": "system", "content": "You are a strict grader."}, *ASK]
    await gw.complete_json("judge", system, Verdict)
    assert len(script.calls[0].messages) == 2
    assert script.calls[0].messages[0]["content"].startswith("You are a strict grader.\n\n")
    await gw.complete_json("judge", system, Verdict, hint=False, json_mode=False)
    assert script.calls[1].messages == system and "response_format" not in script.calls[1].params
