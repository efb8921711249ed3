-- Votes on answers: one row per user and posted message (a second click updates it; removing the
-- reaction that cast a vote deletes it). The question and the chunk ids are copied from the answers
-- row when the vote is cast, so the row stands on its own for weighting jobs.
CREATE TABLE feedback (
    id                bigserial PRIMARY KEY,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    platform          text NOT NULL,           -- slack, teams
    channel           text NOT NULL,
    message_ts        text NOT NULL,           -- the message that showed the answer
    user_id           text NOT NULL,
    answer_id         bigint NOT NULL REFERENCES answers(id) ON DELETE CASCADE,
    question          text NOT NULL,
    cited_chunk_ids   bigint[] NOT NULL DEFAULT '{}',
    uncited_chunk_ids bigint[] NOT NULL DEFAULT '{}',  -- retrieved but not cited
    cited_keys        jsonb NOT NULL DEFAULT '[]',     -- [{"path", "text_hash"}]: survive re-ingestion
    vote              smallint NOT NULL CHECK (vote IN (-1, 1)),
    via               text NOT NULL,           -- button, reaction
    comment           text,                    -- free text from the thumbs-down follow-up
    UNIQUE (platform, channel, message_ts, user_id)
);
CREATE INDEX feedback_answer ON feedback (answer_id);
CREATE INDEX feedback_created_at ON feedback (created_at);
