"""Hybrid search: BM25 and dense candidates (candidates.py runs the SQL), fused and boosted here."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import time
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from typing import Any, Sequence

from psycopg_pool import AsyncConnectionPool

from retrieval import candidates, lexical, ranking
from retrieval.analyzer import analyze
from retrieval.chunking import contextual_text
from retrieval.confidence import assess, model_for
from retrieval.embed import Embedder, embed_query
from retrieval.feedback_model import FeedbackModel, apply_feedback
from retrieval.lexicon import expand
from retrieval.links import document_link
from retrieval.ranking import DocumentFeatures
from retrieval.search_types import (
    QueryKind, QueryMass, Reranker, ScoredChunk, SearchConfig, SearchFilters, SearchResult,
)

log = logging.getLogger(__name__)


_in_flight = 0  # searches in progress in this process (see fetch_candidates)


_ERRORISH = re.compile(
    r"(`[^`]+`|--?[a-z][\w-]*|\b[A-Z]{2,}[-_]?\d{2,}\b|\b[EO]\d{3,}\b|\bE[A-Z]{4,}\b|/[\w.-]+/|\b\d{3}\b|"
    r"\b\w+(?:Error|Exception)\b|\$ )"
)
_QUESTIONISH = re.compile(r"^\s*(why|how|what|when|should|can|is|does|explain)\b", re.IGNORECASE)


def classify_query(query: str) -> QueryKind:
    """Error strings and commands lean lexical; natural-language questions lean dense."""
    if _QUESTIONISH.search(query) and len(_ERRORISH.findall(query)) == 0:
        return "dense"
    if len(_ERRORISH.findall(query)) >= 1 and len(query.split()) <= 12:
        return "lexical"
    return "neutral"


def query_weights(query: str) -> tuple[list[str], list[float]]:
    """Query terms with weights from their (dampened) repetition in the query."""
    counts = Counter(analyze(query))
    terms = list(counts)
    return terms, [1.0 + math.log(counts[t]) for t in terms]


def plain_terms(query: str) -> list[str]:
    """Analyzed terms of a typed question's plain words: letters only, written as words are (disk,
    Disk, DISK), not parts of a name (KubePodCrashLooping, web-01, postgres_service). A question of
    more than TYPED_WORDS words is a pasted alert, full of label values: none of its words count."""
    if len(query.split()) > TYPED_WORDS:
        return []
    words = (w.strip(_PUNCTUATION) for w in query.split())
    plain = [w for w in words if w.isalpha() and (w.islower() or w.isupper() or w.istitle())]
    return sorted(set(analyze(" ".join(plain))))


_PUNCTUATION = ".,;:!?()[]{}\"'`<>*"
TYPED_WORDS = 12  # a question someone typed: every word of it was chosen


def candidate_params(
    query: str, filters: SearchFilters | None, config: SearchConfig, *, text_rank: int = candidates.ALL_TEXTS
) -> dict[str, Any]:
    """The candidates statement's parameters for a query, but its vector (None: set it to run the
    dense leg)."""
    terms, weights = query_weights(query)  # the dense leg too: its rows carry the query's idf mass
    unfiltered = filters is None or filters.is_empty()
    budget = lexical.query_budget(config.per_term, len(terms), filtered=not unfiltered)
    return {
        "terms": terms, "weights": weights, "vector": None, "per_term": config.per_term,
        "budget": budget, "max_block": budget // lexical.BLOCK_SIZE, "pool": config.pool,
        "candidates": int(config.pool * lexical.CANDIDATES_PER_POOL), "dense_pool": config.pool,
        "plain": plain_terms(query), "text_rank": text_rank,
    }


async def fetch_candidates(
    pool: AsyncConnectionPool,
    embedder: Embedder,
    query: str,
    filters: SearchFilters | None,
    config: SearchConfig,
    *,
    text_rank: int = candidates.ALL_TEXTS,
) -> tuple[list[ScoredChunk], QueryMass, dict[str, float]]:
    """Both legs' candidates (one statement, or one per leg at once); returns hits, the query's idf
    masses and timings. Only candidates within text_rank of a leg come with their text: the rest
    have text_loaded False (load_texts fetches it for the few that rank high after fusion)."""
    t0 = time.perf_counter()
    params = candidate_params(query, filters, config, text_rank=text_rank)
    timings: dict[str, float] = {}

    async def embedded() -> dict[str, Any]:
        t = time.perf_counter()
        vector = await embed_query(embedder, query)
        timings["embed"] = (time.perf_counter() - t) * 1000
        return {**params, "vector": vector}

    global _in_flight
    _in_flight += 1
    try:
        # Two statements at once only while no other search runs here: under concurrent searches
        # the cores are busy anyway, and one statement costs less (bench: 8 clients). The lexical
        # leg needs no vector: it starts while the query is embedded.
        if config.legs == "hybrid" and config.parallel_legs and _in_flight == 1:

            async def dense() -> list[tuple[Any, ...]] | None:
                # Off the critical path (the lexical leg takes longer): it ships all its texts,
                # so fewer hits need load_texts afterwards.
                return await candidates.rows(pool, "dense", filters, {**await embedded(), "text_rank": candidates.ALL_TEXTS})

            rows = candidates.merge_legs(*await asyncio.gather(candidates.rows(pool, "lexical", filters, params), dense()))
        else:
            legs = "both" if config.legs == "hybrid" else config.legs
            rows = await candidates.rows(pool, legs, filters, params if legs == "lexical" else await embedded())
    finally:
        _in_flight -= 1
    timings.setdefault("embed", 0.0)
    # With two legs at once the lexical statement runs during the embedding: "sql" is then the
    # wall time less the embedding, which understates it.
    timings["sql"] = (time.perf_counter() - t0) * 1000 - timings["embed"]
    if rows is None:  # no active index yet
        return [], QueryMass(), timings
    hits = [_hit(row, _metadata(row[8]), *_document(row[10], row[9], row[11])) for row in rows]
    mass = QueryMass()
    if rows:
        first = rows[0]
        mass = QueryMass(float(first[candidates.QUERY_IDF]), float(first[candidates.UNKNOWN_IDF]),
                         int(first[candidates.CHUNK_COUNT] or 0))
    return hits, mass, timings


@lru_cache(maxsize=16384)  # chunks' metadata recur across searches: decode each text once
def _metadata(text: str) -> dict[str, Any]:
    """Metadata from its JSON text; the dict is shared by every hit with that text (read-only)."""
    return json.loads(text)  # type: ignore[no-any-return]


@lru_cache(maxsize=16384)  # documents recur across searches: decode and digest each version once
def _document(title: str, path: str, metadata_text: str) -> tuple[dict[str, Any], DocumentFeatures]:
    """A document's metadata and the features the boosts read (shared by its hits, read-only)."""
    metadata = json.loads(metadata_text) or {}
    return metadata, DocumentFeatures.of(title, path, metadata)


