"""The readers the tools use beside search: a chunk's parent section, a whole runbook, a document's
sections in order (each with the id of its first chunk, the id the tools cite), and chunk texts for
API responses."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from retrieval.access import Visibility
from retrieval.links import document_link

_SECTIONS_SQL = """
SELECT s.id, min(c.id) AS first_chunk, s.heading_path, s.text, s.token_count
FROM sections s JOIN chunks c ON c.section_id = s.id
JOIN documents d ON d.id = s.document_id JOIN sources src ON src.id = d.source_id
WHERE s.document_id = %(doc)s AND {visible}
GROUP BY s.id
ORDER BY s.position
"""
_PARENT_SQL = """
SELECT s.id, d.id, d.path, d.title, s.heading_path, s.text, s.token_count, src.name, src.base_url
FROM chunks c JOIN sections s ON s.id = c.section_id
JOIN documents d ON d.id = c.document_id JOIN sources src ON src.id = d.source_id
WHERE c.id = %(chunk)s AND {visible}
"""
# A path may omit the source root: "disk-full.md" finds "runbooks/disk-full.md" (compared as text,
# so `%` and `_` in it are not wildcards).
_RUNBOOK_SQL = """
SELECT d.id, d.path, d.title, src.name, d.metadata, d.body, d.updated_at, src.base_url
FROM documents d JOIN sources src ON src.id = d.source_id
WHERE {where} AND {visible}
ORDER BY length(d.path) LIMIT 1
"""
_BY_ID = "d.id = %(doc)s"
_BY_PATH = "(d.path = %(doc)s OR right(d.path, length(%(doc)s) + 1) = '/' || %(doc)s)"


def _visible(visibility: Visibility | None) -> sql.Composable:
    return visibility.clause() if visibility is not None else sql.SQL("true")


@dataclass(frozen=True)
class DocumentSection:
    """One section of a runbook with a chunk id that stands for it."""

    section_id: int
    first_chunk_id: int
    heading_path: tuple[str, ...]
    text: str
    token_count: int


async def document_sections(pool: AsyncConnectionPool, document_id: int,
                            visibility: Visibility | None = None) -> list[DocumentSection]:
    """The sections of a document that have chunks, in document order (none when it is not visible)."""
    query = sql.SQL(_SECTIONS_SQL).format(visible=_visible(visibility))
    async with pool.connection() as conn:
        cur = await conn.execute(query, {"doc": document_id})
        rows = await cur.fetchall()
    return [DocumentSection(sid, cid, tuple(h or ()), text, tokens) for sid, cid, h, text, tokens in rows]


async def chunk_texts(pool: AsyncConnectionPool, chunk_ids: list[int]) -> dict[int, str]:
    """The text of each chunk id that still exists."""
    if not chunk_ids:
        return {}
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT id, text FROM chunks WHERE id = ANY(%s)", (chunk_ids,))
        return {cid: text for cid, text in await cur.fetchall()}


@dataclass(frozen=True)
class SectionText:
    """A parent section, as the tools show it."""

    section_id: int
    document_id: int
    document_path: str
    document_title: str
    heading_path: tuple[str, ...]
    text: str
    token_count: int
    source: str = ""
    link: str | None = None  # from the source's base URL, when it has one


@dataclass(frozen=True)
class Runbook:
    """A whole document, as the tools show it."""

    document_id: int
    path: str
    title: str
    source: str
    metadata: dict[str, Any]
    body: str
    updated_at: datetime
    sections: list[tuple[int, tuple[str, ...]]]  # (section id, heading path)
    base_url: str | None = None  # of its source: links to its sections

    def link(self, heading: tuple[str, ...]) -> str | None:
        """A link to one of its sections, when its source has a base URL."""
        return document_link(self.base_url, self.path, heading)


async def fetch_parent_section(pool: AsyncConnectionPool, chunk_id: int,
                               visibility: Visibility | None = None) -> SectionText | None:
    """The parent section of a chunk (search small, read large), or None if unknown or not visible."""
    query = sql.SQL(_PARENT_SQL).format(visible=_visible(visibility))
    async with pool.connection() as conn:
        row = await (await conn.execute(query, {"chunk": chunk_id})).fetchone()
    if row is None:
        return None
    heading = tuple(row[4] or ())
    return SectionText(row[0], row[1], row[2], row[3], heading, row[5], row[6], source=row[7],
                       link=document_link(row[8], row[2], heading))


async def get_runbook(pool: AsyncConnectionPool, doc: int | str, visibility: Visibility | None = None) -> Runbook | None:
    """A whole runbook by document id or path (a path may omit the source root), or None if unknown
    or not visible."""
    where = _BY_ID if isinstance(doc, int) else _BY_PATH
    query = sql.SQL(_RUNBOOK_SQL).format(where=sql.SQL(where), visible=_visible(visibility))
    async with pool.connection() as conn:
        row = await (await conn.execute(query, {"doc": doc})).fetchone()
        if row is None:
            return None
        sections = await (
            await conn.execute("SELECT id, heading_path FROM sections WHERE document_id = %s ORDER BY position",
                               (row[0],))
        ).fetchall()
    return Runbook(document_id=row[0], path=row[1], title=row[2], source=row[3], metadata=row[4], body=row[5],
                   updated_at=row[6], sections=[(sid, tuple(h or ())) for sid, h in sections], base_url=row[7])
