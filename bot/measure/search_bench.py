"""Retrieval at scale: load a synthetic corpus into a throw-away database and measure it.

The load is a documented bulk path that writes the same tables as `retrieval.ingest`, through the
same store and lexical functions, with three differences: many documents per transaction (no
per-document advisory lock: the database is fresh), the HNSW index dropped during the load and
built afterwards, and BM25 postings written as forward rows only, the blocks built once at the end
(`lexical.rebuild`) instead of going through the delta. The next batch is parsed and embedded in a
thread while the previous one is written, so the stage times add up to more than the wall time. A sample also goes through the real
`ingest()` in a second database, so both throughputs are reported.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from bot.measure import synthetic
from retrieval import lexical, store
from retrieval.chunking import contextual_text
from retrieval.embed import Embedder
from retrieval.ingest import IngestOptions, ingest
from retrieval.models import MalformedDocument, ParsedDocument, UnsupportedFormat
from retrieval.parsers import parse_document
from retrieval.search import fetch_candidates, hybrid_search, query_weights
from retrieval.search_types import SearchConfig, SearchFilters
from bot.measure.synthetic import SyntheticDocument

Log = Callable[[str], None]
EXACT = 10**9  # per_term that reads every posting: exact BM25


@dataclass(frozen=True)
class BenchOptions:
    """What to build and how hard to measure it."""

    chunks: int = 100_000
    queries: int = 300  # latency: queries per leg and client count
    clients: tuple[int, ...] = (1, 8)
    quality_queries: int = 50  # exact BM25 comparisons (each exact BM25 reads every posting)
    # exact kNN comparisons for HNSW recall: 50 queries moved it by ±0.02 between builds of one
    # corpus (0.948-0.992), 300 by ±0.003 (0.982-0.988)
    recall_queries: int = 300
    per_terms: tuple[int, ...] = (250, 500, 700, 1000, 2000)
    naive_queries: int = 30
    rows_baseline: bool = True  # also build the one-row-per-posting table of 002 and time it
    real_sample: int = 2000  # chunks through the real ingest() path
    batch_docs: int = 200
    # The throw-away server's settings (ALTER SYSTEM): the embedded server's default shared_buffers
    # (128 MB) holds neither the HNSW graph nor the postings at 100k chunks.
    server_settings: dict[str, str] = field(default_factory=lambda: {"shared_buffers": "1GB"})


@dataclass
class LoadReport:
    """What the bulk load wrote and where its time went."""

    documents: int = 0
    chunks: int = 0
    skipped: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    def timed(self, stage: str, seconds: float) -> None:
        """Add time spent in a stage."""
        self.seconds[stage] = self.seconds.get(stage, 0.0) + seconds


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / p99 (ms) of latencies."""
    if not values:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0}
    p50, p95, p99 = np.percentile(np.asarray(values), [50, 95, 99])
    return {"p50_ms": round(float(p50), 2), "p95_ms": round(float(p95), 2), "p99_ms": round(float(p99), 2)}


# --- loading -----------------------------------------------------------------------------------

def parsed_documents(stream: Iterator[SyntheticDocument], report: LoadReport) -> Iterator[tuple[str, bytes, ParsedDocument]]:
    """Parse generated documents with the real parser, timing generation and parsing apart."""
    while True:
        t0 = time.perf_counter()
        item = next(stream)
        t1 = time.perf_counter()
        report.timed("generate", t1 - t0)
        try:
            doc = parse_document(item.path, item.data)
        except (UnsupportedFormat, MalformedDocument):
            report.skipped += 1
            continue
        finally:
            report.timed("parse", time.perf_counter() - t1)
        if doc.chunks:
            yield item.path, item.data, doc


