"""The LLM agent's conversation, and the part of it each model call is shown: within a token budget.

A 60-step episode with results of thousands of characters outgrows any window, and resending all of it
every turn costs more each step. So the transcript stays whole (the record), and each call sees a view:

- the system prompt and the task, always, as they are;
- the newest `RECENT_RESULTS` tool results as the agent stored them (each already capped at its
  `max_result_chars`); older ones cut to their first `OLD_RESULT_CHARS` characters, saying so;
- when that is still over the budget, the oldest turns (an assistant message with its tool answers and
  the messages after them) leave the view whole, so every tool call in it keeps its answer, and one note
  after the task lists them in a line each: the call, the start of its result, and the user's own words
  verbatim (a requirement the user changed stays in view);
- the newest turn is never dropped; when alone it is over the budget its results are cut further.

The budget is per model (`history_budget`): `history_tokens` from the model's config, else half its
context window as litellm's model data has it (at most `MAX_DEFAULT_TOKENS`), else `DEFAULT_TOKENS`.
Tokens are counted with litellm's `token_counter` (per message, cached); the tool definitions are not
part of this budget.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cworld.config import ModelConfig
from cworld.llm.tokens import count_tokens, max_input_tokens

DEFAULT_TOKENS = 8_000
"""A model litellm does not know (a local server under an alias, the mock): what an 8k window still holds
beside the tool definitions and the answer."""
MAX_DEFAULT_TOKENS = 32_000
"""The default's cap for large windows: past this a long episode costs much and reads little better."""
MIN_TOKENS = 2_000
WINDOW_SHARE = 0.5
"""The history takes at most half the window: the tool definitions and the answer need the rest."""
RECENT_RESULTS = 3
OLD_RESULT_CHARS = 400
LAST_RESORT_CHARS = 1_000
"""The newest turn's results when that turn alone is over the budget."""
NOTE_LINES = 20
"""Calls of dropped turns listed in the note, newest first; earlier ones are counted, not listed."""
NOTE_SHARE = 0.2
"""The note takes at most this share of the budget (the user's own words are kept whatever it takes)."""
NOTE_TEXT = 100
"""Characters of a dropped call's arguments, and of its result, in its note line."""
USER_SAID = "- the user said:"
NOTE_HEAD = "[Earlier steps, cut from this conversation to fit the agent's history budget]"

Message = dict[str, Any]
Counter = Callable[[Message], int]


def history_budget(model: ModelConfig) -> int:
    """Tokens of conversation the agent shows `model` per call."""
    if model.history_tokens:
        return model.history_tokens
    window = max_input_tokens(model.model)
    if window is None:
        return DEFAULT_TOKENS
    share = int(window * WINDOW_SHARE) - (model.max_tokens or 0)
    return max(MIN_TOKENS, min(MAX_DEFAULT_TOKENS, share))


def token_counter(model: str) -> Counter:
    """One message's tokens for `model` (litellm's counter), remembered: a view recounts only what changed."""
    seen: dict[str, int] = {}

    def count(message: Message) -> int:
        key = json.dumps(message, sort_keys=True, default=str)
        if key not in seen:
            seen[key] = count_tokens(model, [message])
        return seen[key]

    return count


