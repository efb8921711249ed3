-- Retrieval evaluation runs, so that runs can be compared over time.
CREATE TABLE eval_runs (
    id           bigserial PRIMARY KEY,
    created_at   timestamptz NOT NULL DEFAULT now(),
    corpus       text NOT NULL,
    queries_file text NOT NULL,
    method       text NOT NULL,              -- hybrid | lexical | dense
    config       jsonb NOT NULL DEFAULT '{}',
    metrics      jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE eval_results (
    run_id         bigint NOT NULL REFERENCES eval_runs(id) ON DELETE CASCADE,
    query_id       text NOT NULL,
    variant        text,
    relevant       text[] NOT NULL,
    retrieved      text[] NOT NULL,          -- document paths, best first
    chunk_ids      bigint[] NOT NULL,        -- chunk ids (of the throw-away database)
    confidence     real NOT NULL,
    abstained      boolean NOT NULL,
    latency_ms     real NOT NULL,
    PRIMARY KEY (run_id, query_id)
);
