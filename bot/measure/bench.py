"""Retrieval at N synthetic chunks in a throw-away database (issue 8); the command is bot/cli/bench.py."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from bot.app import make_embedder
from bot.measure import search_bench as bench
from bot.measure import synthetic
from bot.measure.search_bench import BenchOptions
from bot.settings import Settings
from retrieval import db


def _log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


async def run_bench(settings: Settings, options: BenchOptions, eval_dir: Path) -> dict[str, Any]:
    """Build the corpus, the indexes and the baselines, measure everything; one JSON-able dict."""
    corpora = sorted(p for p in eval_dir.glob("*/corpus") if p.is_dir())
    query_files = sorted(eval_dir.glob("*/queries.jsonl"))
    if not corpora or not query_files:
        raise FileNotFoundError(f"no eval sets (*/corpus, */queries.jsonl) under {eval_dir}")
    embedder = make_embedder(settings)
    base = synthetic.load_base(corpora)
    queries = synthetic.queries(query_files, options.queries, seed=1)
    _log(f"{len(base)} base runbooks, {len(queries)} queries, target {options.chunks} chunks")
    with db.throwaway_server(options.server_settings) as url:
        out = {"ingest_real_path": await _real_path(url, embedder, base, options)}
        pool = await db.open_pool(url, min_size=1, max_size=2 * max(options.clients) + 1)  # a fused search takes two
        try:
            out |= await _measure(pool, url, embedder, base, queries, options)
        finally:
            await pool.close()
    return out


async def _real_path(url: str, embedder: Any, base: list[synthetic.BaseDocument], options: BenchOptions) -> dict[str, Any]:
    if options.real_sample <= 0:
        return {}
    info = psycopg.conninfo.conninfo_to_dict(url)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier("bench_real_path")))
    pool = await db.open_pool(psycopg.conninfo.make_conninfo(**{**info, "dbname": "bench_real_path"}), max_size=2)
    try:
        with tempfile.TemporaryDirectory(prefix="runbook-bot-bench-") as folder:
            sample = await bench.real_path_sample(pool, embedder, synthetic.documents(base, seed=99),
                                                  options.real_sample, Path(folder))
    finally:
        await pool.close()
    _log(f"real ingest path: {sample}")
    return sample


async def _measure(pool: Any, url: str, embedder: Any, base: list[synthetic.BaseDocument],
                   queries: list[str], options: BenchOptions) -> dict[str, Any]:
    report, version = await bench.bulk_load(pool, embedder, synthetic.documents(base, seed=0), options, _log)
    stages = {k: round(v, 2) for k, v in report.seconds.items()}
    ingest_s = report.seconds["wall"]  # parse and embed overlap the writes, so the stages sum to more
    _log(f"loaded {report.chunks} chunks in {stages}; building indexes")
    indexes = await bench.build_indexes(pool, url, version)
    _log(f"indexes: {indexes}")
    sizes = await bench.storage(pool, version)
    legs = await bench.leg_latencies(pool, embedder, queries, options.clients, _log)
    few = queries[: options.quality_queries]
    recall = await bench.hnsw_recall(pool, embedder, queries[: options.recall_queries], version)
    recall["recall_queries"] = min(options.recall_queries, len(queries))
    _log(f"hnsw: {recall}")
    quality = await bench.lexical_quality(pool, embedder, few, options.per_terms)
    _log(f"lexical cut-off: {quality}")
    out: dict[str, Any] = {
        "chunks": report.chunks, "documents": report.documents, "skipped_documents": report.skipped,
        "ingest_chunks_per_s": round(report.chunks / max(ingest_s, 1e-9), 1), "ingest_seconds": stages,
        **indexes, "index_build_s": round(indexes["hnsw_build_s"] + indexes["lexical_build_s"], 2), **sizes,
        "lexical": {**legs["lexical"], **quality}, "dense": legs["dense"], "fused": legs["fused"],
        "fused_one_statement": legs["fused_one_statement"], "fused_filtered": legs["fused_filtered"], **recall,
    }
    if options.naive_queries > 0:
        naive = await bench.naive_baseline(pool, embedder, queries[: options.naive_queries], version)
        naive["fused_p95_ratio"] = round(naive["fused"]["p95_ms"] / max(legs["fused"]["p95_ms"], 1e-9), 1)
        out["naive"] = naive
        _log(f"naive: {naive}")
    if options.rows_baseline:
        out["rows_table"] = await bench.rows_baseline(pool, url, embedder, queries, sizes["postings"], few)
        _log(f"rows table: {out['rows_table']}")
    out["settings"] = await _settings(pool)
    return out


async def _settings(pool: Any) -> dict[str, str]:
    names = ("shared_buffers", "work_mem", "effective_cache_size", "hnsw.ef_search", "hnsw.iterative_scan", "jit")
    async with pool.connection() as conn:
        values = {n: (await (await conn.execute("SELECT current_setting(%s)", (n,))).fetchone())[0] for n in names}
    return {**values, **{f"index_build.{k}": v for k, v in db.INDEX_BUILD_SETTINGS.items()}}


def summary(result: dict[str, Any]) -> str:
    lines = [f"{result['chunks']} chunks, {result['documents']} documents, {result['postings']} postings,"
             f" {result['vocabulary']} terms",
             f"ingest {result['ingest_chunks_per_s']} chunks/s {result['ingest_seconds']}",
             f"hnsw build {result['hnsw_build_s']} s, lexical build {result['lexical_build_s']} s,"
             f" recall@10 {result['hnsw_recall_at_10']} (by id {result['hnsw_recall_at_10_by_id']})",
             f"bytes/posting {result['bytes_per_posting']}, bytes/chunk {result['bytes_per_chunk']}"]
    for leg in ("lexical", "dense", "fused", "fused_one_statement", "fused_filtered"):
        lines.append(f"{leg:8s} " + "  ".join(f"{k}: {v}" for k, v in result[leg].items() if k.startswith("clients_")))
    lines.append(f"top-10 overlap vs exact BM25 by per_term: {result['lexical']['top10_overlap_vs_exact']}")
    if "naive" in result:
        lines.append(f"naive fused p95 {result['naive']['fused']['p95_ms']} ms = {result['naive']['fused_p95_ratio']}x")
    if "rows_table" in result:
        rows = result["rows_table"]
        lines.append(f"rows table: {rows['bytes_per_posting']} bytes/posting, lexical p95 {rows['lexical']['p95_ms']} ms"
                     f" vs blocks {rows['blocks_lexical_same_queries']['p95_ms']} ms,"
                     f" top-10 overlap of its cut-off {rows['top10_overlap_vs_exact']}")
    return "\n".join(lines)
