"""The SQL that writes and reads documents, sections, chunks and embeddings (one module, no ORM)."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Sequence

import numpy as np
from psycopg import AsyncConnection, sql
from psycopg_pool import AsyncConnectionPool
from psycopg.types.json import Jsonb

from retrieval.db import INDEX_BUILD_SETTINGS
from retrieval.models import ParsedDocument


class IndexMismatch(Exception):
    """The active vector index was built with another embedding model."""


@dataclass(frozen=True)
class IndexVersion:
    """An embedding model the vector index is (being) built with."""

    id: int
    backend: str
    model: str
    dim: int
    state: str


@dataclass(frozen=True)
class DocumentRow:
    """What ingestion needs to know of a stored document."""

    id: int
    path: str
    content_hash: str


def sha256(text: str | bytes) -> str:
    """Hex sha256 of text (UTF-8) or bytes."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def hnsw_index_name(version: int) -> str:
    """The name of a version's partial HNSW index."""
    return f"chunk_embeddings_hnsw_v{version}"


async def ensure_source(conn: AsyncConnection, name: str, kind: str, location: str) -> int:
    """Create or update a source and return its id."""
    row = await (
        await conn.execute(
            "INSERT INTO sources (name, kind, location) VALUES (%s, %s, %s) "
            "ON CONFLICT (name) DO UPDATE SET kind = EXCLUDED.kind, location = EXCLUDED.location "
            "RETURNING id",
            (name, kind, location),
        )
    ).fetchone()
    assert row is not None
    return int(row[0])


async def source_documents(conn: AsyncConnection, source_id: int) -> dict[str, DocumentRow]:
    """Every stored document of a source, by path."""
    cur = await conn.execute(
        "SELECT id, path, content_hash FROM documents WHERE source_id = %s", (source_id,)
    )
    return {r[1]: DocumentRow(r[0], r[1], r[2]) for r in await cur.fetchall()}


async def active_index(conn: AsyncConnection) -> IndexVersion | None:
    """The index version searches read, if any."""
    cur = await conn.execute(
        "SELECT id, backend, model, dim, state FROM index_versions WHERE state = 'active'"
    )
    row = await cur.fetchone()
    return IndexVersion(*row) if row else None


async def ensure_active_index(conn: AsyncConnection, backend: str, model: str, dim: int) -> IndexVersion:
    """Return the active index version, creating the first one for this model if none exists."""
    async with conn.transaction():
        await conn.execute("LOCK TABLE index_versions IN SHARE ROW EXCLUSIVE MODE")
        current = await active_index(conn)
        if current is None:
            current = await create_index_version(conn, backend, model, dim, state="active")
            await create_hnsw_index(conn, current)
    if (current.backend, current.model, current.dim) != (backend, model, dim):
        raise IndexMismatch(
            f"the vector index was built with {current.backend}/{current.model} ({current.dim} dims) "
            f"but the configured embedder is {backend}/{model} ({dim} dims); "
            "run `runbook-bot reindex` to rebuild it with the configured model"
        )
    return current


async def create_index_version(
    conn: AsyncConnection, backend: str, model: str, dim: int, *, state: str = "building"
) -> IndexVersion:
    """Insert a new index version row."""
    cur = await conn.execute(
        "INSERT INTO index_versions (backend, model, dim, state, built_at) "
        "VALUES (%s, %s, %s, %s, CASE WHEN %s = 'active' THEN now() END) "
        "RETURNING id, backend, model, dim, state",
        (backend, model, dim, state, state),
    )
    row = await cur.fetchone()
    assert row is not None
    return IndexVersion(*row)


async def create_hnsw_index(conn: AsyncConnection, version: IndexVersion) -> None:
    """Create the partial HNSW (cosine, halfvec) index of one version, with build memory set.

    m = 24 and ef_construction = 128 (pgvector's defaults are 16 and 64): runbook collections hold
    many near-copies of one text, and on such clusters the default graph loses recall (README,
    Performance at scale)."""
    statement = sql.SQL(
        "CREATE INDEX IF NOT EXISTS {name} ON chunk_embeddings "
        "USING hnsw ((embedding::halfvec({dim})) halfvec_cosine_ops) "
        "WITH (m = 24, ef_construction = 128) WHERE version = {version}"
    ).format(
        name=sql.Identifier(hnsw_index_name(version.id)),
        dim=sql.Literal(version.dim),
        version=sql.Literal(version.id),
    )
    async with conn.transaction():
        # The graph must fit in maintenance_work_mem or the build slows down many times over.
        for name, value in INDEX_BUILD_SETTINGS.items():
            await conn.execute("SELECT set_config(%s, %s, true)", (name, value))
        await conn.execute(statement)


