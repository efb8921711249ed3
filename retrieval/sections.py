"""Sections and chunks by id: a document's sections in order (each with the id of its first chunk,
the id the tools cite), and chunk texts for API responses."""

from __future__ import annotations

from dataclasses import dataclass

from psycopg_pool import AsyncConnectionPool

_SECTIONS_SQL = """
SELECT s.id, min(c.id) AS first_chunk, s.heading_path, s.text, s.token_count
FROM sections s JOIN chunks c ON c.section_id = s.id
WHERE s.document_id = %(doc)s
GROUP BY s.id
ORDER BY s.position
"""


@dataclass(frozen=True)
class DocumentSection:
    """One section of a runbook with a chunk id that stands for it."""

    section_id: int
    first_chunk_id: int
    heading_path: tuple[str, ...]
    text: str
    token_count: int


async def document_sections(pool: AsyncConnectionPool, document_id: int) -> list[DocumentSection]:
    """The sections of a document that have chunks, in document order."""
    async with pool.connection() as conn:
        cur = await conn.execute(_SECTIONS_SQL, {"doc": document_id})
        rows = await cur.fetchall()
    return [DocumentSection(sid, cid, tuple(h or ()), text, tokens) for sid, cid, h, text, tokens in rows]


async def chunk_texts(pool: AsyncConnectionPool, chunk_ids: list[int]) -> dict[int, str]:
    """The text of each chunk id that still exists."""
    if not chunk_ids:
        return {}
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT id, text FROM chunks WHERE id = ANY(%s)", (chunk_ids,))
        return {cid: text for cid, text in await cur.fetchall()}
