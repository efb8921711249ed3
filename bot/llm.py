"""The LLM adapter: the only importer of litellm.

`LLM` is the protocol the agent loop talks to (one async method); `LiteLLMChat` implements it for
any provider litellm knows, with retries, backoff, a fallback model and token/cost accounting.
`LiteLLMEmbedder` provides hosted embeddings for retrieval's Embedder protocol.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Any, Literal, Protocol, Sequence
from urllib.parse import urlparse

import numpy as np
from pydantic import BaseModel, Field

from retrieval.embed import EmbedderUnavailable, normalise

log = logging.getLogger(__name__)

# litellm fetches its model price list from GitHub at import unless told not to; the copy inside
# the wheel is what we want offline and in production alike.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# Tests switch this off so that nothing can reach a real provider; local stub servers still work.
ALLOW_REMOTE_MODEL_REQUESTS = True


def _litellm() -> Any:
    """litellm, imported on first use (it takes seconds) and told not to print to stdout."""
    import litellm

    litellm.suppress_debug_info = True  # else every error prints "Give Feedback" banners to stdout
    return litellm


class ToolCall(BaseModel):
    """A tool call as the model produced it; arguments stay raw JSON until validated."""

    id: str
    name: str
    arguments: str = "{}"


class ChatMessage(BaseModel):
    """One message of a conversation with the model."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None

    def wire(self) -> dict[str, Any]:
        """The OpenAI-style dict litellm sends."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out


class ToolSpec(BaseModel):
    """What the model is told about a tool: name, description and JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]

    def wire(self) -> dict[str, Any]:
        """The OpenAI-style tool declaration."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}


class Usage(BaseModel):
    """Tokens and cost of one or more model calls."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: "Usage") -> None:
        """Accumulate another call's usage."""
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd


class Completion(BaseModel):
    """The model's reply: text, tool calls, or both."""

    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    model: str
    usage: Usage = Field(default_factory=Usage)


class LLMError(Exception):
    """The provider failed (after retries and the fallback model)."""


class LLM(Protocol):
    """A chat model that may call tools."""

    name: str

    async def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], *,
                       tool_choice: str | None = None) -> Completion:
        """One round: the reply to the conversation so far (`tool_choice="required"`: a tool call)."""
        ...


# Errors that retrying the same model cannot fix: go straight to the fallback model.
_PERMANENT = ("AuthenticationError", "BadRequestError", "NotFoundError", "PermissionDeniedError",
              "ContextWindowExceededError", "ContentPolicyViolationError", "UnsupportedParamsError")


def _permanent(exc: Exception) -> bool:
    """An error the same request would get again: a permanent kind, or a server refusing what the model
    generated (llama.cpp: "The model produced output that does not match the expected ... format")."""
    return type(exc).__name__ in _PERMANENT or "does not match the expected" in str(exc)


