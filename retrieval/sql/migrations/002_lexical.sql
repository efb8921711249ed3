-- Okapi BM25 inside Postgres: a term dictionary with document frequencies, impact-ordered
-- postings, and corpus statistics kept current by ingestion.
--
-- A posting stores tf and the BM25 term-frequency part ("impact") computed with the average
-- chunk length of its time: impact = tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avgdl)).
-- The idf factor is applied at query time from lexical_terms.df, so it is always current;
-- impacts are refreshed when avgdl drifts (retrieval.lexical.refresh_impacts).
CREATE TABLE lexical_terms (
    id   serial PRIMARY KEY,
    term text NOT NULL UNIQUE,
    df   integer NOT NULL DEFAULT 0
);

CREATE TABLE lexical_postings (
    term_id  integer NOT NULL,
    chunk_id bigint NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    tf       smallint NOT NULL,
    impact   real NOT NULL,
    PRIMARY KEY (term_id, chunk_id)
);
-- Impact-ordered access: the top postings of a term without reading the rest.
CREATE INDEX lexical_postings_impact_idx ON lexical_postings (term_id, impact DESC) INCLUDE (chunk_id);
CREATE INDEX lexical_postings_chunk_idx ON lexical_postings (chunk_id);

ALTER TABLE chunks ADD COLUMN term_count integer NOT NULL DEFAULT 0;

CREATE TABLE lexical_stats (
    singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    chunk_count   bigint NOT NULL DEFAULT 0,
    term_total    bigint NOT NULL DEFAULT 0,     -- sum of chunk lengths in terms
    avgdl_indexed double precision NOT NULL DEFAULT 100,  -- avgdl the stored impacts used
    k1            double precision NOT NULL DEFAULT 1.2,
    b             double precision NOT NULL DEFAULT 0.75
);
INSERT INTO lexical_stats DEFAULT VALUES;
