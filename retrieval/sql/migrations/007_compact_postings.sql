-- Compact BM25 postings (issue 3) and half-precision embeddings (issue 8).
--
-- One row per (term, chunk) cost ~100 bytes a posting with its three indexes, about ten times
-- pgvector's share of the disk. The postings now live in three compact pieces:
--
--   lexical_chunk_terms  the forward index, one row per chunk: its distinct term ids (sorted), their
--                        tfs and its length. The source of truth: df, deletes, impact refreshes and
--                        block rebuilds read it, and searches re-score their candidates with it.
--   lexical_blocks       the inverted index: per term, postings in impact order (highest first) cut
--                        into blocks of retrieval.lexical.BLOCK_SIZE; block 0 holds a term's best
--                        postings, so the top-N of a term is its first ceil(N / size) rows. Impacts
--                        are quantised to int2: round(impact / (k1 + 1) * 32767).
--   lexical_delta        postings written since the last compaction (one row each, small), read
--                        beside the blocks; retrieval.lexical.refresh_impacts merges it in.
--   lexical_tombstones   chunks deleted since the last compaction (their postings may still sit in
--                        blocks; searches skip them, compaction drops them).
--   lexical_postings     now a view: blocks and delta as one row per posting.
CREATE TABLE lexical_chunk_terms (
    chunk_id bigint PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    term_ids integer[] NOT NULL,     -- distinct, ascending
    tfs      smallint[] NOT NULL,    -- tf of term_ids[i]
    length   integer NOT NULL        -- terms in the chunk (= chunks.term_count)
);

CREATE TABLE lexical_blocks (
    term_id    integer NOT NULL,
    block_no   integer NOT NULL,     -- 0 = the term's highest impacts
    max_impact smallint NOT NULL,    -- = impacts[1]
    postings   smallint NOT NULL,    -- = cardinality(chunk_ids)
    chunk_ids  integer[] NOT NULL,   -- chunk ids must stay below 2^31
    impacts    smallint[] NOT NULL,  -- quantised, non-increasing
    -- The covering columns let a search order a term's blocks by upper bound from the index alone.
    PRIMARY KEY (term_id, block_no) INCLUDE (max_impact, postings)
);

CREATE TABLE lexical_delta (
    term_id  integer NOT NULL,
    chunk_id bigint NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    impact   real NOT NULL
);
CREATE INDEX lexical_delta_impact_idx ON lexical_delta (term_id, impact DESC) INCLUDE (chunk_id);
CREATE INDEX lexical_delta_chunk_idx ON lexical_delta (chunk_id);

CREATE TABLE lexical_tombstones (
    chunk_id bigint PRIMARY KEY,
    term_ids integer[] NOT NULL      -- the terms whose blocks still hold it
);

-- How many postings the blocks hold (tombstoned ones included): compaction thresholds.
ALTER TABLE lexical_stats ADD COLUMN block_postings bigint NOT NULL DEFAULT 0;

-- Existing postings: the forward index from the rows, and the rows into the delta (the next
-- compaction, at the end of the next ingest or reindex, builds the blocks).
INSERT INTO lexical_chunk_terms (chunk_id, term_ids, tfs, length)
SELECT p.chunk_id, array_agg(p.term_id ORDER BY p.term_id), array_agg(p.tf ORDER BY p.term_id), min(c.term_count)
FROM lexical_postings p JOIN chunks c ON c.id = p.chunk_id GROUP BY p.chunk_id;
INSERT INTO lexical_delta (term_id, chunk_id, impact) SELECT term_id, chunk_id, impact FROM lexical_postings;
DROP TABLE lexical_postings;

-- The postings as searches see them, one row each (blocks and delta, tombstones left out), for
-- checks and tools: filtered on term_id it reads that term's blocks only.
CREATE VIEW lexical_postings AS
SELECT b.term_id, u.chunk_id::bigint AS chunk_id, u.q * ((s.k1 + 1) / 32767) AS impact
FROM lexical_blocks b
CROSS JOIN LATERAL unnest(b.chunk_ids, b.impacts) AS u(chunk_id, q)
CROSS JOIN lexical_stats s
WHERE u.chunk_id::bigint NOT IN (SELECT chunk_id FROM lexical_tombstones)
UNION ALL
SELECT term_id, chunk_id, impact FROM lexical_delta;

-- Embeddings as halfvec: half the bytes of vector in the table and in HNSW, the same ranking
-- (WordLlama and MiniLM vectors lose nothing that matters at 16 bits). The HNSW index of each
-- live version is rebuilt on the halfvec expression retrieval/store.py creates.
DO $$
DECLARE v record;
BEGIN
    FOR v IN SELECT id FROM index_versions LOOP
        EXECUTE format('DROP INDEX IF EXISTS %I', 'chunk_embeddings_hnsw_v' || v.id);
    END LOOP;
END $$;
ALTER TABLE chunk_embeddings ALTER COLUMN embedding TYPE halfvec USING embedding::halfvec;
DO $$
DECLARE v record;
BEGIN
    FOR v IN SELECT id, dim FROM index_versions WHERE state <> 'retired' LOOP
        EXECUTE format(
            'CREATE INDEX %I ON chunk_embeddings USING hnsw ((embedding::halfvec(%s)) halfvec_cosine_ops)'
            ' WITH (m = 24, ef_construction = 128) WHERE version = %s',
            'chunk_embeddings_hnsw_v' || v.id, v.dim, v.id);
    END LOOP;
END $$;
