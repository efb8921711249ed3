"""Offline proof that feedback helps: simulated engineers vote on answers to half of a labelled
query set (votes from ground truth, with noise), weights are recomputed from those votes through
the real tables, and recall@1 / MRR@10 are measured on the other, held-out half before and after.

The split is by alert (a query id without its `-desc` / `-alert` suffix), so a held-out query is
never a rewording of a voted one: what carries over is what recurs in real incidents, the same
runbooks being right (or wrong) for related alerts.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from typing import Any

from psycopg_pool import AsyncConnectionPool

from retrieval.embed import Embedder
from bot.measure.evaluate import Query
from bot.records.feedback import Vote as FeedbackVote
from bot.records.feedback import record_vote
from retrieval.feedback_model import FeedbackModel, FeedbackParams
from bot.answer import answer_citing
from bot.records.answers import record_answer
from retrieval.search import hybrid_search
from retrieval.search_types import SearchConfig
from retrieval.weights import FitOptions, load_active, recompute


@dataclass(frozen=True)
class ReplayOptions:
    """How the simulated engineers behave."""

    seed: int = 7
    voters: int = 3  # engineers who may react to each answer
    vote_probability: float = 0.7  # chance each of them votes at all
    wrong_vote_rate: float = 0.15  # chance a vote is the opposite of what ground truth says
    cited: int = 3  # chunks an answer cites (the top hits)
    rounds: int = 2  # each training question is asked this many times


def alert_group(query_id: str) -> str:
    """The alert a query belongs to: its id without the variant suffix."""
    return re.sub(r"-(desc|alert)$", "", query_id)


def split(queries: list[Query]) -> tuple[list[Query], list[Query]]:
    """Answerable queries split in two halves by a stable hash of their alert group."""
    train, held_out = [], []
    for q in queries:
        if not q.relevant:
            continue
        digest = hashlib.sha256(alert_group(q.id).encode()).digest()[0]
        (train if digest % 2 == 0 else held_out).append(q)
    return train, held_out


def _documents(paths: list[str]) -> list[str]:
    return list(dict.fromkeys(paths))


def metrics(ranked: list[tuple[Query, list[str]]]) -> dict[str, float]:
    """recall@1 and MRR@10 over ranked document paths."""
    r1 = mrr = 0.0
    for query, docs in ranked:
        relevant = set(query.relevant)
        r1 += 1.0 if docs[:1] and docs[0] in relevant else 0.0
        mrr += next((1.0 / n for n, d in enumerate(docs[:10], start=1) if d in relevant), 0.0)
    n = max(len(ranked), 1)
    return {"recall@1": round(r1 / n, 4), "mrr@10": round(mrr / n, 4)}


async def rank(
    pool: AsyncConnectionPool, embedder: Embedder, queries: list[Query], config: SearchConfig,
    feedback: FeedbackModel | None,
) -> list[tuple[Query, list[str]]]:
    """Each query's ranked documents."""
    out = []
    for q in queries:
        result = await hybrid_search(pool, embedder, q.text, k=10, config=config, feedback=feedback)
        out.append((q, _documents([h.document_path for h in result.chunks])))
    return out


async def simulate_votes(
    pool: AsyncConnectionPool, embedder: Embedder, train: list[Query], config: SearchConfig, options: ReplayOptions,
) -> int:
    """Answer each training query, store the answer, and let simulated engineers vote on it."""
    rng = random.Random(options.seed)
    votes = 0
    for round_no in range(options.rounds):
        for q in train:
            result = await hybrid_search(pool, embedder, q.text, k=options.cited, config=config)
            if not result.chunks:
                continue
            right = result.chunks[0].document_path in q.relevant
            cited = [h.chunk_id for h in result.chunks[: options.cited]]
            answered = answer_citing(q.text, cited, summary=f"replay {q.id}", confidence=result.confidence)
            answer_id = await record_answer(pool, answered, entry_point="replay")
            for voter in range(options.voters):
                if rng.random() > options.vote_probability:
                    continue
                sign = 1 if right else -1
                if rng.random() < options.wrong_vote_rate:
                    sign = -sign
                await record_vote(pool, FeedbackVote(platform="replay", channel="replay", message_ts=f"{answer_id}",
                                                     user_id=f"engineer-{voter}-{round_no % 2}", answer_id=answer_id,
                                                     vote=sign))
                votes += 1
    return votes


async def replay(
    pool: AsyncConnectionPool, embedder: Embedder, queries: list[Query], *,
    options: ReplayOptions | None = None, params: FeedbackParams | None = None, config: SearchConfig | None = None,
) -> dict[str, Any]:
    """Before/after figures on held-out queries (and, for reference, on the voted ones)."""
    options, config = options or ReplayOptions(), config or SearchConfig()
    train, held_out = split(queries)
    before = await rank(pool, embedder, held_out, config, None)
    before_train = await rank(pool, embedder, train, config, None)
    votes = await simulate_votes(pool, embedder, train, config, options)
    summary = await recompute(pool, embedder, params, config=config, fit=FitOptions())
    model = await load_active(pool)
    after = await rank(pool, embedder, held_out, config, model)
    after_train = await rank(pool, embedder, train, config, model)
    return {
        "before": metrics(before), "after": metrics(after), "held_out_queries": len(held_out),
        "train_queries": len(train), "votes": votes, "wrong_vote_rate": options.wrong_vote_rate,
        "voted_queries": {"before": metrics(before_train), "after": metrics(after_train)},
        "weights": {k: summary[k] for k in ("version", "chunks", "documents", "examples", "lexical_weight")},
    }
