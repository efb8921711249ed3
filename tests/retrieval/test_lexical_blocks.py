"""Compact postings against a real Postgres: blocks, delta, tombstones, compaction, exact BM25."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from retrieval import lexical
from retrieval.ingest import IngestOptions, ingest
from retrieval.search import fetch_candidates, query_weights
from retrieval.search_types import SearchConfig

QUERIES = ["redis maxmemory evictions", "pod crash looping OOMKilled exit code 137",
           "disk full /var/lib/docker no space left", "kafka consumer lag", "certificate expired x509"]


async def _rows(pool, query: str, *args):  # type: ignore[no-untyped-def]
    async with pool.connection() as conn:
        return await (await conn.execute(query, args)).fetchall()


async def _scalar(pool, query: str, *args):  # type: ignore[no-untyped-def]
    return (await _rows(pool, query, *args))[0][0]


async def _exact_bm25(pool, query: str) -> dict[int, float]:  # type: ignore[no-untyped-def]
    """BM25 computed in Python from the forward index: the reference the blocks must reproduce."""
    terms, weights = query_weights(query)
    k1, b, n, total = (await _rows(pool, "SELECT k1, b, chunk_count, term_total FROM lexical_stats"))[0]
    avgdl = total / n
    ids = dict(await _rows(pool, "SELECT term, id FROM lexical_terms WHERE term = ANY(%s) AND df > 0", terms))
    df = dict(await _rows(pool, "SELECT id, df FROM lexical_terms WHERE id = ANY(%s)", list(ids.values())))
    idf = {ids[t]: w * math.log(1 + (n - df[ids[t]] + 0.5) / (df[ids[t]] + 0.5)) for t, w in zip(terms, weights) if t in ids}
    scores: dict[int, float] = {}
    rows = await _rows(pool, "SELECT f.chunk_id, f.term_ids, f.tfs, c.term_count FROM lexical_chunk_terms f"
                             " JOIN chunks c ON c.id = f.chunk_id")
    for chunk_id, term_ids, tfs, length in rows:
        for term_id, tf in zip(term_ids, tfs):
            if term_id in idf:
                impact = tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avgdl))
                scores[chunk_id] = scores.get(chunk_id, 0.0) + idf[term_id] * impact
    return scores


async def _lexical(pool, embedder, query: str, per_term: int = 1000) -> dict[int, float]:  # type: ignore[no-untyped-def]
    hits, _, _ = await fetch_candidates(pool, embedder, query, None, SearchConfig(legs="lexical", per_term=per_term))
    return {h.chunk_id: h.lexical_score or 0.0 for h in hits}


async def test_first_ingest_builds_impact_ordered_blocks(pool, embedder, runbooks: Path) -> None:
    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    assert await _scalar(pool, "SELECT count(*) FROM lexical_delta") == 0, "a first ingest compacts everything"
    blocks = await _rows(pool, "SELECT term_id, block_no, max_impact, chunk_ids, impacts FROM lexical_blocks"
                               " ORDER BY term_id, block_no")
    assert blocks
    by_term: dict[int, list[int]] = {}
    for term_id, block_no, max_impact, chunk_ids, impacts in blocks:
        assert 0 < len(chunk_ids) == len(impacts) <= lexical.BLOCK_SIZE and max_impact == impacts[0]
        assert block_no == len(by_term.get(term_id, [])) // lexical.BLOCK_SIZE
        by_term.setdefault(term_id, []).extend(impacts)
    assert all(q == sorted(q, reverse=True) for q in by_term.values()), "impacts descend across a term's blocks"
    postings = await _scalar(pool, "SELECT count(*) FROM lexical_postings")
    assert postings == await _scalar(pool, "SELECT sum(df) FROM lexical_terms") == await _scalar(
        pool, "SELECT sum(cardinality(term_ids)) FROM lexical_chunk_terms")
    assert await _scalar(pool, "SELECT block_postings FROM lexical_stats") == postings


async def test_blocks_reproduce_exact_bm25(pool, embedder, runbooks: Path) -> None:
    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    for query in QUERIES:
        exact = await _exact_bm25(pool, query)
        got = await _lexical(pool, embedder, query)
        top = sorted(exact, key=lambda c: -exact[c])[:10]
        assert [c for c in sorted(got, key=lambda c: -got[c])[:10]] == top, query
        for chunk_id in top:  # int2 impacts: a relative error well under 1e-3
            assert got[chunk_id] == pytest.approx(exact[chunk_id], rel=1e-3)


async def test_cut_off_reads_the_best_blocks_and_scores_exactly(pool, embedder, runbooks: Path) -> None:
    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    query = "kubectl get pods logs describe"
    full, cut = await _lexical(pool, embedder, query), await _lexical(pool, embedder, query, per_term=2)
    assert cut and set(cut) < set(full), "a tiny budget reads only the first block(s)"
    assert all(cut[c] == pytest.approx(full[c], rel=1e-9) for c in cut), "candidates are re-scored exactly"
    assert lexical.query_budget(1000, 50) == 1000 * lexical.BUDGET_TERMS
    assert lexical.query_budget(1000, 3, filtered=True) == 3000 * lexical.FILTER_EXPANSION


async def test_updates_go_to_the_delta_and_deletes_are_tombstoned(pool, embedder, runbooks: Path, monkeypatch) -> None:
    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    monkeypatch.setattr(lexical, "COMPACT_SHARE", 10.0)  # keep the delta and tombstones for a while
    monkeypatch.setattr(lexical, "REBUILD_SHARE", 10.0)
    disk = runbooks / "disk-full.md"
    disk.write_text(disk.read_text() + "\n\n## Appendix\n\nRun zorblaxian-cleanup on the node.\n")
    (runbooks / "redis-memory.md").unlink()
    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    assert await _scalar(pool, "SELECT count(*) FROM lexical_delta") > 0
    assert await _scalar(pool, "SELECT count(*) FROM lexical_tombstones") > 0
    fresh = await _lexical(pool, embedder, "zorblaxian")
    assert fresh, "postings in the delta are searchable at once"
    before = {q: await _lexical(pool, embedder, q) for q in QUERIES}
    live = {r[0] for r in await _rows(pool, "SELECT id FROM chunks")}
    assert all(set(hits) <= live for hits in before.values()), "tombstoned chunks never come back"
    for query in QUERIES:  # the blocks plus delta still score exactly
        exact = await _exact_bm25(pool, query)
        assert set(sorted(before[query], key=lambda c: -before[query][c])[:5]) == set(sorted(exact, key=lambda c: -exact[c])[:5])

    async with pool.connection() as conn, conn.transaction():
        await lexical.compact(conn)
    assert await _scalar(pool, "SELECT count(*) FROM lexical_delta") == 0
    assert await _scalar(pool, "SELECT count(*) FROM lexical_tombstones") == 0
    assert await _scalar(pool, "SELECT block_postings FROM lexical_stats") == await _scalar(
        pool, "SELECT sum(cardinality(chunk_ids)) FROM lexical_blocks") == await _scalar(pool, "SELECT sum(df) FROM lexical_terms")
    for query in QUERIES:
        after = await _lexical(pool, embedder, query)
        assert set(after) == set(before[query])
        assert all(after[c] == pytest.approx(before[query][c], rel=1e-3) for c in after)


async def test_drifted_average_length_rebuilds_impacts(pool, embedder, runbooks: Path) -> None:
    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("UPDATE lexical_stats SET avgdl_indexed = avgdl_indexed * 2")
        assert await lexical.refresh_impacts(conn)
        assert not await lexical.refresh_impacts(conn), "nothing left to do"
    for query in QUERIES[:2]:
        exact = await _exact_bm25(pool, query)
        got = await _lexical(pool, embedder, query)
        assert all(got[c] == pytest.approx(exact[c], rel=1e-3) for c in got)


async def test_migration_moves_row_postings_and_vectors_into_the_compact_layout(server_url: str, embedder) -> None:
    """A database written by the one-row-per-posting code keeps its index through migration 007."""
    import psycopg

    from retrieval import db, store
    from tests.conftest import _with_db

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS rb_old_layout WITH (FORCE)")
        conn.execute("CREATE DATABASE rb_old_layout")
    url = _with_db(server_url, "rb_old_layout")
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE schema_migrations (version int PRIMARY KEY, name text NOT NULL,"
                         " applied_at timestamptz NOT NULL DEFAULT now())")
            for m in db.load_migrations():
                if m.version < 7:
                    conn.execute(m.sql.encode())
                    conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (m.version, m.name))
            vector = "[" + ",".join("0.5" if i < 4 else "0" for i in range(embedder.dim)) + "]"
            conn.execute(
                "INSERT INTO sources (name) VALUES ('old');"
                "INSERT INTO documents (source_id, path, title, content_hash, body, updated_at)"
                " VALUES (1, 'a.md', 'A', 'h', 'disk full', now());"
                "INSERT INTO sections (document_id, position, heading_path, text, char_start, char_end, token_count)"
                " VALUES (1, 0, '{A}', 'disk full', 0, 9, 2);"
                "INSERT INTO chunks (document_id, section_id, position, heading_path, text, text_hash, embed_hash,"
                " char_start, char_end, token_count, term_count) VALUES (1, 1, 0, '{A}', 'disk full', 't', 'e', 0, 9, 2, 3);"
                "INSERT INTO lexical_terms (term, df) VALUES ('disk', 1), ('full', 1), ('a', 1);"
                "UPDATE lexical_stats SET chunk_count = 1, term_total = 3, avgdl_indexed = 3;"
                "INSERT INTO lexical_postings VALUES (1, 1, 1, 1.0), (2, 1, 1, 1.0), (3, 1, 1, 1.0);"
                f"INSERT INTO index_versions (backend, model, dim, state) VALUES ('{embedder.backend}', '{embedder.model}',"
                f" {embedder.dim}, 'active');"
                f"INSERT INTO chunk_embeddings VALUES (1, 1, '{vector}');"
                f"CREATE INDEX chunk_embeddings_hnsw_v1 ON chunk_embeddings USING hnsw ((embedding::vector({embedder.dim}))"
                " vector_cosine_ops) WHERE version = 1"
            )
        assert [m.version for m in await db.upgrade(url)][0] == 7
        pool = await db.open_pool(url, min_size=1, max_size=2)
        try:
            assert await _rows(pool, "SELECT term_ids, tfs, length FROM lexical_chunk_terms") == [([1, 2, 3], [1, 1, 1], 3)]
            assert await _scalar(pool, "SELECT count(*) FROM lexical_postings") == 3, "the rows wait in the delta"
            assert "halfvec" in await _scalar(pool, "SELECT indexdef FROM pg_indexes WHERE indexname = %s",
                                              store.hnsw_index_name(1))
            # two terms, df 1 of 1 chunk, tf 1 at the average length: impact 1 each
            assert await _lexical(pool, embedder, "disk full") == pytest.approx({1: 2 * math.log(1 + 0.5 / 1.5)})
            async with pool.connection() as conn, conn.transaction():
                assert await lexical.refresh_impacts(conn), "the next ingest builds the blocks"
            assert await _scalar(pool, "SELECT count(*) FROM lexical_delta") == 0
            assert await _scalar(pool, "SELECT sum(postings) FROM lexical_blocks") == 3
            hits, _, _ = await fetch_candidates(pool, embedder, "disk full", None, SearchConfig())
            assert [h.chunk_id for h in hits] == [1] and hits[0].dense_rank == 1
        finally:
            await pool.close()
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS rb_old_layout WITH (FORCE)")
