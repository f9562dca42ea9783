"""`cworld.llm.llama_server`: llama-cpp-python's `chatml-function-calling` prompt carries the messages as
they were written, not HTML-escaped (`&#34;` for every quote, about twice the tokens). No model needed: a
stand-in for the model records the prompt it is asked to complete. `cworld llm serve-local` and the tests'
servers run through it (`llm_local.server_command`, checked in test_engine_local_llm.py)."""

from __future__ import annotations

from typing import Any

import pytest

llama_chat_format = pytest.importorskip("llama_cpp.llama_chat_format", reason="the local model server is not installed")

from cworld.llm.llama_server import unescaped_chat_prompts  # noqa: E402

MESSAGES = [{"role": "system", "content": 'Reply with JSON: {"status": "ok", "note": "<b> & \'c\'"}'},
            {"role": "user", "content": 'Find "Ana Ruiz" & reply.'}]


class PromptRecorder:
    """What `chatml_function_calling` needs of a model: a completion, and the prompt it was asked for kept."""

    verbose = False

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def create_completion(self, prompt: str, **kwargs: Any) -> dict[str, Any]:
        self.prompts.append(prompt)
        return {"id": "c", "object": "text_completion", "created": 0, "model": "m",
                "choices": [{"text": "ok", "index": 0, "logprobs": None, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def prompt_for(messages: list[dict[str, Any]], **kwargs: Any) -> str:
    model = PromptRecorder()
    llama_chat_format.chatml_function_calling(llama=model, messages=messages, **kwargs)
    return model.prompts[0]


def test_the_prompt_holds_the_messages_as_written() -> None:
    unescaped_chat_prompts()
    unescaped_chat_prompts()  # twice: still one layer
    prompt = prompt_for(MESSAGES, response_format={"type": "json_object"})
    assert prompt == ('<|im_start|>system\nReply with JSON: {"status": "ok", "note": "<b> & \'c\'"}<|im_end|>\n'
                      '<|im_start|>user\nFind "Ana Ruiz" & reply.<|im_end|>\n<|im_start|>assistant\n')
    assert "&#34;" not in prompt and "&amp;" not in prompt


def test_offered_tools_are_still_listed_as_json() -> None:
    unescaped_chat_prompts()
    tools = [{"type": "function", "function": {"name": "get_contact", "description": "A contact by id.",
                                               "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]
    prompt = prompt_for(MESSAGES, tools=tools, tool_choice={"type": "function", "function": {"name": "get_contact"}})
    assert 'Find "Ana Ruiz" & reply.' in prompt
    assert 'functions.get_contact:\n{"properties": {"q": {"type": "string"}}, "type": "object"}' in prompt
