"""The two databases a measurement uses: a throw-away one holding the corpus under test, and the
bot's own, where a run is recorded (when it is up)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from psycopg_pool import AsyncConnectionPool

from bot.app import ingest_options, open_runtime
from bot.settings import Settings
from retrieval import db
from retrieval.embed import Embedder
from retrieval.ingest import ingest


@asynccontextmanager
async def ingested_corpus(settings: Settings, embedder: Embedder, corpus: Path,
                          source: str) -> AsyncIterator[AsyncConnectionPool]:
    """A pool on a throw-away server holding `corpus` ingested as `source` (what was read, on stderr)."""
    with db.throwaway_server() as url:
        pool = await db.open_pool(url, min_size=1, max_size=4)
        try:
            summary = await ingest(pool, embedder, [corpus], ingest_options(settings, source))
            print(f"ingested {len(summary.added)} documents, {summary.chunks_written} chunks"
                  f" ({len(summary.skipped)} skipped, {len(summary.failed)} failed)", file=sys.stderr)
            yield pool
        finally:
            await pool.close()


@asynccontextmanager
async def bot_database(settings: Settings, what: str) -> AsyncIterator[AsyncConnectionPool | None]:
    """The bot's own database to record `what` in, or None (and a warning) when it is unavailable."""
    try:
        runtime = await open_runtime(settings, embedder=_NoEmbedder())
    except db.DatabaseUnavailable as exc:
        print(f"warning: {what} not recorded: {exc}", file=sys.stderr)
        runtime = None
    if runtime is None:
        yield None
        return
    try:
        yield runtime.pool
    finally:
        await runtime.close()


class _NoEmbedder:
    """Recording needs the database only."""

    backend, model, dim = "none", "none", 1

    def embed(self, texts):  # type: ignore[no-untyped-def]
        raise RuntimeError("not used")
