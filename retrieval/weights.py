"""Feedback weights in Postgres: recompute from the feedback table, store as a new active
version, load the active one (cached), and re-fit the fusion weight when enough votes exist."""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from typing import Any

import numpy as np
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from retrieval.embed import Embedder
from retrieval.feedback_model import Evidence, FeedbackModel, FeedbackParams, Key, Vote, build_model, capped_votes
from retrieval.search import hybrid_search
from retrieval.search_types import SearchConfig

LOCK_FEEDBACK = 7_310_002  # advisory lock held while a new version is written
LOCK_RECOMPUTE = 7_310_004  # advisory lock of the scheduled job: one replica recomputes
FIT_GRID = (0.5, 0.6, 0.7, 0.8, 0.9)

_VOTES = """
SELECT f.user_id, f.vote, f.updated_at, f.question, f.cited_keys
FROM feedback f
WHERE jsonb_array_length(f.cited_keys) > 0
ORDER BY f.id
"""


@dataclass(frozen=True)
class FitOptions:
    """When and how to re-fit the lexical/dense fusion weight from feedback."""

    min_answers: int = 30
    max_answers: int = 300
    min_gain: float = 0.02  # mean reciprocal-rank gain over the configured weight


async def load_votes(pool: AsyncConnectionPool) -> list[tuple[str, Vote]]:
    """Every vote with the keys its answer cited, and the question it answered."""
    async with pool.connection() as conn:
        rows = await (await conn.execute(_VOTES)).fetchall()
    out = []
    for user, vote, at, question, keys in rows:
        cited = tuple((k["path"], k["text_hash"]) for k in keys)
        out.append((question, Vote(user=user, vote=int(vote), at=at, keys=cited)))
    return out


async def recompute(
    pool: AsyncConnectionPool, embedder: Embedder, params: FeedbackParams | None = None, *,
    config: SearchConfig | None = None, fit: FitOptions | None = None, now: datetime | None = None,
) -> dict[str, Any]:
    """Build weights from all votes, store them as the new active version, return a summary."""
    params, config, fit = params or FeedbackParams(), config or SearchConfig(), fit or FitOptions()
    now = now or datetime.now(timezone.utc)
    t0 = time.perf_counter()
    votes = await load_votes(pool)
    questions = sorted({q for q, _ in votes})
    vectors = await asyncio.to_thread(embedder.embed, questions) if questions else np.zeros((0, 0))
    by_question = dict(zip(questions, vectors))
    model = build_model([replace(v, question_vector=by_question[q]) for q, v in votes], params, now)
    fitted = await fit_lexical_weight(pool, embedder, votes, config, fit)
    model.lexical_weight = fitted["lexical_weight"]
    version = await save(pool, model, votes_used=len(votes), fit=fitted)
    return {"version": version, "votes": len(votes), "chunks": len(model.chunk),
            "documents": len(model.document), "examples": len(model.example_keys),
            "lexical_weight": model.lexical_weight, "fit": fitted, "seconds": round(time.perf_counter() - t0, 2)}


async def fit_lexical_weight(
    pool: AsyncConnectionPool, embedder: Embedder, votes: list[tuple[str, Vote]], config: SearchConfig,
    fit: FitOptions,
) -> dict[str, Any]:
    """The fusion weight that ranks up-voted chunks highest and down-voted ones lowest, if
    there are enough voted answers and it beats the configured weight by a margin."""
    targets: dict[str, dict[Key, int]] = {}
    for question, vote in votes[-fit.max_answers * 4:]:
        for key in vote.keys:
            targets.setdefault(question, {})[key] = targets.get(question, {}).get(key, 0) + vote.vote
    if len(targets) < fit.min_answers:
        return {"lexical_weight": None, "reason": f"{len(targets)} voted questions < {fit.min_answers}"}
    scores: dict[float, float] = {}
    for weight in sorted({*FIT_GRID, config.lexical_weight}):
        trial = replace(config, lexical_weight=weight)
        total = 0.0
        for question, wanted in list(targets.items())[-fit.max_answers:]:
            result = await hybrid_search(pool, embedder, question, k=10, config=trial)
            ranks = {(h.document_path, h.text_hash): n for n, h in enumerate(result.chunks, start=1)}
            total += sum(np.sign(s) / ranks[k] for k, s in wanted.items() if k in ranks and s)
        scores[weight] = total / len(targets)
    best = max(scores, key=lambda w: (scores[w], -abs(w - config.lexical_weight)))
    gain = scores[best] - scores[config.lexical_weight]
    chosen = best if gain >= fit.min_gain else None
    return {"lexical_weight": chosen, "scores": {str(k): round(v, 4) for k, v in scores.items()},
            "gain": round(gain, 4), "questions": len(targets)}


