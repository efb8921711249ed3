-- Sources, documents, parent sections, chunks, and versioned embeddings.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE sources (
    id               bigserial PRIMARY KEY,
    name             text NOT NULL UNIQUE,
    kind             text NOT NULL DEFAULT 'directory',      -- directory | git
    location         text,                                    -- root path of the last ingest
    base_url         text,                                    -- where links to documents point
    created_at       timestamptz NOT NULL DEFAULT now(),
    last_ingested_at timestamptz
);

CREATE TABLE documents (
    id            bigserial PRIMARY KEY,
    source_id     bigint NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    path          text NOT NULL,                  -- relative to the source root
    title         text NOT NULL,
    content_hash  text NOT NULL,                  -- sha256 of the raw bytes + pipeline signature
    metadata      jsonb NOT NULL DEFAULT '{}',    -- front matter and format facts
    body          text NOT NULL,                  -- parsed text: lets us rebuild without the files
    token_count   integer NOT NULL DEFAULT 0,
    source_commit text,                           -- git commit of the working tree, if any
    updated_at    timestamptz NOT NULL,           -- when the content last changed (git or mtime)
    ingested_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (source_id, path)
);
CREATE INDEX documents_metadata_idx ON documents USING gin (metadata jsonb_path_ops);

CREATE TABLE sections (
    id           bigserial PRIMARY KEY,
    document_id  bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    position     integer NOT NULL,
    heading_path text[] NOT NULL,
    text         text NOT NULL,
    char_start   integer NOT NULL,
    char_end     integer NOT NULL,
    token_count  integer NOT NULL,
    UNIQUE (document_id, position)
);

CREATE TABLE chunks (
    id           bigserial PRIMARY KEY,
    document_id  bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    section_id   bigint NOT NULL REFERENCES sections(id) ON DELETE CASCADE,
    position     integer NOT NULL,
    heading_path text[] NOT NULL,
    text         text NOT NULL,
    text_hash    text NOT NULL,                   -- sha256 of text: dedupe
    embed_hash   text NOT NULL,                   -- sha256 of what was embedded: embedding cache key
    char_start   integer NOT NULL,
    char_end     integer NOT NULL,
    token_count  integer NOT NULL,
    metadata     jsonb NOT NULL DEFAULT '{}',
    UNIQUE (document_id, position)
);
CREATE INDEX chunks_section_idx ON chunks (section_id);
CREATE INDEX chunks_embed_hash_idx ON chunks (embed_hash);

-- One row per embedding model the vector index was ever built with. Exactly one is
-- 'active'; `runbook-bot reindex` builds a new version from chunk text in Postgres,
-- then swaps it in, so the index can always be rebuilt from the database alone.
CREATE TABLE index_versions (
    id         serial PRIMARY KEY,
    backend    text NOT NULL,
    model      text NOT NULL,
    dim        integer NOT NULL CHECK (dim > 0),
    state      text NOT NULL DEFAULT 'building' CHECK (state IN ('building', 'active', 'retired')),
    created_at timestamptz NOT NULL DEFAULT now(),
    built_at   timestamptz
);
CREATE UNIQUE INDEX index_versions_one_active ON index_versions ((state)) WHERE state = 'active';

-- Embeddings live beside chunks, keyed by index version. The HNSW index of a version is
-- a partial expression index created by the code (its dimension is only known then).
CREATE TABLE chunk_embeddings (
    version   integer NOT NULL REFERENCES index_versions(id) ON DELETE CASCADE,
    chunk_id  bigint NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    embedding vector NOT NULL,
    PRIMARY KEY (version, chunk_id)
);
CREATE INDEX chunk_embeddings_chunk_idx ON chunk_embeddings (chunk_id);

CREATE TABLE ingest_runs (
    id          bigserial PRIMARY KEY,
    source_id   bigint REFERENCES sources(id) ON DELETE CASCADE,
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    added       integer NOT NULL DEFAULT 0,
    updated     integer NOT NULL DEFAULT 0,
    unchanged   integer NOT NULL DEFAULT 0,
    deleted     integer NOT NULL DEFAULT 0,
    skipped     integer NOT NULL DEFAULT 0,
    failed      integer NOT NULL DEFAULT 0,
    details     jsonb NOT NULL DEFAULT '{}'       -- skip reasons, errors, stage timings
);
