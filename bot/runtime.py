"""What a command, the server or a job runs against: the database pool, the embedder and the answerer."""

from __future__ import annotations

from dataclasses import dataclass

from psycopg_pool import AsyncConnectionPool

from bot.answering import Answerer
from retrieval.embed import Embedder


@dataclass
class Runtime:
    """The open parts of the app; bot/app.py opens them from the settings."""

    pool: AsyncConnectionPool
    embedder: Embedder
    answerer: Answerer

    async def close(self) -> None:
        """Close the pool (the embedded server stops when the process exits)."""
        await self.pool.close()