async def save(pool: AsyncConnectionPool, model: FeedbackModel, *, votes_used: int, fit: dict[str, Any]) -> int:
    """Store a model as a new version and make it the active one (atomically)."""
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_FEEDBACK,))
        row = await (await conn.execute(
            "INSERT INTO feedback_weight_versions (params, votes_used, lexical_weight, fit)"
            " VALUES (%s, %s, %s, %s) RETURNING id",
            (Jsonb(asdict(model.params)), votes_used, model.lexical_weight, Jsonb(fit)),
        )).fetchone()
        assert row is not None
        version = int(row[0])
        async with conn.cursor().copy(
            "COPY feedback_chunk_weights (version, path, text_hash, up, down) FROM STDIN"
        ) as copy:
            for (path, text_hash), ev in model.chunk.items():
                await copy.write_row((version, path, text_hash, ev.up, ev.down))
        async with conn.cursor().copy(
            "COPY feedback_examples (version, path, text_hash, weight, question_vector) FROM STDIN"
        ) as copy:
            for key, weight, vector in zip(model.example_keys, model.example_weights, model.example_vectors):
                await copy.write_row((version, key[0], key[1], float(weight), [float(x) for x in vector]))
        await conn.execute("UPDATE feedback_weight_versions SET active = false WHERE active")
        await conn.execute("UPDATE feedback_weight_versions SET active = true WHERE id = %s", (version,))
    return version


async def load_active(pool: AsyncConnectionPool) -> FeedbackModel:
    """The active version as a model (an empty model when there is none)."""
    async with pool.connection() as conn:
        head = await (await conn.execute(
            "SELECT id, params, lexical_weight FROM feedback_weight_versions WHERE active")).fetchone()
        if head is None:
            return FeedbackModel()
        version, params, lexical_weight = head
        chunks = await (await conn.execute(
            "SELECT path, text_hash, up, down FROM feedback_chunk_weights WHERE version = %s", (version,))).fetchall()
        examples = await (await conn.execute(
            "SELECT path, text_hash, weight, question_vector FROM feedback_examples WHERE version = %s",
            (version,))).fetchall()
    model = FeedbackModel(params=FeedbackParams(**params), lexical_weight=lexical_weight, version=version)
    for path, text_hash, up, down in chunks:
        model.chunk[(path, text_hash)] = Evidence(up, down)
        doc = model.document.setdefault(path, Evidence())
        doc.up += up
        doc.down += down
    if examples:
        model.example_keys = [(p, h) for p, h, _, _ in examples]
        model.example_weights = np.asarray([w for _, _, w, _ in examples], dtype=np.float32)
        model.example_vectors = np.asarray([v for _, _, _, v in examples], dtype=np.float32)
    return model


class WeightsCache:
    """The active model, re-read when a newer version is activated (checked at most every `ttl_s`)."""

    def __init__(self, pool: AsyncConnectionPool, ttl_s: float = 30.0) -> None:
        self._pool, self._ttl = pool, ttl_s
        self._model: FeedbackModel | None = None
        self._checked = 0.0

    async def current(self) -> FeedbackModel:
        """The active model (cheap when nothing changed)."""
        if self._model is not None and time.monotonic() - self._checked < self._ttl:
            return self._model
        async with self._pool.connection() as conn:
            row = await (await conn.execute("SELECT id FROM feedback_weight_versions WHERE active")).fetchone()
        active = row[0] if row else None
        if self._model is None or self._model.version != active:
            self._model = await load_active(self._pool)
        self._checked = time.monotonic()
        return self._model


async def recompute_if_needed(
    pool: AsyncConnectionPool, embedder: Embedder, **kwargs: Any,
) -> dict[str, Any]:
    """The scheduled job: recompute when votes changed since the active version, on one replica."""
    async with pool.connection() as conn:
        got = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (LOCK_RECOMPUTE,))).fetchone()
        if not (got and got[0]):
            return {"status": "skipped", "reason": "another replica is recomputing"}
        try:
            votes = await (await conn.execute("SELECT count(*), max(updated_at) FROM feedback")).fetchone()
            active = await (await conn.execute(
                "SELECT votes_used, created_at FROM feedback_weight_versions WHERE active")).fetchone()
            assert votes is not None
            if votes[0] == 0 and active is None or (
                    active is not None and votes[0] == active[0] and (votes[1] is None or votes[1] < active[1])):
                return {"status": "skipped", "reason": "no new votes"}
            return {"status": "ok", **await recompute(pool, embedder, **kwargs)}
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_RECOMPUTE,))


def explain(model: FeedbackModel, top: int = 10) -> dict[str, list[dict[str, Any]]]:
    """The strongest boosts and penalties, for `runbook-bot feedback show`."""
    rows = [{"path": k[0], "text_hash": k[1][:12], "up": round(ev.up, 2), "down": round(ev.down, 2),
             "helpful": round(ev.helpful(model.params), 3), "boost": round(model.global_boost(k), 4)}
            for k, ev in model.chunk.items()]
    rows.sort(key=lambda r: r["boost"])
    return {"boosts": rows[::-1][:top], "penalties": [r for r in rows[:top] if r["boost"] < 0]}


__all__ = ["FitOptions", "WeightsCache", "capped_votes", "explain", "load_active", "load_votes", "recompute",
           "recompute_if_needed", "save"]
