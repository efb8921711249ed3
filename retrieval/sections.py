"""A document's sections in order, each with the id of its first chunk (the id the tools cite)."""

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
