"""`runbook-bot eval`: ingest a corpus into a throw-away database and measure retrieval."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from bot.app import ingest_options, make_embedder, open_runtime
from bot.settings import Settings
from retrieval import db
from retrieval.embed import CachedEmbedder
from bot.measure.evaluate import config_for, load_queries, record_run, report, run_queries
from retrieval.ingest import ingest
from retrieval.rerank import make_reranker
from retrieval.search_types import SearchConfig

log = logging.getLogger(__name__)


async def run_eval(
    settings: Settings, corpus: Path, queries_file: Path, *, compare: bool = False, record: bool = True,
    reranker: str | None = None,
) -> dict[str, Any]:
    """Fused metrics (and, with compare, BM25-only and dense-only) as one JSON-able dict.

    ``reranker`` is a cross-encoder model name or path; it re-scores every method's head.
    """
    queries = load_queries(queries_file)
    rerank = make_reranker(reranker)
    embedder = CachedEmbedder(make_embedder(settings), size=8192)
    methods = ["bm25", "dense", "fused"] if compare else ["fused"]
    results: dict[str, Any] = {}
    base = SearchConfig()
    with db.throwaway_server() as url:
        pool = await db.open_pool(url, min_size=1, max_size=4)
        try:
            summary = await ingest(pool, embedder, [corpus], ingest_options(settings, "eval"))
            print(f"ingested {len(summary.added)} documents, {summary.chunks_written} chunks"
                  f" ({len(summary.skipped)} skipped, {len(summary.failed)} failed)", file=sys.stderr)
            runs = {}
            for method in methods:
                config = config_for(method, base)
                outcomes = await run_queries(pool, embedder, queries, config, reranker=rerank)
                results[method] = report(outcomes)
                runs[method] = (config, outcomes)
        finally:
            await pool.close()
    if record:
        await _record(settings, corpus, queries_file, results, runs)
    out = dict(results["fused"])
    if compare:
        out["compare"] = {m: results[m] for m in methods}
    return out


async def _record(settings: Settings, corpus: Path, queries_file: Path,
                  results: dict[str, Any], runs: dict[str, Any]) -> None:
    try:
        runtime = await open_runtime(settings, embedder=_NoEmbedder())
    except db.DatabaseUnavailable as exc:
        print(f"warning: eval runs not recorded: {exc}", file=sys.stderr)
        return
    try:
        for method, (config, outcomes) in runs.items():
            run_id = await record_run(runtime.pool, corpus.resolve(), queries_file.resolve(),
                                      method, config, results[method], outcomes)
            print(f"recorded eval run {run_id} ({method})", file=sys.stderr)
    finally:
        await runtime.close()


class _NoEmbedder:
    """Recording needs the database only."""

    backend, model, dim = "none", "none", 1

    def embed(self, texts):  # type: ignore[no-untyped-def]
        raise RuntimeError("not used")
