-- Hybrid candidates in one round trip: BM25 over impact-ordered postings (top postings per
-- query term through a LATERAL join, idf from current df) and pgvector HNSW cosine, both
-- under the same metadata filter, full-joined with each leg's rank and score.
-- {dim}, {filter} and {unfiltered} are filled in by retrieval/search.py (literals and a composed
-- clause). Without filters the postings are read without any join ({unfiltered} is true and the
-- planner drops the `allowed` set); with filters, postings are checked against `allowed`.
WITH stats AS (
    SELECT chunk_count FROM lexical_stats
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
lexical AS (
    SELECT p.chunk_id, sum(q.idf * p.impact) AS score
    FROM query_terms q
    CROSS JOIN LATERAL (
        SELECT lp.chunk_id, lp.impact
        FROM lexical_postings lp
        WHERE lp.term_id = q.id AND ({unfiltered} OR lp.chunk_id IN (SELECT id FROM allowed))
        ORDER BY lp.impact DESC
        LIMIT %(per_term)s
    ) p
    GROUP BY p.chunk_id
    ORDER BY score DESC
    LIMIT %(pool)s
),
lexical_ranked AS (
    SELECT chunk_id, score, row_number() OVER (ORDER BY score DESC, chunk_id) AS rank FROM lexical
),
dense AS (
    SELECT e.chunk_id, e.embedding::vector({dim}) <=> %(vector)s::vector({dim}) AS distance
    FROM chunk_embeddings e
    JOIN chunks c ON c.id = e.chunk_id
    JOIN documents d ON d.id = c.document_id
    JOIN sources src ON src.id = d.source_id
    WHERE e.version = %(version)s AND {filter}
    ORDER BY e.embedding::vector({dim}) <=> %(vector)s::vector({dim})
    LIMIT %(pool)s
),
dense_ranked AS (
    SELECT chunk_id, 1 - distance AS score, row_number() OVER (ORDER BY distance, chunk_id) AS rank
    FROM dense
),
candidates AS (
    SELECT coalesce(l.chunk_id, v.chunk_id) AS chunk_id,
           l.rank AS lexical_rank, l.score AS lexical_score,
           v.rank AS dense_rank, v.score AS dense_score
    FROM lexical_ranked l
    FULL JOIN dense_ranked v ON v.chunk_id = l.chunk_id
)
SELECT c.id, c.document_id, c.section_id, c.position, c.heading_path, c.text, c.text_hash,
       c.token_count, c.metadata, d.path, d.title, d.metadata, d.updated_at, src.name,
       src.base_url, k.lexical_rank, k.lexical_score, k.dense_rank, k.dense_score,
       (SELECT coalesce(sum(q.idf), 0) FROM query_terms q) AS query_idf
FROM candidates k
JOIN chunks c ON c.id = k.chunk_id
JOIN documents d ON d.id = c.document_id
JOIN sources src ON src.id = d.source_id