def _hit(row: Sequence[Any], chunk_metadata: dict[str, Any], document_metadata: dict[str, Any],
         features: DocumentFeatures) -> ScoredChunk:
    (cid, did, sid, pos, heading, text, text_hash, tokens, _, path, title, _, updated,
     source, base_url, lrank, lscore, drank, dscore) = row[:19]
    return ScoredChunk(
        chunk_id=cid, document_id=did, section_id=sid, position=pos, document_path=path,
        document_title=title, source=source, heading_path=tuple(heading or ()), text=text or "",
        text_hash=text_hash, token_count=tokens, lexical_rank=lrank, text_loaded=text is not None,
        lexical_score=float(lscore) if lscore is not None else None, dense_rank=drank,
        dense_score=float(dscore) if dscore is not None else None, document_metadata=document_metadata,
        chunk_metadata=chunk_metadata or {}, updated_at=updated, link=document_link(base_url, path, heading),
        document_features=features,
    )


async def hybrid_search(
    pool: AsyncConnectionPool,
    embedder: Embedder,
    query: str,
    *,
    k: int = 5,
    filters: SearchFilters | None = None,
    config: SearchConfig | None = None,
    reranker: Reranker | None = None,
    token_budget: int | None = None,
    feedback: FeedbackModel | None = None,
    pinned: Sequence[str] = (),
) -> SearchResult:
    """Search runbooks: fused BM25 + dense candidates, boosted (also by engineers' votes when a
    feedback model is given), deduped, with a confidence. `pinned` documents (paths: the runbook an
    alert links to) come first, with their best chunks for the query."""
    config = config or SearchConfig()
    if feedback is not None and feedback.lexical_weight is not None:
        config = replace(config, lexical_weight=feedback.lexical_weight)
    asked, query = query, (expand(query) if config.rewrite_query else query)
    kind = classify_query(query)
    t0 = time.perf_counter()
    # The hits shown (merge_adjacent looks at twice k) and reranked need their text. The lexical
    # leg's top 2 x `shown` ship theirs with the candidates (the dense leg, off the critical path,
    # ships all); the few others fusion ranks up load after (~15% of searches at 100k chunks).
    shown = max(max(k, 1) * 2, config.rerank_depth if reranker is not None else 0)
    hits, mass, timings = await fetch_candidates(pool, embedder, query, filters, config, text_rank=2 * shown)
    ranking.fuse(hits, config, kind)
    ranking.apply_boosts(hits, query, config)
    if pinned:
        hits += await _pinned_candidates(pool, embedder, query, hits, pinned, filters, config, kind, 2 * shown)
    if feedback is not None and not feedback.empty:
        # The query vector again: the embedder caches it, so this costs a dictionary lookup.
        apply_feedback(hits, feedback, await embed_query(embedder, query))
    hits.sort(key=lambda h: (-h.score, h.chunk_id))
    hits = ranking.dedupe(hits)
    hits = await load_texts(pool, hits, shown)
    if reranker is not None and hits and config.rerank_depth > 0:
        t1 = time.perf_counter()
        hits = await _rerank(reranker, query, hits, config)
        timings["rerank"] = (time.perf_counter() - t1) * 1000
    model = model_for(getattr(embedder, "backend", ""), getattr(embedder, "model", ""))
    conf, features = assess(hits, query, mass.known, mass.unknown, mass.chunks, model)
    if hits and hits[0].document_path in pinned:  # the alert itself names the runbook
        conf = max(conf, LINKED_CONFIDENCE)
    closest = list(dict.fromkeys(h.document_title for h in hits))[:3]
    top = ranking.merge_adjacent(hits[: max(k, 1) * 2])[:k]
    if token_budget is not None:
        top = ranking.within_budget(top, token_budget)
    timings["total"] = (time.perf_counter() - t0) * 1000
    return SearchResult(
        query=asked, chunks=top, confidence=conf, confident=conf >= config.min_confidence,
        plausible=conf >= min(config.min_plausible, config.min_confidence),
        query_kind=kind, closest_titles=closest, timings_ms=timings, features=features,
    )


