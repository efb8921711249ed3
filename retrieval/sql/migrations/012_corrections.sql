-- Corrections: after a 👎, an engineer names the runbook that was right (a choice offered by the
-- bot, `/runbook fix <path>`, or the CLI). Keyed by the runbook's path, so they survive
-- re-ingestion; a runbook that disappears withdraws its corrections. The question's vector is
-- stored to find later questions close to it.
CREATE TABLE corrections (
    id              bigserial PRIMARY KEY,
    created_at      timestamptz NOT NULL DEFAULT now(),
    platform        text NOT NULL,           -- slack, teams, cli, replay
    channel         text,
    user_id         text NOT NULL,
    user_name       text,                    -- as the answer shows it ("corrected by ...")
    answer_id       bigint REFERENCES answers(id) ON DELETE SET NULL,
    question        text NOT NULL,           -- what the search saw (the question with its alert)
    alertname       text,                    -- lower-cased, when the question came with an alert
    labels          jsonb NOT NULL DEFAULT '{}',
    path            text NOT NULL,           -- the runbook that was right
    question_vector real[] NOT NULL,
    withdrawn_at    timestamptz,
    withdrawn_why   text
);
CREATE INDEX corrections_active ON corrections (alertname) WHERE withdrawn_at IS NULL;

-- The alert an answer was given under, so that a correction made on the answer later (a 👎, then
-- a choice) knows the alert's name and labels.
ALTER TABLE answers ADD COLUMN alert jsonb NOT NULL DEFAULT '{}';
