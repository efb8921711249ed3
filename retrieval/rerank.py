"""Rerankers: a cross-encoder backend for the `Reranker` protocol of retrieval.search.

A cross-encoder reads the query and a chunk together and scores their relevance, which is
slower but sharper than the two independent legs. `hybrid_search` asks it to score only the
head of the fused ranking and blends its score with the fused one (`SearchConfig.rerank_weight`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from retrieval.search_types import Reranker

_OFF = frozenset({"", "none", "off", "false", "0"})
_EXTRA_HINT = "pip install torch==2.13.0 'runbook-bot[transformers]'"


class RerankerUnavailable(Exception):
    """The reranker cannot be used (missing extra, unknown or unreadable model); the message says why."""


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder (the 'transformers' extra) scoring (query, text) pairs."""

    def __init__(
        self, model: str | Path, *, max_length: int = 512, batch_size: int = 16, device: str = "cpu"
    ) -> None:
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise RerankerUnavailable(
                f"the cross-encoder reranker needs the 'transformers' extra: {_EXTRA_HINT}"
            ) from exc
        try:
            self._model: Any = CrossEncoder(str(model), max_length=max_length, device=device)
        except Exception as exc:  # missing files, hub errors and bad configs come as many types
            raise RerankerUnavailable(f"cannot load cross-encoder model {str(model)!r}: {exc}") from exc
        self.model = str(model)
        self.batch_size = batch_size

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text (higher is better; the model's own scale)."""
        if not texts:
            return []
        scores = self._model.predict(
            [(query, text) for text in texts], batch_size=self.batch_size,
            show_progress_bar=False, convert_to_numpy=True,
        )
        return [float(s) for s in scores.reshape(len(texts), -1)[:, 0]]


def make_reranker(name: str | Path | None, **options: Any) -> Reranker | None:
    """The reranker for a model name or path; None (reranking off) for None, "" or "none"."""
    if name is None or str(name).strip().lower() in _OFF:
        return None
    return CrossEncoderReranker(str(name).strip(), **options)