class LiteLLMChat:
    """Any litellm provider (`gpt-4o-mini`, `anthropic/...`, `ollama/...`) behind the LLM protocol."""

    def __init__(
        self,
        model: str,
        *,
        fallback: str | None = None,
        temperature: float = 0.2,
        timeout: float = 30.0,
        retries: int = 2,
        backoff: float = 0.5,
        max_tokens: int = 1500,
        api_base: str | None = None,
        api_key: str | None = None,
        stop: Sequence[str] = (),
    ) -> None:
        self.model, self.fallback = model, fallback
        self.name = model
        self._retries, self._backoff = retries, backoff
        self._extra: dict[str, Any] = {"temperature": temperature, "timeout": timeout, "max_tokens": max_tokens}
        if api_base:
            self._extra["api_base"] = api_base
        if api_key:
            self._extra["api_key"] = api_key
        if stop:
            self._extra["stop"] = list(stop)
        self.total = Usage()
        self._last_ok: float | None = None
        self._last_error: tuple[float, str] | None = None

    def health(self, window_s: float = 300.0) -> str:
        """"ok ..." unless the latest call failed within the window (no call is made for this)."""
        err = self._last_error
        if err and (self._last_ok is None or err[0] > self._last_ok) and time.monotonic() - err[0] < window_s:
            return f"error: last call failed: {err[1][:200]}"
        return f"ok ({self.model})"

    async def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], *,
                       tool_choice: str | None = None) -> Completion:
        """Call the model, retrying transient errors with backoff, then the fallback model."""
        self._check_allowed()
        errors: list[str] = []
        for model in [m for m in (self.model, self.fallback) if m]:
            for attempt in range(self._retries + 1):
                try:
                    completion = await self._call(model, messages, tools, tool_choice)
                except Exception as exc:  # litellm raises many provider-specific types
                    errors.append(f"{model}: {type(exc).__name__}: {str(exc)[:200]}")
                    log.warning("llm call failed (%s, attempt %d): %s", model, attempt + 1, errors[-1])
                    if _permanent(exc) or attempt == self._retries:
                        break
                    await asyncio.sleep(min(self._backoff * 2**attempt, 8.0))
                    continue
                self.total.add(completion.usage)
                self._last_ok = time.monotonic()
                return completion
        self._last_error = (time.monotonic(), errors[-1] if errors else "no model configured")
        raise LLMError("; ".join(errors[-3:]) or "no model configured")

    def _check_allowed(self) -> None:
        host = urlparse(str(self._extra.get("api_base") or "")).hostname
        if not ALLOW_REMOTE_MODEL_REQUESTS and host not in ("127.0.0.1", "localhost", "::1"):
            raise LLMError("remote model requests are disabled (tests)")

    async def _call(self, model: str, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec],
                    tool_choice: str | None = None) -> Completion:
        litellm = _litellm()

        kwargs = dict(self._extra)
        if tools:
            kwargs["tools"] = [t.wire() for t in tools]
            if tool_choice:
                kwargs["tool_choice"] = tool_choice
                kwargs["parallel_tool_calls"] = False  # one call when one is required (small models write dozens)
                kwargs["drop_params"] = True  # a provider without these still answers
        # _skip_mcp_handler: litellm < 1.108 imports its MCP gateway (and the optional `mcp`
        # package) whenever tools are passed; our tools are plain functions, never MCP.
        response = await litellm.acompletion(
            model=model, messages=[m.wire() for m in messages], num_retries=0, _skip_mcp_handler=True, **kwargs
        )
        message = response.choices[0].message
        calls = [
            ToolCall(id=c.id or f"call_{i}", name=c.function.name or "", arguments=c.function.arguments or "{}")
            for i, c in enumerate(message.tool_calls or [])
        ]
        return Completion(content=message.content or "", tool_calls=calls, model=model,
                          usage=_usage(litellm, response))


def _usage(litellm: Any, response: Any) -> Usage:
    usage = getattr(response, "usage", None)
    try:
        cost = float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:  # unknown model or local server: no price known
        cost = 0.0
    return Usage(
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cost_usd=cost,
    )


class LiteLLMEmbedder:
    """Embeddings from any provider litellm knows (`openai/text-embedding-3-small`, ...)."""

    backend = "litellm"

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        retries: int = 2,
        batch_size: int = 64,
    ) -> None:
        if not model:
            raise EmbedderUnavailable("EMBEDDING_BACKEND=litellm needs EMBEDDING_MODEL")
        self.model = model
        self._extra: dict[str, Any] = {"timeout": timeout}
        if api_base:
            self._extra["api_base"] = api_base
        if api_key:
            self._extra["api_key"] = api_key
        self._retries = retries
        self._batch = batch_size
        self.dim = int(self._call(["dimension probe"]).shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts through the provider, in batches, with retries."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._call(list(texts[i : i + self._batch])) for i in range(0, len(texts), self._batch)]
        return normalise(np.vstack(parts))

    def _call(self, texts: list[str]) -> np.ndarray:
        litellm = _litellm()

        last: Exception | None = None
        for attempt in range(self._retries + 1):
            try:
                response = litellm.embedding(model=self.model, input=texts, **self._extra)
                rows = sorted(response.data, key=lambda d: d["index"])
                return np.asarray([row["embedding"] for row in rows], dtype=np.float32)
            except Exception as exc:  # provider errors come as many litellm types
                last = exc
                time.sleep(min(0.5 * 2**attempt, 4.0))
        raise EmbedderUnavailable(f"embedding provider failed for {self.model}: {last}") from last
