"""One episode's door to the gateway: every call tagged role `agent`, its tokens counted per step.

The gateway's own ledger is per run (shared by concurrent episodes), so an episode counts what its own
completions report and hands each step its share with `take()`.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from cworld.config import ModelConfig
from cworld.data_model import Usage
from cworld.llm import Completion, Gateway, jsonrepair, provider_rules
from cworld.llm.usage import usage_of

M = TypeVar("M", bound=BaseModel)
ROLE = "agent"


class Meter:
    def __init__(self, gateway: Gateway, model: ModelConfig, seed: int | None) -> None:
        self.gateway, self.model, self.seed = gateway, model, seed
        self.total = Usage()
        self._step = Usage()

    async def complete(self, messages: list[Any], **kwargs: Any) -> Completion:
        completion = await self.gateway.complete(ROLE, messages, model=self.model, seed=self.seed, **kwargs)
        used = usage_of(completion)
        self.total.add(used)
        self._step.add(used)
        return completion

    async def complete_json(self, messages: list[Any], schema: type[M], max_repairs: int = 2) -> M:
        extra: dict[str, Any] = {}
        if self.gateway.supports_json_mode(self.model.model) or provider_rules.serves_llama_cpp(self.model):
            # with the schema: a provider that can holds the reply to it (OpenAI's json_schema, llama.cpp's
            # grammar), the rest get plain JSON mode (`provider_rules.response_format_for`)
            extra["response_format"] = {"type": "json_object", "schema": schema.model_json_schema()}

        async def complete(role: str, convo: list[Any], **kwargs: Any) -> Completion:
            return await self.complete(convo, **kwargs)

        return await jsonrepair.complete_json(complete, ROLE, messages, schema, max_repairs=max_repairs, **extra)

    def take(self) -> Usage:
        """The usage since the last take: one step's tokens."""
        step, self._step = self._step, Usage()
        return step
