"""The LLM adapter: the only importer of litellm.

For now it provides hosted embeddings (the Embedder protocol of retrieval.embed); the chat
adapter for the agent loop joins it here.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from retrieval.embed import EmbedderUnavailable, normalise


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
        import litellm

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
