"""The lexical leg's index: compact BM25 postings kept current by ingestion (002, 007 migrations).

Three pieces (see 007_compact_postings.sql): a forward index (one row per chunk: term ids, tfs and
length; the source of truth), impact-ordered blocks of postings per term, and a small delta of
postings written since the last compaction, read beside the blocks. Deleted chunks are tombstoned
until a compaction drops them from the blocks. df lives in lexical_terms and is exact after every
write, so idf (applied at query time) always follows the corpus; impacts (the tf part) are
recomputed when the average chunk length drifts. Searches (candidates.sql) read the blocks with
the highest upper bounds first, up to a postings budget, and re-score the best candidates exactly
from the forward index.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from psycopg import AsyncConnection, sql

from retrieval.analyzer import analyze
from retrieval.chunking import contextual_text
from retrieval.models import ParsedDocument

# Refresh stored impacts when the corpus' average chunk length moved this much (relative).
AVGDL_DRIFT = 0.10
# Postings per block: 256 x (4 + 2) bytes keeps a block row under Postgres' 2 kB TOAST threshold,
# so a block is read from its heap page with no detour through a TOAST table.
BLOCK_SIZE = 256
# Searches read postings score-at-a-time (see candidates.sql): per_term postings per query term,
# for at most BUDGET_TERMS terms (a pasted alert has 30-60), spent on the blocks with the highest
# upper bounds whatever their term; CANDIDATES_PER_POOL x pool chunks are then re-scored exactly.
BUDGET_TERMS = 16
CANDIDATES_PER_POOL = 2
# With a metadata filter a search reads this many times as many postings: a selective filter may
# leave few allowed chunks among the best ones.
FILTER_EXPANSION = 8
# Impacts are stored as int2: round(impact / (k1 + 1) * IMPACT_LEVELS); impact < k1 + 1 always.
IMPACT_LEVELS = 32767
# End-of-ingest maintenance: merge the delta into the blocks once it holds this share of the
# postings (or tombstones this share of the chunks), rebuild everything from the forward index
# once it holds REBUILD_SHARE (a first ingest), and never let the delta pass DELTA_MAX postings.
COMPACT_SHARE = 0.02
REBUILD_SHARE = 0.5
DELTA_MAX = 2_000_000
# Memory for the sorts of a rebuild or compaction (one transaction, SET LOCAL).
MAINTENANCE_WORK_MEM = "256MB"


@dataclass(frozen=True)
class ChunkTerms:
    """A chunk's distinct term ids (ascending) with their tfs, and its length in terms."""

    chunk_id: int
    term_ids: list[int]
    tfs: list[int]
    length: int


def query_budget(per_term: int, terms: int, *, filtered: bool = False) -> int:
    """Postings a search reads: per_term for each query term up to BUDGET_TERMS (more if filtered)."""
    budget = per_term * max(1, min(terms, BUDGET_TERMS))
    return budget * FILTER_EXPANSION if filtered else budget


def chunk_counters(doc: ParsedDocument) -> list[Counter[str]]:
    """Each chunk's term counts, over the same contextual text as the embeddings."""
    return [Counter(analyze(contextual_text(doc.title, c.heading_path, c.text))) for c in doc.chunks]


async def index_chunks(conn: AsyncConnection, chunk_ids: Sequence[int], doc: ParsedDocument) -> None:
    """Write forward rows and delta postings for freshly inserted chunks; update df and stats.
    Analysis and formatting run in worker threads: for a big document they take seconds."""
    if not chunk_ids:
        return
    rows = await forward_rows(conn, chunk_ids, await asyncio.to_thread(chunk_counters, doc))
    stats = await (await conn.execute("SELECT k1, b, avgdl_indexed FROM lexical_stats")).fetchone()
    assert stats is not None
    lines = await asyncio.to_thread(_delta_lines, rows, *stats)
    # The delta before the statistics: every writer locks tombstones, delta, lexical_stats in order.
    async with conn.cursor().copy("COPY lexical_delta (term_id, chunk_id, impact) FROM STDIN") as copy:
        await copy.write(lines)
    await write_forward(conn, rows)


