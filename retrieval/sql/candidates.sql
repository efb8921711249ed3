-- Hybrid candidates: BM25 and pgvector HNSW cosine (halfvec), both under the same metadata filter,
-- with each leg's rank and score. See retrieval/lexical.py for the postings layout.
--
-- retrieval/candidates.py assembles the statement from the `-- @part` sections: head + lexical + dense
-- + both + tail runs both legs in one round trip (full-joined); head + lexical + lexical_only +
-- tail and head + dense + dense_only + tail run one leg each, which the search sends on two
-- connections at once and merges (the legs then run on two cores).
--
-- The lexical leg reads score-at-a-time: every block of every query term, the highest upper bound
-- (idf x the block's best impact) first, until %(budget)s postings are read (plus the delta's
-- postings of the query terms, at most {per_term} per term); the {candidates} chunks with the
-- best partial scores are then re-scored exactly from the forward index, so the scores the leg
-- returns are exact BM25 (idf from current df, impacts from the stored avgdl).
-- {dim}, {version}, {filter}, {unfiltered}, {levels}, {exact_ratio} and the LIMITs ({per_term}, {candidates}, {pool},
-- {dense_pool}) are filled in by retrieval/candidates.py (literals and a composed clause): the
-- statement is prepared with a generic plan (db.SESSION_SETTINGS), which sees them as they are.
-- Every ORDER BY before a LIMIT is total (ties go to the lower chunk id), so the rows do not
-- depend on the plan. Without filters the postings are read without any join ({unfiltered} is true
-- and the planner drops the `allowed` set); with filters, postings are checked against `allowed`.
-- @part head
WITH stats AS (
    SELECT chunk_count, k1, b, avgdl_indexed, (k1 + 1) / {levels} AS unit FROM lexical_stats
),
allowed AS MATERIALIZED (
    SELECT c.id
    FROM chunks c
    JOIN documents d ON d.id = c.document_id
    JOIN sources src ON src.id = d.source_id
    WHERE {filter}
),
query_terms AS (
    SELECT t.id, qt.weight * ln(1 + (s.chunk_count - t.df + 0.5) / (t.df + 0.5)) AS idf
    FROM unnest(%(terms)s::text[], %(weights)s::real[]) AS qt(term, weight)
    JOIN lexical_terms t ON t.term = qt.term
    CROSS JOIN stats s
    WHERE t.df > 0
),
-- @part lexical
block_order AS (
    -- From the primary key alone (it covers max_impact and postings). A term's block k can only be
    -- reached after its k full blocks before it, so no block past %(max_block)s is ever read.
    SELECT b.term_id, b.block_no, q.idf,
           sum(b.postings) OVER (ORDER BY q.idf * b.max_impact DESC, b.term_id, b.block_no) - b.postings AS read_before
    FROM query_terms q
    JOIN lexical_blocks b ON b.term_id = q.id AND b.block_no <= %(max_block)s
),
postings AS (
    -- In units of the stored int2 impacts (x stats.unit gives BM25); chunk ids stay int4 here.
    SELECT u.chunk_id, u.part
    FROM (
        -- Set-returning functions in the select list stream (ProjectSet); in FROM they would
        -- first be copied into a tuplestore per block.
        SELECT unnest(b.chunk_ids) AS chunk_id, o.idf * unnest(b.impacts) AS part
        FROM block_order o
        JOIN lexical_blocks b ON b.term_id = o.term_id AND b.block_no = o.block_no
        WHERE o.read_before < %(budget)s
    ) u
    WHERE {unfiltered} OR u.chunk_id IN (SELECT id FROM allowed)
    UNION ALL
    SELECT d.chunk_id::integer, q.idf * d.impact / s.unit
    FROM query_terms q
    CROSS JOIN stats s
    CROSS JOIN LATERAL (
        SELECT x.chunk_id, x.impact
        FROM lexical_delta x
        WHERE x.term_id = q.id AND ({unfiltered} OR x.chunk_id IN (SELECT id FROM allowed))
        ORDER BY x.impact DESC, x.chunk_id
        LIMIT {per_term}
    ) d
),
lexical_candidates AS (
    SELECT p.chunk_id::bigint AS chunk_id
    FROM postings p
    GROUP BY p.chunk_id
    HAVING p.chunk_id NOT IN (SELECT chunk_id FROM lexical_tombstones)
    ORDER BY sum(p.part) DESC, p.chunk_id
    LIMIT {candidates}
),
lexical AS (
    -- Exact BM25 of each candidate: its forward row unnested in the select list (streamed), joined
    -- to the query's terms by hash. Cheaper than looking each query term up in each row
    -- (array_position) once a pasted alert brings 30-100 terms: 200 rows of ~70 terms each
    -- against one hash probe each, instead of 200 x terms linear scans.
    SELECT u.chunk_id,
           sum(q.idf * u.tf * (s.k1 + 1) / (u.tf + s.k1 * (1 - s.b + s.b * u.length / s.avgdl_indexed))) AS score
    FROM (
        SELECT f.chunk_id, f.length, unnest(f.term_ids) AS term_id, unnest(f.tfs) AS tf
        FROM lexical_candidates k
        JOIN lexical_chunk_terms f ON f.chunk_id = k.chunk_id
    ) u
    JOIN query_terms q ON q.id = u.term_id
    CROSS JOIN stats s
    GROUP BY u.chunk_id
    ORDER BY score DESC, u.chunk_id
    LIMIT {pool}
),
lexical_ranked AS (
    SELECT chunk_id, score, row_number() OVER (ORDER BY score DESC, chunk_id) AS rank FROM lexical
),
-- @part dense
dense_exact AS (
    -- A filter that allows few chunks (at most sqrt({exact_ratio} x all chunks)) is answered by
    -- exact distances over them: walking the HNSW graph past the unallowed ones costs more (it
    -- grows as the allowed share shrinks, the exact scan as it grows; see candidates.EXACT_RATIO).
    SELECT count(*) <= sqrt({exact_ratio} * coalesce((SELECT chunk_count FROM stats), 0)) AS exact
    FROM allowed
),
dense AS (
    (
        SELECT e.chunk_id, e.embedding::halfvec({dim}) <=> %(vector)s::halfvec({dim}) AS distance
        FROM chunk_embeddings e
        WHERE e.version = {version}
          AND ({unfiltered} OR (e.chunk_id IN (SELECT id FROM allowed) AND NOT (SELECT exact FROM dense_exact)))
        ORDER BY e.embedding::halfvec({dim}) <=> %(vector)s::halfvec({dim})
        LIMIT {dense_pool}
    )
    UNION ALL
    (
        SELECT e.chunk_id, e.embedding::halfvec({dim}) <=> %(vector)s::halfvec({dim}) AS distance
        FROM allowed a
        JOIN chunk_embeddings e ON e.version = {version} AND e.chunk_id = a.id
        -- {unfiltered} folds at plan time: an unfiltered search neither runs this branch nor
        -- counts the allowed set
        WHERE NOT {unfiltered} AND (SELECT exact FROM dense_exact)
        ORDER BY 2, e.chunk_id
        LIMIT {dense_pool}
    )
),
dense_ranked AS (
    SELECT chunk_id, 1 - distance AS score, row_number() OVER (ORDER BY distance, chunk_id) AS rank
    FROM dense
),
-- @part both
candidates AS (
    SELECT coalesce(l.chunk_id, v.chunk_id) AS chunk_id,
           l.rank AS lexical_rank, l.score AS lexical_score,
           v.rank AS dense_rank, v.score AS dense_score
    FROM lexical_ranked l
    FULL JOIN dense_ranked v ON v.chunk_id = l.chunk_id
)
-- @part lexical_only
candidates AS (
    SELECT chunk_id, rank AS lexical_rank, score AS lexical_score, NULL::bigint AS dense_rank,
           NULL::double precision AS dense_score
    FROM lexical_ranked
)
-- @part dense_only
candidates AS (
    SELECT chunk_id, NULL::bigint AS lexical_rank, NULL::double precision AS lexical_score,
           rank AS dense_rank, score AS dense_score
    FROM dense_ranked
)
-- @part tail
-- Text only for chunks ranked within text_rank by a leg (the search loads the few others it
-- shows); every row also says which index version is active (retrieval/candidates.py caches it).
SELECT c.id, c.document_id, c.section_id, c.position, c.heading_path,
       CASE WHEN least(k.lexical_rank, k.dense_rank) <= %(text_rank)s THEN c.text END, c.text_hash,
       c.token_count, c.metadata::text, d.path, d.title, d.metadata::text, d.updated_at, src.name,
       src.base_url, k.lexical_rank, k.lexical_score, k.dense_rank, k.dense_score,
       (SELECT coalesce(sum(q.idf), 0) FROM query_terms q) AS query_idf,
       (  -- the query's plain words that no runbook uses, at the highest idf (for the confidence)
           SELECT coalesce(sum(ln(1 + (s.chunk_count + 0.5) / 0.5)), 0)
           FROM unnest(%(plain)s::text[]) AS w(term) CROSS JOIN stats s
           WHERE NOT EXISTS (SELECT 1 FROM lexical_terms t WHERE t.term = w.term AND t.df > 0)
       ) AS unknown_idf,
       (SELECT v.id FROM index_versions v WHERE v.state = 'active') AS active_version,
       (SELECT chunk_count FROM stats) AS chunk_count
FROM candidates k
JOIN chunks c ON c.id = k.chunk_id
JOIN documents d ON d.id = c.document_id
JOIN sources src ON src.id = d.source_id
