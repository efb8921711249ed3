"""Wiring: the one place that turns Settings into a database pool, an embedder and services."""

from __future__ import annotations

from dataclasses import dataclass

from psycopg_pool import AsyncConnectionPool

from bot.settings import Settings
from retrieval import db
from retrieval.embed import CachedEmbedder, Embedder, local_embedder
from retrieval.ingest import IngestOptions


def make_embedder(settings: Settings) -> Embedder:
    """The configured embedding backend (hosted ones through bot.llm)."""
    if settings.embedding_backend == "litellm":
        from bot.llm import LiteLLMEmbedder

        key = settings.embedding_api_key.get_secret_value() if settings.embedding_api_key else None
        return LiteLLMEmbedder(
            settings.embedding_model or "", api_base=settings.embedding_api_base, api_key=key,
            batch_size=settings.embedding_batch_size,
        )
    return local_embedder(settings.embedding_backend, settings.embedding_model)


def ingest_options(settings: Settings, source: str | None = None) -> IngestOptions:
    """Ingestion knobs from settings."""
    return IngestOptions(
        source=source, max_file_bytes=settings.max_file_bytes,
        target_tokens=settings.chunk_target_tokens, max_tokens=settings.chunk_max_tokens,
        overlap_tokens=settings.chunk_overlap_tokens, embed_batch_size=settings.embedding_batch_size,
    )


def database_url(settings: Settings) -> str:
    """The external database, or the embedded one started on demand."""
    return db.resolve_url(settings.database_dsn(), settings.pgdata)


@dataclass
class Runtime:
    """What a command or the server needs: settings, a pool and an embedder."""

    settings: Settings
    pool: AsyncConnectionPool
    embedder: Embedder

    async def close(self) -> None:
        """Close the pool (the embedded server stops when the process exits)."""
        await self.pool.close()


async def open_runtime(settings: Settings, *, embedder: Embedder | None = None) -> Runtime:
    """Start or connect to the database, migrate, open the pool, load the embedder."""
    url = database_url(settings)
    pool = await db.open_pool(url, min_size=settings.db_pool_min, max_size=settings.db_pool_max)
    try:
        chosen = embedder or CachedEmbedder(make_embedder(settings))
    except Exception:
        await pool.close()
        raise
    return Runtime(settings=settings, pool=pool, embedder=chosen)
