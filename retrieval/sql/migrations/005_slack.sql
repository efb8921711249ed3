-- Chat adapters (Slack now, Teams next): event de-duplication and which posted message shows which answer.

-- Events API deliveries claimed by a replica. Slack retries an event (X-Slack-Retry-Num) when it
-- did not see an ack in time; the first claim wins, so a retry, a restart or a second replica never
-- answers twice. A claim that never finished (the replica died mid-answer) may be taken over once
-- it is stale; finished events never are.
CREATE TABLE chat_events (
    platform    text NOT NULL,                 -- slack, teams
    event_id    text NOT NULL,
    claimed_at  timestamptz NOT NULL DEFAULT now(),
    done_at     timestamptz,
    attempts    integer NOT NULL DEFAULT 1,
    PRIMARY KEY (platform, event_id)
);
CREATE INDEX chat_events_claimed_at ON chat_events (claimed_at);

-- A message the bot posted (channel, ts) and the answer it shows: reactions and buttons on the
-- message find the answer (and its question and citations) through it.
CREATE TABLE answer_messages (
    platform    text NOT NULL,
    channel     text NOT NULL,
    ts          text NOT NULL,                 -- the message's id on the platform
    answer_id   bigint NOT NULL REFERENCES answers(id) ON DELETE CASCADE,
    thread_ts   text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (platform, channel, ts)
);
CREATE INDEX answer_messages_answer ON answer_messages (answer_id);