def _delta_lines(rows: Sequence[ChunkTerms], k1: float, b: float, avgdl: float) -> str:
    """COPY text of the rows' postings with their BM25 impacts."""
    lines = []
    for row in rows:
        norm = k1 * (1 - b + b * row.length / avgdl)
        lines.extend(f"{t}\t{row.chunk_id}\t{tf * (k1 + 1) / (tf + norm):.6g}\n" for t, tf in zip(row.term_ids, row.tfs))
    return "".join(lines)


async def forward_rows(
    conn: AsyncConnection, chunk_ids: Sequence[int], counters: Sequence[Counter[str]]
) -> list[ChunkTerms]:
    """Map chunks' term counts to term ids (creating new terms) as forward-index rows."""
    vocabulary = await asyncio.to_thread(lambda: sorted({t for c in counters for t in c}))
    term_ids = await _term_ids(conn, vocabulary)
    return await asyncio.to_thread(_forward_rows, chunk_ids, counters, term_ids)


def _forward_rows(
    chunk_ids: Sequence[int], counters: Sequence[Counter[str]], term_ids: dict[str, int]
) -> list[ChunkTerms]:
    rows = []
    for chunk_id, counts in zip(chunk_ids, counters):
        pairs = sorted((term_ids[t], min(n, 32767)) for t, n in counts.items())
        rows.append(ChunkTerms(chunk_id, [p[0] for p in pairs], [p[1] for p in pairs], sum(counts.values())))
    return rows


async def write_forward(conn: AsyncConnection, rows: Sequence[ChunkTerms]) -> None:
    """Store forward rows and chunk lengths; add to df and the corpus statistics (no postings)."""
    if not rows:
        return
    buffer, df = await asyncio.to_thread(_forward_copy, rows)
    async with conn.cursor().copy("COPY lexical_chunk_terms (chunk_id, term_ids, tfs, length) FROM STDIN") as copy:
        await copy.write(buffer)
    await conn.execute(
        "UPDATE chunks SET term_count = u.n FROM unnest(%s::bigint[], %s::int[]) AS u(id, n)"
        " WHERE chunks.id = u.id",
        ([r.chunk_id for r in rows], [r.length for r in rows]),
    )
    ids = sorted(df)
    await _bump_df(conn, ids, [df[t] for t in ids])
    await conn.execute(
        "UPDATE lexical_stats SET chunk_count = chunk_count + %s, term_total = term_total + %s",
        (len(rows), sum(r.length for r in rows)),
    )


def _forward_copy(rows: Sequence[ChunkTerms]) -> tuple[str, Counter[int]]:
    """COPY text of forward rows, and the document frequency each term gains."""
    buffer = "".join(
        f"{r.chunk_id}\t{{{','.join(map(str, r.term_ids))}}}\t{{{','.join(map(str, r.tfs))}}}\t{r.length}\n"
        for r in rows
    )
    return buffer, Counter(t for r in rows for t in r.term_ids)


async def _term_ids(conn: AsyncConnection, terms: list[str]) -> dict[str, int]:
    literal = await asyncio.to_thread(_array, terms)
    # Sorted insert order keeps concurrent ingests from deadlocking on the dictionary.
    await conn.execute(
        "INSERT INTO lexical_terms (term) SELECT unnest(%s::text[]) ORDER BY 1 ON CONFLICT (term) DO NOTHING",
        (literal,),
    )
    cur = await conn.execute("SELECT term, id FROM lexical_terms WHERE term = ANY(%s::text[])", (literal,))
    return dict(await cur.fetchall())


async def _bump_df(conn: AsyncConnection, term_ids: list[int], deltas: list[int]) -> None:
    order = sorted(range(len(term_ids)), key=lambda i: term_ids[i])
    ids, ds = await asyncio.to_thread(lambda: (_array([term_ids[i] for i in order]), _array([deltas[i] for i in order])))
    await conn.execute(
        "UPDATE lexical_terms t SET df = t.df + u.d FROM unnest(%s::int[], %s::int[]) AS u(id, d)"
        " WHERE t.id = u.id",
        (ids, ds),
    )


