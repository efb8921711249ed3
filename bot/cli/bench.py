"""`runbook-bot bench`: the command; the measurement (bot/measure) is imported when it runs."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path

import typer

from bot.settings import Settings
from retrieval import db

EVAL_DIR = Path(__file__).resolve().parents[3] / "shared" / "eval"


def bench_cmd(
    chunks: int = typer.Option(100_000, "--chunks", min=100, help="Synthetic chunks to build"),
    as_json: bool = typer.Option(False, "--json", help="Last stdout line: every figure as JSON"),
    queries: int = typer.Option(300, help="Latency queries per leg and client count"),
    quality_queries: int = typer.Option(50, help="Queries compared with exact BM25"),
    recall_queries: int = typer.Option(300, help="Queries compared with exact kNN (HNSW recall)"),
    naive_queries: int = typer.Option(30, help="Queries for the naive baseline (0: skip it)"),
    rows_baseline: bool = typer.Option(True, help="Also build and time the one-row-per-posting table"),
    real_sample: int = typer.Option(2000, help="Chunks also ingested through the real ingest path (0: skip)"),
    eval_dir: Path = typer.Option(EVAL_DIR, help="Folder of eval sets (*/corpus, */queries.jsonl)"),
    shared_buffers: str = typer.Option("1GB", help="The throw-away server's shared_buffers (see README)"),
) -> None:
    """Benchmark retrieval on a synthetic corpus of N chunks, in a throw-away database."""
    from bot.measure.bench import run_bench, summary
    from bot.measure.search_bench import BenchOptions

    settings = Settings()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    options = BenchOptions(chunks=chunks, queries=queries, quality_queries=quality_queries, recall_queries=recall_queries,
                           naive_queries=naive_queries, rows_baseline=rows_baseline, real_sample=real_sample,
                           server_settings={"shared_buffers": shared_buffers})
    try:
        result = asyncio.run(run_bench(settings, options, eval_dir))
    except (db.DatabaseUnavailable, FileNotFoundError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(summary(result))
    if as_json:
        typer.echo(json.dumps(result, separators=(",", ":")))
