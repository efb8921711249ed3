"""Retrieval evaluation on a corpus with labelled queries (the ../shared/eval contract)."""

from __future__ import annotations

import json
import math
import statistics
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from psycopg_pool import AsyncConnectionPool
from psycopg.types.json import Jsonb

from retrieval.embed import Embedder
from retrieval.search import hybrid_search
from retrieval.search_types import Reranker, SearchConfig

T = TypeVar("T")

METRIC_KEYS = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")
METHODS = {"bm25": "lexical", "dense": "dense", "fused": "hybrid"}


@dataclass(frozen=True)
class Query:
    """One labelled query: relevant document paths relative to the corpus; [] = abstain."""

    id: str
    text: str
    relevant: tuple[str, ...]
    variant: str | None = None


@dataclass
class Outcome:
    """What the search returned for one query."""

    query: Query
    documents: list[str]
    chunk_ids: list[int]
    confidence: float
    abstained: bool
    latency_ms: float


def read_jsonl(path: Path, what: str, build: Callable[[dict[str, Any]], T]) -> list[T]:
    """One `build(object)` a non-blank line; a malformed line is an error naming it (`not a {what} object`)."""
    items = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(build(json.loads(line)))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{n}: not a {what} object: {exc}") from exc
    return items


def load_queries(path: Path) -> list[Query]:
    """Read queries.jsonl; a malformed line is an error naming the line."""
    return read_jsonl(path, "query", lambda raw: Query(str(raw["id"]), raw["query"], tuple(raw.get("relevant") or ()),
                                                       raw.get("variant")))


async def run_queries(
    pool: AsyncConnectionPool, embedder: Embedder, queries: Sequence[Query], config: SearchConfig,
    *, reranker: Reranker | None = None,
) -> list[Outcome]:
    """Run every query through hybrid_search, as the bot does, and rank documents."""
    outcomes = []
    for q in queries:
        t0 = time.perf_counter()
        result = await hybrid_search(pool, embedder, q.text, k=30, config=config, reranker=reranker)
        elapsed = (time.perf_counter() - t0) * 1000
        docs = list(dict.fromkeys(h.document_path for h in result.chunks))
        outcomes.append(Outcome(q, docs[:10], [h.chunk_id for h in result.chunks], result.confidence,
                                not result.confident, elapsed))
    return outcomes


def _ranking_metrics(o: Outcome) -> dict[str, float]:
    relevant = set(o.query.relevant)
    ranks = [i for i, d in enumerate(o.documents[:10], start=1) if d in relevant]
    metrics = {f"recall@{k}": len({d for d in o.documents[:k] if d in relevant}) / len(relevant) for k in (1, 5, 10)}
    metrics["mrr@10"] = 1.0 / ranks[0] if ranks else 0.0
    dcg = sum(1.0 / math.log2(r + 1) for r in ranks)
    ideal = sum(1.0 / math.log2(r + 1) for r in range(1, min(len(relevant), 10) + 1))
    metrics["ndcg@10"] = dcg / ideal if ideal else 0.0
    return metrics


def summarise(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Recall/MRR/nDCG over answerable queries, abstention P/R, latency percentiles."""
    answerable = [o for o in outcomes if o.query.relevant]
    per = [_ranking_metrics(o) for o in answerable]
    out: dict[str, Any] = {"queries": len(outcomes)}
    for key in METRIC_KEYS:
        out[key] = round(statistics.fmean(m[key] for m in per), 4) if per else 0.0
    predicted = [o for o in outcomes if o.abstained]
    should = [o for o in outcomes if not o.query.relevant]
    hits = sum(1 for o in predicted if not o.query.relevant)
    out["abstain_precision"] = round(hits / len(predicted), 4) if predicted else 0.0
    out["abstain_recall"] = round(hits / len(should), 4) if should else 0.0
    latencies = sorted(o.latency_ms for o in outcomes)
    out["p50_ms"] = round(_percentile(latencies, 50), 2)
    out["p95_ms"] = round(_percentile(latencies, 95), 2)
    return out


def _percentile(values: Sequence[float], pct: float) -> float:
    if not values:
        return 0.0
    index = min(len(values) - 1, max(0, math.ceil(pct / 100 * len(values)) - 1))
    return float(values[index])


def report(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The summary plus the same keys per variant."""
    out = summarise(outcomes)
    variants = sorted({o.query.variant for o in outcomes if o.query.variant})
    out["by_variant"] = {v: summarise([o for o in outcomes if o.query.variant == v]) for v in variants}
    return out


def config_for(method: str, base: SearchConfig) -> SearchConfig:
    """The search configuration of a compared method (bm25, dense, fused)."""
    return replace(base, legs=METHODS[method])  # type: ignore[arg-type]


async def record_run(
    pool: AsyncConnectionPool,
    corpus: Path,
    queries_file: Path,
    method: str,
    config: SearchConfig,
    metrics: dict[str, Any],
    outcomes: Sequence[Outcome],
) -> int:
    """Store a run and its per-query results in eval_runs / eval_results."""
    async with pool.connection() as conn, conn.transaction():
        row = await (await conn.execute(
            "INSERT INTO eval_runs (corpus, queries_file, method, config, metrics)"
            " VALUES (%s, %s, %s, %s, %s) RETURNING id",
            (str(corpus), str(queries_file), method, Jsonb(asdict(config)), Jsonb(metrics)),
        )).fetchone()
        run_id = int(row[0])  # type: ignore[index]
        async with conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO eval_results (run_id, query_id, variant, relevant, retrieved, chunk_ids,"
                " confidence, abstained, latency_ms) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [(run_id, o.query.id, o.query.variant, list(o.query.relevant), o.documents,
                  o.chunk_ids, o.confidence, o.abstained, o.latency_ms) for o in outcomes],
            )
    return run_id