# Rows per statement that writes or reads a document's sections, chunks or embeddings: psycopg
# builds parameter arrays and decodes vectors on the event loop, and a huge document's at once
# would hold it for a second.
ROWS_PER_STATEMENT = 256


async def cached_embeddings(
    conn: AsyncConnection, version: int, embed_hashes: Sequence[str]
) -> dict[str, np.ndarray]:
    """Embeddings already stored for these embed hashes (the embedding cache), read in slices:
    the vectors are decoded on the event loop."""
    wanted = sorted(set(embed_hashes))
    found: dict[str, np.ndarray] = {}
    for i in range(0, len(wanted), ROWS_PER_STATEMENT):
        cur = await conn.execute(
            "SELECT DISTINCT ON (c.embed_hash) c.embed_hash, e.embedding "
            "FROM chunks c JOIN chunk_embeddings e ON e.chunk_id = c.id AND e.version = %s "
            "WHERE c.embed_hash = ANY(%s)",
            (version, wanted[i : i + ROWS_PER_STATEMENT]),
        )
        # pgvector hands back Vector objects (binary results) or numpy arrays (text results).
        found.update((h, np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v, dtype=np.float32))
                     for h, v in await cur.fetchall())
    return found


async def lock_document(conn: AsyncConnection, source_id: int, path: str) -> str | None:
    """Take the per-document transaction lock; return the stored content hash, if any."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))", (f"{source_id}:{path}",)
    )
    cur = await conn.execute(
        "SELECT content_hash FROM documents WHERE source_id = %s AND path = %s",
        (source_id, path),
    )
    row = await cur.fetchone()
    return row[0] if row else None


async def upsert_document(
    conn: AsyncConnection,
    source_id: int,
    path: str,
    doc: ParsedDocument,
    *,
    content_hash: str,
    updated_at: datetime,
    source_commit: str | None,
) -> int:
    """Insert or replace a document row (its old sections stay until clear_document)."""
    cur = await conn.execute(
        "INSERT INTO documents (source_id, path, title, content_hash, metadata, body, token_count,"
        " source_commit, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (source_id, path) DO UPDATE SET title = EXCLUDED.title,"
        " content_hash = EXCLUDED.content_hash, metadata = EXCLUDED.metadata, body = EXCLUDED.body,"
        " token_count = EXCLUDED.token_count, source_commit = EXCLUDED.source_commit,"
        " updated_at = EXCLUDED.updated_at, ingested_at = now() RETURNING id",
        (
            source_id, path, doc.title, content_hash, Jsonb(doc.metadata), doc.text,
            sum(s.token_count for s in doc.sections), source_commit, updated_at,
        ),
    )
    row = await cur.fetchone()
    assert row is not None
    return int(row[0])


async def clear_document(conn: AsyncConnection, document_id: int) -> None:
    """Delete a document's sections, and with them its chunks and embeddings."""
    await conn.execute("DELETE FROM sections WHERE document_id = %s", (document_id,))


_INSERT_SECTIONS = (
    "INSERT INTO sections (document_id, position, heading_path, text, char_start, char_end,"
    " token_count) SELECT %s, u.position, string_to_array(u.heading, E'\\x1f'), u.text,"
    " u.char_start, u.char_end, u.token_count FROM unnest("
    "%s::int[], %s::text[], %s::text[], %s::int[], %s::int[], %s::int[])"
    " AS u(position, heading, text, char_start, char_end, token_count) RETURNING id, position"
)
_INSERT_CHUNKS = (
    "INSERT INTO chunks (document_id, section_id, position, heading_path, text, text_hash,"
    " embed_hash, char_start, char_end, token_count, metadata) SELECT %s, u.section_id,"
    " u.position, string_to_array(u.heading, E'\\x1f'), u.text, encode(sha256(convert_to(u.text,"
    " 'UTF8')), 'hex'), u.embed_hash, u.char_start, u.char_end, u.token_count, u.metadata"
    " FROM unnest(%s::bigint[], %s::int[], %s::text[], %s::text[], %s::text[], %s::int[],"
    " %s::int[], %s::int[], %s::jsonb[]) AS u(section_id, position, heading, text, embed_hash,"
    " char_start, char_end, token_count, metadata) RETURNING id, position"
)