LINK_BOOST = 10.0  # far above any fused and boosted score: the alert's own runbook link outranks every match
LINKED_CONFIDENCE = 0.9
PINNED_HITS = 2


async def _pinned_candidates(
    pool: AsyncConnectionPool, embedder: Embedder, query: str, hits: list[ScoredChunk], pinned: Sequence[str],
    filters: SearchFilters | None, config: SearchConfig, kind: QueryKind, text_rank: int,
) -> list[ScoredChunk]:
    """Boost the pinned documents' hits to the top, in place; the candidates of pinned documents
    that the search did not reach (the query shares no words with them) are fetched and returned."""
    missing = tuple(p for p in pinned if p not in {h.document_path for h in hits})
    extra: list[ScoredChunk] = []
    if missing:
        only = replace(filters or SearchFilters(), paths=missing)
        extra, _, _ = await fetch_candidates(pool, embedder, query, only, config, text_rank=text_rank)
        ranking.fuse(extra, config, kind)
        ranking.apply_boosts(extra, query, config)
    boosted: dict[str, int] = {}
    # Pinned in order: the first (an engineers' correction) before the next (the alert's own link).
    rank = {path: len(pinned) - n for n, path in enumerate(pinned)}
    for h in sorted((h for h in (*hits, *extra) if h.document_path in pinned), key=lambda h: -h.score):
        if boosted.get(h.document_path, 0) < PINNED_HITS:  # its best chunks first, then the others' best
            boosted[h.document_path] = boosted.get(h.document_path, 0) + 1
            h.boosts["runbook_link"] = LINK_BOOST * rank[h.document_path]
            h.score += h.boosts["runbook_link"]
    return extra


async def load_texts(pool: AsyncConnectionPool, hits: list[ScoredChunk], head: int) -> list[ScoredChunk]:
    """The hits, with the text of the first `head` loaded where the candidates did not ship it; a
    chunk deleted since (an ingest in between) drops out."""
    missing = {h.chunk_id: h for h in hits[:head] if not h.text_loaded}
    if not missing:
        return hits
    for chunk_id, text in (await candidates.texts(pool, list(missing))).items():
        missing[chunk_id].text, missing[chunk_id].text_loaded = text, True
    return [h for h in hits[:head] if h.text_loaded] + hits[head:]


async def _rerank(
    reranker: Reranker, query: str, hits: list[ScoredChunk], config: SearchConfig
) -> list[ScoredChunk]:
    """Blend the reranker's scores into the head of the ranking; the tail keeps its order."""
    head, tail = hits[: config.rerank_depth], hits[config.rerank_depth :]
    texts = [contextual_text(h.document_title, h.heading_path, h.text) for h in head]
    try:
        scores = await asyncio.to_thread(reranker.score, query, texts)
        if len(scores) != len(head):
            raise ValueError(f"{len(scores)} scores for {len(head)} texts")
    except Exception:  # a broken reranker degrades search to the fused order, it does not stop it
        log.exception("reranking failed; keeping the fused order (query %r)", query[:200])
        return hits
    ranking.blend_rerank(head, scores, config.rerank_weight)
    head.sort(key=lambda h: (-h.score, h.chunk_id))
    return head + tail
