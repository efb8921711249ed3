"""`runbook-bot eval`: ingest a corpus into a throw-away database and measure retrieval."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from bot.app import make_embedder
from bot.measure.databases import bot_database, ingested_corpus
from bot.measure.evaluate import config_for, load_queries, record_run, report, run_queries
from bot.settings import Settings
from retrieval.embed import CachedEmbedder
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
    async with ingested_corpus(settings, embedder, corpus, "eval") as pool:
        runs = {}
        for method in methods:
            config = config_for(method, base)
            outcomes = await run_queries(pool, embedder, queries, config, reranker=rerank)
            results[method] = report(outcomes)
            runs[method] = (config, outcomes)
    if record:
        await _record(settings, corpus, queries_file, results, runs)
    out = dict(results["fused"])
    if compare:
        out["compare"] = {m: results[m] for m in methods}
    return out


async def _record(settings: Settings, corpus: Path, queries_file: Path,
                  results: dict[str, Any], runs: dict[str, Any]) -> None:
    async with bot_database(settings, "eval runs") as pool:
        if pool is None:
            return
        for method, (config, outcomes) in runs.items():
            run_id = await record_run(pool, corpus.resolve(), queries_file.resolve(),
                                      method, config, results[method], outcomes)
            print(f"recorded eval run {run_id} ({method})", file=sys.stderr)