async def insert_sections(conn: AsyncConnection, document_id: int, doc: ParsedDocument) -> list[int]:
    """Insert a document's parent sections; return their ids in section order."""
    by_position: dict[int, int] = {}
    for i in range(0, len(doc.sections), ROWS_PER_STATEMENT):
        s = doc.sections[i : i + ROWS_PER_STATEMENT]
        cur = await conn.execute(_INSERT_SECTIONS, (
            document_id,
            [x.index for x in s], [_join_path(x.heading_path) for x in s], [x.text for x in s],
            [x.char_start for x in s], [x.char_end for x in s], [x.token_count for x in s],
        ))
        by_position.update((pos, sid) for sid, pos in await cur.fetchall())
    return [by_position[x.index] for x in doc.sections]


async def insert_chunks(
    conn: AsyncConnection,
    document_id: int,
    doc: ParsedDocument,
    section_ids: list[int],
    embed_hashes: list[str],
) -> list[int]:
    """Insert a document's chunks; return their ids in chunk order."""
    by_position: dict[int, int] = {}
    for i in range(0, len(doc.chunks), ROWS_PER_STATEMENT):
        c, hashes = doc.chunks[i : i + ROWS_PER_STATEMENT], embed_hashes[i : i + ROWS_PER_STATEMENT]
        cur = await conn.execute(_INSERT_CHUNKS, (
            document_id,
            [section_ids[x.section_index] for x in c], [x.position for x in c],
            [_join_path(x.heading_path) for x in c], [x.text for x in c], hashes,
            [x.char_start for x in c], [x.char_end for x in c], [x.token_count for x in c],
            [Jsonb(x.metadata) for x in c],
        ))
        by_position.update((pos, cid) for cid, pos in await cur.fetchall())
    return [by_position[x.position] for x in doc.chunks]


def _join_path(path: Sequence[str]) -> str:
    # \x1f (unit separator) cannot appear in headings after parsing; empty path -> empty array.
    return "\x1f".join(p.replace("\x1f", " ") for p in path) if path else ""


async def copy_embeddings(
    conn: AsyncConnection, version: int, chunk_ids: Sequence[int], vectors: np.ndarray
) -> None:
    """Bulk-load embeddings with one COPY buffer (formatted in a worker thread: a big document's
    vectors take a while to print)."""
    rows = await asyncio.to_thread(_embedding_rows, version, chunk_ids, vectors)
    async with conn.cursor().copy("COPY chunk_embeddings (version, chunk_id, embedding) FROM STDIN") as copy:
        await copy.write(rows)


def _embedding_rows(version: int, chunk_ids: Sequence[int], vectors: np.ndarray) -> str:
    return "".join(
        f"{version}\t{chunk_id}\t[{','.join(f'{x:.7g}' for x in vector.tolist())}]\n"
        for chunk_id, vector in zip(chunk_ids, vectors)
    )


async def delete_documents(conn: AsyncConnection, document_ids: Sequence[int]) -> int:
    """Delete documents with their sections, chunks and embeddings."""
    if not document_ids:
        return 0
    cur = await conn.execute("DELETE FROM documents WHERE id = ANY(%s)", (list(document_ids),))
    return cur.rowcount


# An ingest run holds a session advisory lock (LOCK_RUN, run id) on the connection that started it
# until it ends, so a run whose process died (its session with it) is told from one still going.
LOCK_RUN = 0x52420003  # beside retrieval.db's LOCK_* keys; two-key form, so no clash with them
_RUN_KEY = "(%(run)s::bigint %% 2147483648)::int"
_ABANDONED = (
    "the ingest process ended (killed or crashed) before the run finished; "
    "documents it had written are kept, the rest are redone by the next ingest"
)


