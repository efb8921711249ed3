"""Fakes that implement the real interfaces: scripted chat models for the agent loop."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from bot.llm import ChatMessage, Completion, LLMError, ToolCall, ToolSpec, Usage

Reply = Completion | Exception | Callable[[Sequence[ChatMessage], Sequence[ToolSpec]], Completion]
_SHOWN = re.compile(r"\[c(\d+)\]")


def call(name: str, arguments: dict[str, Any] | str, call_id: str | None = None) -> Completion:
    """A reply that calls one tool (arguments as a dict, or a raw string to send malformed JSON)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Completion(tool_calls=[ToolCall(id=call_id or f"call_{name}", name=name, arguments=raw)],
                      model="scripted", usage=Usage(prompt_tokens=100, completion_tokens=10))


def final(summary: str, steps: list[dict[str, Any]] | None = None, *, abstain: bool = False) -> Completion:
    """A reply with the JSON answer."""
    body = {"summary": summary, "steps": steps or [], "abstain": abstain}
    return Completion(content=json.dumps(body), model="scripted", usage=Usage(prompt_tokens=200, completion_tokens=50))


def text(content: str) -> Completion:
    """A plain text reply."""
    return Completion(content=content, model="scripted")


def shown_ids(conversation: Sequence[ChatMessage]) -> list[int]:
    """Citation ids the tools have shown so far, in order."""
    ids = [int(m) for msg in conversation if msg.role == "tool" for m in _SHOWN.findall(msg.content)]
    return list(dict.fromkeys(ids))


def shown_blocks(conversation: Sequence[ChatMessage]) -> dict[int, str]:
    """Each shown citation id with the text under its header."""
    out: dict[int, str] = {}
    for content in tool_results(conversation):
        parts = re.split(r"(?m)^\[c(\d+)\]", content)
        for cid, body in zip(parts[1::2], parts[2::2]):
            out.setdefault(int(cid), body)
    return out


def tool_results(conversation: Sequence[ChatMessage]) -> list[str]:
    """The contents of every tool message."""
    return [m.content for m in conversation if m.role == "tool"]


class ScriptedLLM:
    """Plays replies in order; a callable reply is computed from the conversation so far."""

    def __init__(self, replies: Sequence[Reply], *, name: str = "scripted", delay: float = 0.0) -> None:
        self.replies = list(replies)
        self.name = name
        self.delay = delay
        self.seen: list[list[ChatMessage]] = []
        self.tools_offered: list[list[str]] = []
        self.tool_choices: list[str | None] = []

    async def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], *,
                       tool_choice: str | None = None) -> Completion:
        """The next scripted reply."""
        self.seen.append(list(messages))
        self.tools_offered.append([t.name for t in tools])
        self.tool_choices.append(tool_choice)
        if self.delay:
            await asyncio.sleep(self.delay)
        if not self.replies:
            raise AssertionError("ScriptedLLM ran out of replies")
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        return reply(messages, tools) if callable(reply) else reply


class FunctionLLM:
    """A model whose every reply comes from one function of the conversation."""

    def __init__(self, fn: Callable[[Sequence[ChatMessage], Sequence[ToolSpec]], Awaitable[Completion] | Completion],
                 *, name: str = "function") -> None:
        self.fn = fn
        self.name = name
        self.calls = 0

    async def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], *,
                       tool_choice: str | None = None) -> Completion:
        """Whatever the function says."""
        self.calls += 1
        result = self.fn(messages, tools)
        return await result if asyncio.iscoroutine(result) else result  # type: ignore[return-value]


class FailingLLM:
    """A provider that is down."""

    name = "failing"

    async def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], *,
                       tool_choice: str | None = None) -> Completion:
        """Always fails like an exhausted provider."""
        raise LLMError("provider unavailable (503)")


class ReplayLLM:
    """A recorded conversation with a real model, played back round by round (tests/fixtures/transcripts):
    the replies, and the errors the server gave, in the order the model gave them."""

    def __init__(self, rounds: Sequence[dict[str, Any]], *, name: str = "replayed") -> None:
        self.rounds = list(rounds)
        self.name = name
        self.seen: list[list[ChatMessage]] = []
        self.tools_offered: list[list[str]] = []

    async def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], *,
                       tool_choice: str | None = None) -> Completion:
        """The next recorded reply (or error)."""
        if len(self.seen) >= len(self.rounds):
            raise AssertionError(f"the loop asked for round {len(self.seen) + 1}; the model gave {len(self.rounds)}")
        recorded = self.rounds[len(self.seen)]
        self.seen.append(list(messages))
        self.tools_offered.append([t.name for t in tools])
        if "error" in recorded:
            raise LLMError(recorded["error"])
        return Completion.model_validate(recorded["reply"])