async def bulk_load(
    pool: AsyncConnectionPool, embedder: Embedder, stream: Iterator[SyntheticDocument],
    options: BenchOptions, log: Log,
) -> tuple[LoadReport, store.IndexVersion]:
    """Load options.chunks chunks (the last document trimmed to fit); see the module docstring."""
    report = LoadReport()
    async with pool.connection() as conn:
        source_id = await store.ensure_source(conn, "synthetic", "directory", "synthetic")
        version = await store.ensure_active_index(conn, embedder.backend, embedder.model, embedder.dim)
        await conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(store.hnsw_index_name(version.id))))
        await conn.commit()
    docs = parsed_documents(stream, report)
    next_log = 0
    pending: asyncio.Task[None] | None = None
    t0 = time.perf_counter()
    # Two stages in flight: the next batch is parsed and embedded in a thread while Postgres
    # writes the previous one (the server works on the other core).
    while report.chunks < options.chunks:
        prepared = await asyncio.to_thread(_prepare_batch, docs, embedder, options, report)
        if pending is not None:
            await pending
        pending = asyncio.create_task(_write_batch(pool, version.id, source_id, prepared, report))
        report.documents += len(prepared.batch)
        if report.chunks >= next_log:
            log(f"loaded {report.chunks} chunks, {report.documents} documents")
            next_log += max(options.chunks // 10, 1)
    if pending is not None:
        await pending
    report.seconds["wall"] = time.perf_counter() - t0
    return report, version


@dataclass
class _Prepared:
    batch: list[tuple[str, bytes, ParsedDocument]]
    vectors: Any
    counters: list[Any]


def _prepare_batch(docs: Iterator[tuple[str, bytes, ParsedDocument]], embedder: Embedder,
                   options: BenchOptions, report: LoadReport) -> _Prepared:
    """Parse (through the generator), embed and analyze one batch; runs in a worker thread."""
    batch = []
    while len(batch) < options.batch_docs and report.chunks < options.chunks:
        path, data, doc = next(docs)
        doc = replace(doc, chunks=doc.chunks[: options.chunks - report.chunks])
        batch.append((path, data, doc))
        report.chunks += len(doc.chunks)
    t0 = time.perf_counter()
    texts = [contextual_text(d.title, c.heading_path, c.text) for _, _, d in batch for c in d.chunks]
    vectors = embedder.embed(texts)
    t1 = time.perf_counter()
    counters = [c for _, _, d in batch for c in lexical.chunk_counters(d)]
    report.timed("embed", t1 - t0)
    report.timed("analyze", time.perf_counter() - t1)
    return _Prepared(batch, vectors, counters)


async def _write_batch(pool: AsyncConnectionPool, version: int, source_id: int, prepared: _Prepared,
                       report: LoadReport) -> None:
    t0 = time.perf_counter()
    now = datetime.now(timezone.utc)
    chunk_ids: list[int] = []
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL synchronous_commit = off")
        for path, data, doc in prepared.batch:
            document_id = await store.upsert_document(
                conn, source_id, path, doc, content_hash=store.sha256(data), updated_at=now, source_commit=None)
            section_ids = await store.insert_sections(conn, document_id, doc)
            hashes = [store.sha256(contextual_text(doc.title, c.heading_path, c.text)) for c in doc.chunks]
            chunk_ids += await store.insert_chunks(conn, document_id, doc, section_ids, hashes)
        await store.copy_embeddings(conn, version, chunk_ids, np.asarray(prepared.vectors))
        await lexical.write_forward(conn, await lexical.forward_rows(conn, chunk_ids, prepared.counters))
    report.timed("write", time.perf_counter() - t0)


async def build_indexes(pool: AsyncConnectionPool, url: str, version: store.IndexVersion) -> dict[str, float]:
    """Build the HNSW index and the postings blocks (each timed), then VACUUM ANALYZE and a
    CHECKPOINT: latencies are then measured on a settled database, not while the checkpointer
    writes out the load's dirty buffers (up to shared_buffers of them) beside the searches."""
    out = {}
    async with pool.connection() as conn:
        t0 = time.perf_counter()
        await store.create_hnsw_index(conn, version)
        out["hnsw_build_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        async with conn.transaction():
            await lexical.rebuild(conn)
        out["lexical_build_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("VACUUM ANALYZE")
        out["vacuum_analyze_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        await conn.execute("CHECKPOINT")
        out["checkpoint_s"] = time.perf_counter() - t0
    return {k: round(v, 2) for k, v in out.items()}


# --- measuring -----------------------------------------------------------------------------------

async def timed_runs(work: Callable[[str], Awaitable[Any]], queries: Sequence[str], clients: int) -> list[float]:
    """Run every query once, `clients` at a time; the latency of each in ms."""
    latencies: list[float] = []
    pending = iter(range(len(queries)))

    async def client() -> None:
        for i in pending:
            t0 = time.perf_counter()
            await work(queries[i])
            latencies.append((time.perf_counter() - t0) * 1000)

    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies


# Filtered searches ask for the documents of the service of this popularity rank (synthetic.py):
# ~4% of the corpus, so the filter is selective and the legs must look past unallowed chunks.
FILTER_SERVICE_RANK = 4


async def leg_latencies(
    pool: AsyncConnectionPool, embedder: Embedder, queries: Sequence[str], clients: Sequence[int], log: Log,
) -> dict[str, Any]:
    """p50/p95/p99 of the lexical leg, the dense leg and the fused search at each client count, and
    of the fused search under a service filter (with how many of its searches came back short)."""
    out: dict[str, Any] = {}
    service = SearchFilters(services=(synthetic.service_name(FILTER_SERVICE_RANK),))
    # "fused" is the bot's search (each leg on its own connection, at once, when alone);
    # "fused_one_statement" runs both legs in one statement, as concurrent searches do.
    variants = (("lexical", "lexical", False, None), ("dense", "dense", False, None),
                ("hybrid", "fused", True, None), ("hybrid", "fused_one_statement", False, None),
                ("hybrid", "fused_filtered", True, service))
    for leg, name, parallel, filters in variants:
        config = SearchConfig(legs=leg, parallel_legs=parallel)  # type: ignore[arg-type]
        short: list[str] = []

        async def work(q: str, config: SearchConfig = config, filters: SearchFilters | None = filters,
                       short: list[str] = short) -> None:
            result = await hybrid_search(pool, embedder, q, k=5, config=config, filters=filters)
            if len(result.chunks) < 5:
                short.append(q)

        await timed_runs(work, queries[:20], 1)  # warm-up
        out[name] = {}
        for n in clients:
            short.clear()
            t0 = time.perf_counter()
            runs = await timed_runs(work, queries, n)
            stats = {**percentiles(runs), "qps": round(len(runs) / (time.perf_counter() - t0), 1)}
            out[name].update(stats if n == clients[0] else {})
            out[name][f"clients_{n}"] = stats
            log(f"{name} at {n} client(s): {stats}")
        if filters is not None:
            out[name].update(filter={"services": list(filters.services),
                                     "expected_share": round(synthetic.service_share(FILTER_SERVICE_RANK), 4)},
                             short_results=len(short))
    return out


async def hnsw_recall(pool: AsyncConnectionPool, embedder: Embedder, queries: Sequence[str],
                      version: store.IndexVersion, depth: int = 100) -> dict[str, float]:
    """Recall@10 of the dense leg (HNSW, `depth` rows as the search reads them) against an exact scan.

    `hnsw_recall_at_10` is ann-benchmarks' definition: a returned neighbour counts when it is no
    farther than the true 10th (copies of one text have identical vectors, and any of them is as
    near as another); `hnsw_recall_at_10_by_id` is the stricter share of the exact ids.
    """
    by_id, by_distance = [], []
    order = sql.SQL("e.embedding::halfvec({d}) <=> %(v)s::halfvec({d})").format(d=sql.Literal(version.dim))
    statement = sql.SQL(
        "SELECT e.chunk_id, {order} FROM chunk_embeddings e WHERE e.version = {version} ORDER BY {key} LIMIT {n}")
    approx = statement.format(order=order, key=order, version=sql.Literal(version.id), n=sql.Literal(depth))
    exact = statement.format(order=order, key=sql.SQL("({}) + 0").format(order),  # not indexable: a scan
                             version=sql.Literal(version.id), n=sql.Literal(10))
    vectors = embedder.embed(list(queries))
    async with pool.connection() as conn:
        for vector in vectors:
            got = sorted(await (await conn.execute(approx, {"v": vector})).fetchall(), key=lambda r: r[1])[:10]
            truth = await (await conn.execute(exact, {"v": vector})).fetchall()
            by_id.append(len({r[0] for r in got} & {r[0] for r in truth}) / max(len(truth), 1))
            tenth = truth[-1][1] if truth else 0.0
            by_distance.append(sum(1 for r in got if r[1] <= tenth + 1e-6) / max(len(truth), 1))
    return {"hnsw_recall_at_10": _mean(by_distance), "hnsw_recall_at_10_by_id": _mean(by_id)}


async def lexical_quality(pool: AsyncConnectionPool, embedder: Embedder, queries: Sequence[str],
                          per_terms: Sequence[int]) -> dict[str, Any]:
    """Top-10 of the budgeted lexical leg against exact BM25, and its p95, for each per_term.

    `top10_overlap_vs_exact` counts a hit as found when its (exact, re-scored) BM25 score reaches
    the exact 10th score: copies of one text tie exactly and any of them is as right as another.
    `top10_id_overlap_vs_exact` is the stricter share of the same chunk ids, and
    `top10_score_ratio_vs_exact` the summed exact scores of the returned top 10 over those of the
    exact top 10 (near-copies of the best text score almost as high: the strict overlap misses them).
    """
    async def top(query: str, per_term: int) -> list[tuple[int, float]]:
        hits, _, _ = await fetch_candidates(pool, embedder, query, None, SearchConfig(legs="lexical", per_term=per_term))
        ranked = sorted(hits, key=lambda h: h.lexical_rank or 0)[:10]
        return [(h.chunk_id, h.lexical_score or 0.0) for h in ranked]

    exact = {q: await top(q, EXACT) for q in queries}
    by_score, by_id, ratio, p95 = {}, {}, {}, {}
    for per_term in [*per_terms, EXACT]:
        found: dict[str, list[tuple[int, float]]] = {}

        async def work(q: str, per_term: int = per_term) -> None:
            found[q] = await top(q, per_term)

        runs = await timed_runs(work, queries, 1)
        key = "exact" if per_term == EXACT else str(per_term)
        p95[key] = percentiles(runs)["p95_ms"]
        scored = [q for q in queries if exact[q]]
        by_score[key] = _mean([sum(1 for _, s in found[q] if s >= exact[q][-1][1] * (1 - 1e-9)) / len(exact[q])
                               for q in scored])
        by_id[key] = _mean([len({c for c, _ in found[q]} & {c for c, _ in exact[q]}) / len(exact[q]) for q in scored])
        ratio[key] = _mean([sum(s for _, s in found[q]) / sum(s for _, s in exact[q]) for q in scored
                            if sum(s for _, s in exact[q]) > 0])
    return {"top10_overlap_vs_exact": by_score, "top10_id_overlap_vs_exact": by_id,
            "top10_score_ratio_vs_exact": ratio, "p95_ms_by_per_term": p95,
            "budget_by_per_term": {str(p): lexical.query_budget(p, lexical.BUDGET_TERMS) for p in per_terms}}


def _mean(values: Sequence[float]) -> float:
    return round(float(np.mean(values)), 4) if values else 1.0


async def storage(pool: AsyncConnectionPool, version: store.IndexVersion) -> dict[str, Any]:
    """Bytes on disk of the lexical and dense structures, per posting and per chunk."""
    async with pool.connection() as conn:
        row = await (await conn.execute(
            "SELECT pg_total_relation_size('lexical_blocks'), pg_total_relation_size('lexical_chunk_terms'),"
            " pg_total_relation_size('lexical_terms'), pg_total_relation_size('lexical_delta'),"
            " pg_total_relation_size('chunk_embeddings'), pg_relation_size(%s::regclass),"
            " (SELECT block_postings FROM lexical_stats), (SELECT count(*) FROM chunks),"
            " (SELECT count(*) FROM lexical_terms), (SELECT count(*) FROM lexical_blocks)",
            (store.hnsw_index_name(version.id),))).fetchone()
    blocks, forward, terms, delta, dense, hnsw, postings, chunks, vocabulary, block_rows = row
    lexical_total = blocks + forward + terms + delta
    return {
        "postings": postings, "vocabulary": vocabulary, "block_rows": block_rows,
        "bytes": {"lexical_blocks": blocks, "lexical_chunk_terms": forward, "lexical_terms": terms,
                  "lexical_delta": delta, "chunk_embeddings_with_hnsw": dense, "hnsw_index": hnsw},
        "bytes_per_posting": {"blocks": round(blocks / max(postings, 1), 2),
                              "forward": round(forward / max(postings, 1), 2),
                              "lexical_total": round(lexical_total / max(postings, 1), 2)},
        "bytes_per_chunk": {"lexical_total": round(lexical_total / max(chunks, 1)),
                            "dense_total": round(dense / max(chunks, 1))},
    }


# --- baselines -----------------------------------------------------------------------------------

# The lexical leg as it was before the compact postings (002): one row per posting, read through
# the (term_id, impact DESC) index, then the same row fetch as candidates.sql.
_ROWS_LEXICAL = """
WITH stats AS (SELECT chunk_count FROM lexical_stats),
query_terms AS (
    SELECT t.id, qt.weight * ln(1 + (s.chunk_count - t.df + 0.5) / (t.df + 0.5)) AS idf
    FROM unnest(%(terms)s::text[], %(weights)s::real[]) AS qt(term, weight)
    JOIN lexical_terms t ON t.term = qt.term CROSS JOIN stats s WHERE t.df > 0
),
lexical AS (
    SELECT p.chunk_id, sum(q.idf * p.impact) AS score
    FROM query_terms q
    CROSS JOIN LATERAL (SELECT lp.chunk_id, lp.impact FROM bench_postings_rows lp WHERE lp.term_id = q.id
                        ORDER BY lp.impact DESC LIMIT %(per_term)s) p
    GROUP BY p.chunk_id ORDER BY score DESC LIMIT %(pool)s
)
SELECT c.id, c.text, d.path, l.score FROM lexical l JOIN chunks c ON c.id = l.chunk_id
JOIN documents d ON d.id = c.document_id ORDER BY l.score DESC, c.id
"""

_ROWS_BUILD = [
    "CREATE TABLE bench_postings_rows (term_id integer NOT NULL, chunk_id bigint NOT NULL,"
    " tf smallint NOT NULL, impact real NOT NULL)",
    "INSERT INTO bench_postings_rows SELECT u.term_id, f.chunk_id, u.tf, u.tf * (s.k1 + 1) / (u.tf + s.k1"
    " * (1 - s.b + s.b * c.term_count / s.avgdl_indexed)) FROM lexical_chunk_terms f JOIN chunks c ON c.id = f.chunk_id"
    " CROSS JOIN lexical_stats s CROSS JOIN LATERAL unnest(f.term_ids, f.tfs) AS u(term_id, tf)",
    "ALTER TABLE bench_postings_rows ADD PRIMARY KEY (term_id, chunk_id)",
    "CREATE INDEX ON bench_postings_rows (term_id, impact DESC) INCLUDE (chunk_id)",
    "CREATE INDEX ON bench_postings_rows (chunk_id)",
]


async def rows_baseline(pool: AsyncConnectionPool, url: str, embedder: Embedder, queries: Sequence[str],
                        postings: int, quality_queries: Sequence[str] = ()) -> dict[str, Any]:
    """The one-row-per-posting table of 002 built beside the blocks: size, build time, lexical p95,
    and how its cut-off (the top 1,000 postings of every term, partial sums) matches exact BM25."""
    t0 = time.perf_counter()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("SET maintenance_work_mem = '1GB'")
        for statement in _ROWS_BUILD:
            await conn.execute(statement)  # type: ignore[arg-type]
        await conn.execute("VACUUM ANALYZE bench_postings_rows")  # generous: index-only scans
        size = (await (await conn.execute("SELECT pg_total_relation_size('bench_postings_rows')")).fetchone())[0]  # type: ignore[index]
    build = time.perf_counter() - t0
    found: dict[str, list[int]] = {}

    async def rows(q: str) -> None:
        terms, weights = query_weights(q)
        async with pool.connection() as conn:
            cur = await conn.execute(_ROWS_LEXICAL, {"terms": terms, "weights": weights, "per_term": 1000, "pool": 100})  # type: ignore[arg-type]
            found[q] = [r[0] for r in (await cur.fetchall())[:10]]

    async def blocks(q: str) -> None:
        await fetch_candidates(pool, embedder, q, None, SearchConfig(legs="lexical"))

    await timed_runs(rows, queries[:20], 1)
    rows_runs = await timed_runs(rows, queries, 1)
    blocks_runs = await timed_runs(blocks, queries, 1)
    overlap = await _overlap_with_exact(pool, embedder, {q: found[q] for q in quality_queries})
    async with pool.connection() as conn:
        await conn.execute("DROP TABLE bench_postings_rows")
    return {"bytes": size, "bytes_per_posting": round(size / max(postings, 1), 2), "build_s": round(build, 2),
            "lexical": percentiles(rows_runs), "blocks_lexical_same_queries": percentiles(blocks_runs),
            "top10_overlap_vs_exact": overlap}


async def _overlap_with_exact(pool: AsyncConnectionPool, embedder: Embedder, found: dict[str, list[int]]) -> float:
    """Share of each query's found top-10 whose exact BM25 score reaches the exact 10th score."""
    shares = []
    for query, ids in found.items():
        hits, _, _ = await fetch_candidates(pool, embedder, query, None, SearchConfig(legs="lexical", per_term=EXACT))
        exact = sorted(hits, key=lambda h: h.lexical_rank or 0)[:10]
        if not exact:
            continue
        tenth = exact[-1].lexical_score or 0.0
        scores = await _exact_scores(pool, query, ids)
        shares.append(sum(1 for c in ids if scores.get(c, 0.0) >= tenth * (1 - 1e-9)) / len(exact))
    return _mean(shares)


async def _exact_scores(pool: AsyncConnectionPool, query: str, chunk_ids: list[int]) -> dict[int, float]:
    """Exact BM25 of some chunks for a query, from the forward index (as candidates.sql re-scores)."""
    terms, weights = query_weights(query)
    async with pool.connection() as conn:
        cur = await conn.execute(
            "WITH s AS (SELECT chunk_count, k1, b, avgdl_indexed FROM lexical_stats),"
            " q AS (SELECT t.id, qt.w * ln(1 + (s.chunk_count - t.df + 0.5) / (t.df + 0.5)) AS idf"
            " FROM unnest(%s::text[], %s::real[]) AS qt(term, w) JOIN lexical_terms t ON t.term = qt.term"
            " CROSS JOIN s WHERE t.df > 0)"
            " SELECT f.chunk_id, sum(q.idf * u.tf * (s.k1 + 1) / (u.tf + s.k1 * (1 - s.b + s.b * f.length / s.avgdl_indexed)))"
            " FROM lexical_chunk_terms f CROSS JOIN s CROSS JOIN LATERAL unnest(f.term_ids, f.tfs) AS u(term_id, tf)"
            " JOIN q ON q.id = u.term_id WHERE f.chunk_id = ANY(%s) GROUP BY f.chunk_id",
            (terms, weights, chunk_ids),
        )
        return {int(c): float(v) for c, v in await cur.fetchall()}


# A fused query as one would first write it: Postgres full-text search ranked by ts_rank over
# every matching row (GIN index, the query's terms OR-ed) and an exact vector scan.
_NAIVE_FUSED = """
WITH q AS (
    SELECT to_tsquery('simple', coalesce(string_agg(quote_literal(x), ' | '), '')) AS tsq
    FROM unnest(tsvector_to_array(to_tsvector('english', %(query)s))) AS x
),
lexical AS (
    SELECT f.chunk_id, ts_rank(f.tsv, q.tsq) AS score
    FROM bench_fts f, q WHERE f.tsv @@ q.tsq ORDER BY score DESC LIMIT 100
),
dense AS (
    SELECT e.chunk_id, (e.embedding::halfvec({dim}) <=> %(vector)s::halfvec({dim})) + 0 AS distance
    FROM chunk_embeddings e WHERE e.version = %(version)s ORDER BY 2 LIMIT 100
)
SELECT c.id, c.text, d.path, l.score, 1 - v.distance
FROM lexical l FULL JOIN dense v ON v.chunk_id = l.chunk_id
JOIN chunks c ON c.id = coalesce(l.chunk_id, v.chunk_id) JOIN documents d ON d.id = c.document_id
"""


async def naive_baseline(pool: AsyncConnectionPool, embedder: Embedder, queries: Sequence[str],
                         version: store.IndexVersion) -> dict[str, Any]:
    """Latency of the naive fused query (embedding included) and the build of its GIN index."""
    t0 = time.perf_counter()
    async with pool.connection() as conn:
        await conn.execute("CREATE TABLE bench_fts AS SELECT id AS chunk_id, to_tsvector('english', text) AS tsv FROM chunks")
        await conn.execute("CREATE INDEX ON bench_fts USING gin (tsv)")
        await conn.execute("ANALYZE bench_fts")
        await conn.commit()
    build = time.perf_counter() - t0
    statement = sql.SQL(_NAIVE_FUSED).format(dim=sql.Literal(version.dim))  # type: ignore[arg-type]

    async def work(q: str) -> None:
        vector = (await asyncio.to_thread(embedder.embed, [q]))[0]
        async with pool.connection() as conn:
            await (await conn.execute(statement, {"query": q, "vector": vector, "version": version.id})).fetchall()

    runs = await timed_runs(work, queries, 1)
    async with pool.connection() as conn:
        await conn.execute("DROP TABLE bench_fts")
    return {"fused": percentiles(runs), "fts_build_s": round(build, 2), "queries": len(runs)}


async def real_path_sample(pool: AsyncConnectionPool, embedder: Embedder, stream: Iterator[SyntheticDocument],
                           chunks: int, folder: Path) -> dict[str, Any]:
    """About `chunks` chunks through the real ingest() (files on disk, one transaction a document)."""
    written = 0
    while written < chunks:
        item = next(stream)
        try:
            written += len(parse_document(item.path, item.data).chunks)
        except (UnsupportedFormat, MalformedDocument):
            continue
        target = folder / item.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(item.data)
    t0 = time.perf_counter()
    summary = await ingest(pool, embedder, [folder], IngestOptions(source="sample"))
    elapsed = time.perf_counter() - t0
    return {"chunks": summary.chunks_written, "documents": len(summary.added),
            "chunks_per_s": round(summary.chunks_written / elapsed, 1),
            "seconds": {k: round(v, 2) for k, v in summary.stage_seconds.items()}}
