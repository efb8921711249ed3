"""Rebuild the vector index from Postgres alone (chunk text is the source), then swap it in."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from retrieval import lexical, store
from retrieval.db import LOCK_INDEX
from retrieval.embed import Embedder
from retrieval.chunking import contextual_text


async def reindex(pool: AsyncConnectionPool, embedder: Embedder, *, batch: int = 256) -> dict[str, Any]:
    """Embed every chunk into a new index version, build its HNSW index, make it active."""
    started = time.perf_counter()
    async with pool.connection() as guard:
        await guard.execute("SELECT pg_advisory_lock(%s)", (LOCK_INDEX,))
        try:
            async with pool.connection() as conn:
                version = await store.create_index_version(
                    conn, embedder.backend, embedder.model, embedder.dim
                )
            count = await _embed_all(pool, embedder, version.id, batch)
            t_index = time.perf_counter()
            async with pool.connection() as conn:
                await store.create_hnsw_index(conn, version)
            index_s = time.perf_counter() - t_index
            retired = await _swap(pool, version)
            async with pool.connection() as conn, conn.transaction():
                await lexical.recount(conn)
                await lexical.refresh_impacts(conn, force=True)
        finally:
            await guard.execute("SELECT pg_advisory_unlock(%s)", (LOCK_INDEX,))
    return {
        "version": version.id, "backend": version.backend, "model": version.model,
        "dim": version.dim, "chunks": count, "retired_versions": retired,
        "hnsw_build_s": round(index_s, 3), "total_s": round(time.perf_counter() - started, 3),
    }


async def _embed_all(pool: AsyncConnectionPool, embedder: Embedder, version: int, batch: int) -> int:
    count, last_id = 0, 0
    while True:
        async with pool.connection() as conn:
            rows = await (
                await conn.execute(
                    "SELECT c.id, d.title, c.heading_path, c.text FROM chunks c"
                    " JOIN documents d ON d.id = c.document_id WHERE c.id > %s ORDER BY c.id LIMIT %s",
                    (last_id, batch),
                )
            ).fetchall()
            if not rows:
                return count
            texts = [contextual_text(title, heading or (), text) for _, title, heading, text in rows]
            vectors = await asyncio.to_thread(embedder.embed, texts)
            await store.copy_embeddings(conn, version, [r[0] for r in rows], np.asarray(vectors))
            await conn.commit()
        count += len(rows)
        last_id = rows[-1][0]


async def _swap(pool: AsyncConnectionPool, version: store.IndexVersion) -> list[int]:
    async with pool.connection() as conn:
        async with conn.transaction():
            old = [r[0] for r in await (await conn.execute(
                "UPDATE index_versions SET state = 'retired' WHERE state = 'active' RETURNING id"
            )).fetchall()]
            await conn.execute(
                "UPDATE index_versions SET state = 'active', built_at = now() WHERE id = %s",
                (version.id,),
            )
        for vid in old:
            await conn.execute("DELETE FROM chunk_embeddings WHERE version = %s", (vid,))
            await conn.execute(
                sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(store.hnsw_index_name(vid)))
            )
        await conn.commit()
    return old