async def start_run(conn: AsyncConnection, source_id: int) -> int:
    """Record the start of an ingest run and take its lock on ``conn``: keep ``conn`` open until
    finish_run or fail_run (a run whose lock is gone counts as abandoned, see abandon_dead_runs)."""
    async with conn.transaction():
        row = await (
            await conn.execute("INSERT INTO ingest_runs (source_id) VALUES (%s) RETURNING id", (source_id,))
        ).fetchone()
        assert row is not None
        # Taken before the row is committed: no one can see the run without its lock.
        await conn.execute(f"SELECT pg_advisory_lock(%(lock)s, {_RUN_KEY})", {"lock": LOCK_RUN, "run": row[0]})
    return int(row[0])


async def finish_run(conn: AsyncConnection, run_id: int, counts: dict[str, int], details: dict[str, Any]) -> None:
    """Record the end of an ingest run with its counts and details; release its lock."""
    await conn.execute(
        "UPDATE ingest_runs SET finished_at = now(), added = %s, updated = %s, unchanged = %s,"
        " deleted = %s, skipped = %s, failed = %s, details = %s WHERE id = %s",
        (
            counts["added"], counts["updated"], counts["unchanged"], counts["deleted"],
            counts["skipped"], counts["failed"], Jsonb(details), run_id,
        ),
    )
    await conn.execute(
        "UPDATE sources SET last_ingested_at = now() WHERE id = (SELECT source_id FROM ingest_runs WHERE id = %s)",
        (run_id,),
    )
    await _release_run(conn, run_id)


async def fail_run(conn: AsyncConnection, run_id: int, error: str) -> None:
    """Record that an ingest run stopped on an error; release its lock."""
    await conn.execute(
        "UPDATE ingest_runs SET finished_at = now(), details = details || %s WHERE id = %s",
        (Jsonb({"status": "failed", "error": error}), run_id),
    )
    await _release_run(conn, run_id)


async def _release_run(conn: AsyncConnection, run_id: int) -> None:
    await conn.execute(f"SELECT pg_advisory_unlock(%(lock)s, {_RUN_KEY})", {"lock": LOCK_RUN, "run": run_id})


async def abandon_dead_runs(conn: AsyncConnection) -> list[int]:
    """Mark unfinished ingest runs whose lock is gone (their process died) as abandoned: finished
    now, details.status 'abandoned' with the reason. Returns their ids."""
    cur = await conn.execute(
        "UPDATE ingest_runs r SET finished_at = now(), details = r.details || %(details)s"
        " WHERE r.finished_at IS NULL AND NOT EXISTS (SELECT 1 FROM pg_locks l"
        "  WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.classid = %(lock)s::int::oid"
        "  AND l.objid::bigint = r.id %% 2147483648"
        "  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))"
        " RETURNING r.id",
        {"details": Jsonb({"status": "abandoned", "error": _ABANDONED}), "lock": LOCK_RUN},
    )
    return sorted(int(r[0]) for r in await cur.fetchall())


# Tables a search reads (their statistics are what analyze_if_changed is for).
SEARCH_TABLES = ("sources", "documents", "sections", "chunks", "chunk_embeddings", "index_versions",
                 "lexical_stats", "lexical_terms", "lexical_chunk_terms", "lexical_blocks", "lexical_delta",
                 "lexical_tombstones")


async def analyze_if_changed(pool: AsyncConnectionPool, changed: int, share: float = 0.1) -> bool:
    """ANALYZE the database when a run changed at least `share` of the chunks (a first ingest
    always). Without statistics the planner plans for empty tables: searches on a freshly ingested
    corpus were five to ten times slower until autovacuum came by, and analyzing only some tables
    was worse still (the search statement joins a dozen of them), so it is the whole database."""
    if changed <= 0:
        return False
    async with pool.connection() as conn:
        row = await (await conn.execute("SELECT chunk_count FROM lexical_stats")).fetchone()
        if row is not None and changed < share * row[0]:
            return False
        await conn.execute("ANALYZE")
    return True
