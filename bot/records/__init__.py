"""The bot's bookkeeping in Postgres: chat events claimed once and the messages that show answers
(events), the answers given (answers), and engineers' votes and comments on them (feedback).
Retrieval reads the feedback table to learn its weights; it never writes these."""
