"""`python -m cworld.llm.llama_server ARGS`: llama-cpp-python's OpenAI-compatible server (`python -m
llama_cpp.server ARGS`, the same arguments), with the messages of a `chatml-function-calling` prompt as sent.

That chat format renders its prompt with Jinja's HTML autoescaping on (llama-cpp-python 0.3.x,
`llama_chat_format.chatml_function_calling`): every `"` of a message reached the model as `&#34;`, every
`'` as `&#39;`, `<` as `&lt;`. The model read mangled JSON, and the prompt was about twice as long: the
synthesis draft's 3,850 tokens of messages became 7,675 prompt tokens. Here the template is rendered
without autoescaping, so the model reads the messages as they were written. Nothing else changes: the
server, its flags and its answers' format are llama-cpp-python's own.
"""

from __future__ import annotations

import runpy
import types
from typing import Any


class _Jinja2WithoutAutoescape(types.ModuleType):
    """jinja2 as `llama_chat_format` sees it: `select_autoescape(...)` says never; the rest is jinja2's."""

    def __init__(self, real: types.ModuleType) -> None:
        super().__init__(real.__name__, real.__doc__)
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    @staticmethod
    def select_autoescape(*args: Any, **kwargs: Any) -> bool:
        return False


def unescaped_chat_prompts() -> None:
    """Render llama-cpp-python's chat prompts without HTML autoescaping (see the module docstring)."""
    import jinja2
    from llama_cpp import llama_chat_format

    if not isinstance(llama_chat_format.jinja2, _Jinja2WithoutAutoescape):
        llama_chat_format.jinja2 = _Jinja2WithoutAutoescape(jinja2)  # type: ignore[assignment]


def main() -> None:
    unescaped_chat_prompts()
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