def _array(values: Sequence[str] | Sequence[int]) -> str:
    """A Postgres array literal, built in a worker thread: psycopg adapts a list element by element
    on the event loop, and a big document's vocabulary (tens of thousands of terms) takes a while."""
    if values and isinstance(values[0], str):
        quoted = ('"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values)
        return "{" + ",".join(quoted) + "}"
    return "{" + ",".join(map(str, values)) + "}"


async def unindex_documents(conn: AsyncConnection, document_ids: Sequence[int]) -> None:
    """Tombstone a document's chunks and take them out of df and the corpus statistics."""
    if not document_ids:
        return
    ids = list(document_ids)
    # Tombstones first: the lock order of every writer is tombstones, delta, lexical_stats.
    await conn.execute(
        "INSERT INTO lexical_tombstones (chunk_id, term_ids) SELECT f.chunk_id, f.term_ids"
        " FROM lexical_chunk_terms f JOIN chunks c ON c.id = f.chunk_id WHERE c.document_id = ANY(%s)"
        " ON CONFLICT (chunk_id) DO NOTHING",
        (ids,),
    )
    cur = await conn.execute(
        "SELECT u.term_id, count(*) FROM lexical_chunk_terms f JOIN chunks c ON c.id = f.chunk_id"
        " CROSS JOIN LATERAL unnest(f.term_ids) AS u(term_id)"
        " WHERE c.document_id = ANY(%s) GROUP BY u.term_id ORDER BY u.term_id",
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
    """Keep the blocks current (run in a transaction after ingesting); True if it did any work.

    Rebuilds every block from the forward index when avgdl drifted past AVGDL_DRIFT (impacts
    change), when forced, or when the delta is a large share of the postings; merges the delta
    and drops tombstoned postings once they pass COMPACT_SHARE; otherwise leaves the delta be.
    """
    await conn.execute("LOCK TABLE lexical_tombstones, lexical_delta IN SHARE ROW EXCLUSIVE MODE")
    row = await (
        await conn.execute(
            "SELECT chunk_count, term_total, avgdl_indexed, block_postings,"
            " (SELECT count(*) FROM lexical_delta), (SELECT count(*) FROM lexical_tombstones)"
            " FROM lexical_stats FOR UPDATE"
        )
    ).fetchone()
    assert row is not None
    count, total, indexed, in_blocks, delta, dead = row
    avgdl = total / count if count else indexed
    drifted = bool(count) and abs(avgdl - indexed) / indexed > AVGDL_DRIFT
    if force or drifted or (delta and delta >= REBUILD_SHARE * in_blocks):
        await rebuild(conn, avgdl=avgdl)
        return True
    if delta >= COMPACT_SHARE * in_blocks or dead >= COMPACT_SHARE * max(count, 1) or delta >= DELTA_MAX:
        await compact(conn)
        return True
    return False


# Blocks from a set of postings (term_id, chunk_id, q): one sort by term and impact, then slices.
_BLOCKS_SQL = """
INSERT INTO lexical_blocks (term_id, block_no, max_impact, postings, chunk_ids, impacts)
SELECT a.term_id, g.n, a.qs[g.n * {size} + 1], least({size}, cardinality(a.ids) - g.n * {size}),
       a.ids[g.n * {size} + 1 : (g.n + 1) * {size}], a.qs[g.n * {size} + 1 : (g.n + 1) * {size}]
FROM (
    SELECT term_id, array_agg(chunk_id ORDER BY q DESC, chunk_id) AS ids,
           array_agg(q ORDER BY q DESC, chunk_id) AS qs
    FROM ({source}) p
    GROUP BY term_id
) a
CROSS JOIN LATERAL generate_series(0, (cardinality(a.ids) - 1) / {size}) AS g(n)
"""

_QUANTISE = "round({impact} / (s.k1 + 1) * {levels})::smallint"


def _blocks_statement(source: str) -> sql.Composed:
    return sql.SQL(_BLOCKS_SQL).format(size=sql.Literal(BLOCK_SIZE), source=sql.SQL(source))  # type: ignore[arg-type]


async def rebuild(conn: AsyncConnection, *, avgdl: float | None = None) -> None:
    """Rebuild every block from the forward index with fresh impacts; empty delta and tombstones."""
    if avgdl is None:
        row = await (await conn.execute("SELECT chunk_count, term_total, avgdl_indexed FROM lexical_stats")).fetchone()
        assert row is not None
        avgdl = row[1] / row[0] if row[0] else row[2]
    await conn.execute("SELECT set_config('work_mem', %s, true)", (MAINTENANCE_WORK_MEM,))
    await conn.execute("DELETE FROM lexical_blocks")
    impact = "u.tf * (s.k1 + 1) / (u.tf + s.k1 * (1 - s.b + s.b * f.length / {avgdl}))".format(avgdl=float(avgdl))
    source = (
        "SELECT u.term_id, f.chunk_id::int AS chunk_id, "
        + _QUANTISE.format(impact=impact, levels=IMPACT_LEVELS)
        + " AS q FROM lexical_chunk_terms f CROSS JOIN lexical_stats s"
        " CROSS JOIN LATERAL unnest(f.term_ids, f.tfs) AS u(term_id, tf)"
    )
    await conn.execute(_blocks_statement(source))
    await conn.execute("DELETE FROM lexical_delta")
    await conn.execute("DELETE FROM lexical_tombstones")
    await conn.execute(
        "UPDATE lexical_stats SET avgdl_indexed = %s,"
        " block_postings = (SELECT coalesce(sum(df), 0) FROM lexical_terms)",
        (avgdl,),
    )


async def compact(conn: AsyncConnection) -> None:
    """Merge the delta into the blocks of the terms it touches and drop tombstoned postings."""
    await conn.execute("SELECT set_config('work_mem', %s, true)", (MAINTENANCE_WORK_MEM,))
    await conn.execute(
        "CREATE TEMP TABLE compact_dead ON COMMIT DROP AS SELECT chunk_id, term_ids FROM lexical_tombstones"
    )
    await conn.execute(
        "CREATE TEMP TABLE compact_terms ON COMMIT DROP AS SELECT DISTINCT term_id FROM lexical_delta"
        " UNION SELECT unnest(term_ids) FROM compact_dead"
    )
    await conn.execute("ANALYZE compact_terms")
    await conn.execute(
        "CREATE TEMP TABLE compact_postings ON COMMIT DROP AS"
        " SELECT b.term_id, u.chunk_id, u.q FROM lexical_blocks b JOIN compact_terms t ON t.term_id = b.term_id"
        " CROSS JOIN LATERAL unnest(b.chunk_ids, b.impacts) AS u(chunk_id, q)"
        " WHERE u.chunk_id::bigint NOT IN (SELECT chunk_id FROM compact_dead)"
        " UNION ALL SELECT d.term_id, d.chunk_id::int, "
        + _QUANTISE.format(impact="d.impact", levels=IMPACT_LEVELS)
        + " FROM lexical_delta d CROSS JOIN lexical_stats s"
    )
    gone = await (
        await conn.execute(
            "WITH gone AS (DELETE FROM lexical_blocks b USING compact_terms t WHERE b.term_id = t.term_id"
            " RETURNING cardinality(b.chunk_ids) AS n) SELECT coalesce(sum(n), 0) FROM gone"
        )
    ).fetchone()
    assert gone is not None
    await conn.execute(_blocks_statement("SELECT term_id, chunk_id, q FROM compact_postings"))
    await conn.execute("DELETE FROM lexical_delta")
    await conn.execute("DELETE FROM lexical_tombstones")
    await conn.execute(
        "UPDATE lexical_stats SET block_postings = block_postings - %s + (SELECT count(*) FROM compact_postings)",
        (int(gone[0]),),
    )


async def recount(conn: AsyncConnection) -> None:
    """Recompute df and corpus statistics from the forward index (repairs any drift)."""
    await conn.execute(
        "UPDATE lexical_terms t SET df = coalesce(x.n, 0) FROM lexical_terms t2 LEFT JOIN"
        " (SELECT u.term_id, count(*) AS n FROM lexical_chunk_terms f"
        " CROSS JOIN LATERAL unnest(f.term_ids) AS u(term_id) GROUP BY u.term_id) x"
        " ON x.term_id = t2.id WHERE t.id = t2.id AND t.df IS DISTINCT FROM coalesce(x.n, 0)"
    )
    await conn.execute(
        "UPDATE lexical_stats SET chunk_count = s.n, term_total = s.t FROM"
        " (SELECT count(*) AS n, coalesce(sum(term_count), 0) AS t FROM chunks) s"
    )