@dataclass
class History:
    """The whole transcript (`messages`) and `view()`, the part of it a model call is shown."""

    budget: int
    count: Counter
    messages: list[Message] = field(default_factory=list)
    from_user: set[int] = field(default_factory=set)
    """Indices of the messages the user wrote (kept verbatim when their turn leaves the view)."""

    def add(self, message: Message, *, user: bool = False) -> None:
        if user:
            self.from_user.add(len(self.messages))
        self.messages.append(message)

    def tokens(self, messages: list[Message]) -> int:
        return sum(self.count(m) for m in messages)

    def view(self) -> list[Message]:
        """The system prompt and the task, a note for the turns that left, and the turns that fit."""
        pinned, turns = self.messages[:2], _turns(self.messages, start=2)
        shown = _older_results_cut([[self.messages[i] for i in turn] for turn in turns])
        sizes = [self.tokens(t) for t in shown]
        room = self.budget - self.tokens(pinned)
        dropped = 0
        while True:
            note = self._note(turns[:dropped])
            over = self.tokens(note) + sum(sizes[dropped:]) - room
            if over <= 0 or dropped >= len(turns) - 1:
                break
            while over > 0 and dropped < len(turns) - 1:
                over -= sizes[dropped]
                dropped += 1
        last = shown[dropped:]
        if last and over > 0:
            last[-1] = [_cut(m, LAST_RESORT_CHARS) for m in last[-1]]
        return pinned + note + [m for turn in last for m in turn]

    def _note(self, turns: list[list[int]]) -> list[Message]:
        """One user message for the turns that left the view: every word the user said, and the newest calls
        that fit `NOTE_LINES` and a `NOTE_SHARE` of the budget."""
        if not turns:
            return []
        lines = [line for turn in turns for line in self._summary(turn)]
        room = self.budget * NOTE_SHARE - sum(self._line_tokens(line) for line in lines if line.startswith(USER_SAID))
        listed: set[int] = set()
        for i in reversed(range(len(lines))):
            if lines[i].startswith(USER_SAID):
                continue
            room -= self._line_tokens(lines[i])
            if room < 0 or len(listed) >= NOTE_LINES:
                break
            listed.add(i)
        kept = [line for i, line in enumerate(lines) if i in listed or line.startswith(USER_SAID)]
        hidden = sum(1 for line in lines if not line.startswith(USER_SAID)) - len(listed)
        if hidden:
            kept.insert(0, f"- ({hidden} earlier call(s) not listed)")
        return [{"role": "user", "content": NOTE_HEAD + "\n" + "\n".join(kept)}]

    def _line_tokens(self, line: str) -> int:
        return self.count({"role": "user", "content": line})

    def _summary(self, turn: list[int]) -> list[str]:
        """One line per call of the turn (what was called, how it answered) and the user's own words."""
        answers = {self.messages[i].get("tool_call_id"): self.messages[i].get("content") for i in turn
                   if self.messages[i].get("role") == "tool"}
        lines: list[str] = []
        for i in turn:
            message = self.messages[i]
            if i in self.from_user:
                lines.append(f"{USER_SAID} {str(message.get('content', ''))[:1000]}")
            for call in message.get("tool_calls") or []:
                function = call.get("function", {})
                answer = " ".join(str(answers.get(call.get("id"), "(no answer)")).split())[:NOTE_TEXT]
                lines.append(f"- {function.get('name')}({str(function.get('arguments', ''))[:NOTE_TEXT]}) -> {answer}")
        return lines


def _turns(messages: list[Message], start: int) -> list[list[int]]:
    """Indices from `start` grouped into turns: an assistant message and what follows it until the next."""
    turns: list[list[int]] = []
    for i in range(start, len(messages)):
        if messages[i].get("role") == "assistant" or not turns:
            turns.append([])
        turns[-1].append(i)
    return turns


def _older_results_cut(turns: list[list[Message]]) -> list[list[Message]]:
    """Every tool result but the newest `RECENT_RESULTS` cut to `OLD_RESULT_CHARS`."""
    seen = 0
    out: list[list[Message]] = []
    for turn in reversed(turns):
        kept: list[Message] = []
        for message in reversed(turn):
            if message.get("role") == "tool":
                seen += 1
                message = message if seen <= RECENT_RESULTS else _cut(message, OLD_RESULT_CHARS)
            kept.append(message)
        out.append(list(reversed(kept)))
    return list(reversed(out))


def _cut(message: Message, limit: int) -> Message:
    content = message.get("content")
    if message.get("role") != "tool" or not isinstance(content, str) or len(content) <= limit:
        return message
    rest = len(content) - limit
    return {**message, "content": f"{content[:limit]}\n[result cut here: {rest} more characters; "
                                  "call the tool again to read them]"}
