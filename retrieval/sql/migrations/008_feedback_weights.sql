-- Reranking inputs computed from feedback, versioned: a recompute writes a new version and
-- activates it in one transaction; search reads the active one.
CREATE TABLE feedback_weight_versions (
    id             serial PRIMARY KEY,
    created_at     timestamptz NOT NULL DEFAULT now(),
    active         boolean NOT NULL DEFAULT false,
    params         jsonb NOT NULL,
    votes_used     integer NOT NULL,
    lexical_weight real,                 -- re-fitted fusion weight; NULL = keep the configured one
    fit            jsonb NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX feedback_weight_versions_active ON feedback_weight_versions (active) WHERE active;

-- Weighted up/down evidence per chunk (by path and text hash, stable across re-ingestion).
CREATE TABLE feedback_chunk_weights (
    version    integer NOT NULL REFERENCES feedback_weight_versions(id) ON DELETE CASCADE,
    path       text NOT NULL,
    text_hash  text NOT NULL,
    up         real NOT NULL,
    down       real NOT NULL,
    PRIMARY KEY (version, path, text_hash)
);

-- Votes near which the query-local boost applies: the voted question's embedding and its weight.
CREATE TABLE feedback_examples (
    version         integer NOT NULL REFERENCES feedback_weight_versions(id) ON DELETE CASCADE,
    path            text NOT NULL,
    text_hash       text NOT NULL,
    weight          real NOT NULL,
    question_vector real[] NOT NULL
);
CREATE INDEX feedback_examples_version ON feedback_examples (version);
