"""The lexical leg's index: BM25 postings kept current by ingestion (see 002_lexical.sql)."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from psycopg import AsyncConnection

from retrieval.analyzer import analyze
from retrieval.chunking import contextual_text
from retrieval.models import ParsedDocument

# Refresh stored impacts when the corpus' average chunk length moved this much (relative).
AVGDL_DRIFT = 0.10


async def index_chunks(conn: AsyncConnection, chunk_ids: Sequence[int], doc: ParsedDocument) -> None:
    """Write postings for freshly inserted chunks and update df and corpus statistics."""
    if not chunk_ids:
        return
    # The same contextual text as the embeddings: title and headings, then the chunk.
    counters = [Counter(analyze(contextual_text(doc.title, c.heading_path, c.text))) for c in doc.chunks]
    lengths = [sum(c.values()) for c in counters]
    vocabulary = sorted({t for c in counters for t in c})
    term_ids = await _term_ids(conn, vocabulary)
    stats = await (await conn.execute("SELECT k1, b, avgdl_indexed FROM lexical_stats")).fetchone()
    assert stats is not None
    k1, b, avgdl = stats
    lines = []
    for chunk_id, counts, length in zip(chunk_ids, counters, lengths):
        norm = k1 * (1 - b + b * length / avgdl)
        for term, tf in counts.items():
            impact = tf * (k1 + 1) / (tf + norm)
            lines.append(f"{term_ids[term]}\t{chunk_id}\t{min(tf, 32767)}\t{impact:.6g}\n")
    # One text COPY buffer: far cheaper than a Python call per posting.
    async with conn.cursor().copy("COPY lexical_postings (term_id, chunk_id, tf, impact) FROM STDIN") as copy:
        await copy.write("".join(lines))
    await conn.execute(
        "UPDATE chunks SET term_count = u.n FROM unnest(%s::bigint[], %s::int[]) AS u(id, n)"
        " WHERE chunks.id = u.id",
        (list(chunk_ids), lengths),
    )
    df = Counter(t for c in counters for t in c)
    await _bump_df(conn, [term_ids[t] for t in vocabulary], [df[t] for t in vocabulary])
    await conn.execute(
        "UPDATE lexical_stats SET chunk_count = chunk_count + %s, term_total = term_total + %s",
        (len(chunk_ids), sum(lengths)),
    )


async def _term_ids(conn: AsyncConnection, terms: list[str]) -> dict[str, int]:
    # Sorted insert order keeps concurrent ingests from deadlocking on the dictionary.
    await conn.execute(
        "INSERT INTO lexical_terms (term) SELECT unnest(%s::text[]) ORDER BY 1 ON CONFLICT (term) DO NOTHING",
        (terms,),
    )
    cur = await conn.execute("SELECT term, id FROM lexical_terms WHERE term = ANY(%s)", (terms,))
    return dict(await cur.fetchall())


async def _bump_df(conn: AsyncConnection, term_ids: list[int], deltas: list[int]) -> None:
    order = sorted(range(len(term_ids)), key=lambda i: term_ids[i])
    await conn.execute(
        "UPDATE lexical_terms t SET df = t.df + u.d FROM unnest(%s::int[], %s::int[]) AS u(id, d)"
        " WHERE t.id = u.id",
        ([term_ids[i] for i in order], [deltas[i] for i in order]),
    )


async def unindex_documents(conn: AsyncConnection, document_ids: Sequence[int]) -> None:
    """Take a document's chunks out of df and corpus statistics (postings go by cascade)."""
    if not document_ids:
        return
    ids = list(document_ids)
    cur = await conn.execute(
        "SELECT p.term_id, count(*) FROM lexical_postings p JOIN chunks c ON c.id = p.chunk_id"
        " WHERE c.document_id = ANY(%s) GROUP BY p.term_id ORDER BY p.term_id",
        (ids,),
    )
    rows = await cur.fetchall()
    if rows:
        await _bump_df(conn, [r[0] for r in rows], [-int(r[1]) for r in rows])
    await conn.execute(
        "UPDATE lexical_stats SET chunk_count = chunk_count - s.n, term_total = term_total - s.t"
        " FROM (SELECT count(*) AS n, coalesce(sum(term_count), 0) AS t FROM chunks"
        " WHERE document_id = ANY(%s)) s",
        (ids,),
    )


async def refresh_impacts(conn: AsyncConnection, *, force: bool = False) -> bool:
    """Recompute stored impacts when avgdl drifted past AVGDL_DRIFT; True if it did."""
    row = await (
        await conn.execute(
            "SELECT chunk_count, term_total, avgdl_indexed FROM lexical_stats FOR UPDATE"
        )
    ).fetchone()
    assert row is not None
    count, total, indexed = row
    if not count:
        return False
    avgdl = total / count
    if not force and abs(avgdl - indexed) / indexed <= AVGDL_DRIFT:
        return False
    await conn.execute(
        "UPDATE lexical_postings p SET impact = p.tf * (s.k1 + 1) / (p.tf + s.k1 * (1 - s.b + s.b"
        " * c.term_count / %s)) FROM chunks c, lexical_stats s WHERE c.id = p.chunk_id",
        (avgdl,),
    )
    await conn.execute("UPDATE lexical_stats SET avgdl_indexed = %s", (avgdl,))
    return True


async def recount(conn: AsyncConnection) -> None:
    """Recompute df and corpus statistics from the postings (repairs any drift)."""
    await conn.execute(
        "UPDATE lexical_terms t SET df = coalesce(x.n, 0) FROM lexical_terms t2 LEFT JOIN"
        " (SELECT term_id, count(*) AS n FROM lexical_postings GROUP BY term_id) x"
        " ON x.term_id = t2.id WHERE t.id = t2.id AND t.df IS DISTINCT FROM coalesce(x.n, 0)"
    )
    await conn.execute(
        "UPDATE lexical_stats SET chunk_count = s.n, term_total = s.t FROM"
        " (SELECT count(*) AS n, coalesce(sum(term_count), 0) AS t FROM chunks) s"
    )
