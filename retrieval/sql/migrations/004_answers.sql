-- Every answer the bot gave: what was asked, what was retrieved and cited, how long it took.
-- Feedback (votes on answers) joins here; cited_keys survive re-ingestion, chunk ids do not.
CREATE TABLE answers (
    id                  bigserial PRIMARY KEY,
    created_at          timestamptz NOT NULL DEFAULT now(),
    entry_point         text NOT NULL,            -- cli, api, slack, teams
    channel             text,
    user_id             text,
    question            text NOT NULL,
    mode                text NOT NULL,            -- llm, extractive
    model_used          text,
    abstained           boolean NOT NULL,
    confidence          real NOT NULL,
    retrieved_chunk_ids bigint[] NOT NULL DEFAULT '{}',
    cited_chunk_ids     bigint[] NOT NULL DEFAULT '{}',
    cited_keys          jsonb NOT NULL DEFAULT '[]',  -- [{"path", "text_hash"}] of cited chunks
    retrieval_ms        real NOT NULL DEFAULT 0,
    generation_ms       real NOT NULL DEFAULT 0,
    prompt_tokens       integer NOT NULL DEFAULT 0,
    completion_tokens   integer NOT NULL DEFAULT 0,
    cost_usd            double precision NOT NULL DEFAULT 0,
    errors              text[] NOT NULL DEFAULT '{}',
    answer              jsonb NOT NULL
);
CREATE INDEX answers_created_at ON answers (created_at);
