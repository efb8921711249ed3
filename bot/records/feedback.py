"""Feedback capture: votes (+1 / -1) and comments on posted answers, one row per user and message.

Platform-neutral: the Slack adapter calls these for buttons, reactions and the follow-up modal.
The question and chunk ids are copied from the `answers` row, so a vote stands on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from psycopg_pool import AsyncConnectionPool

Via = Literal["button", "reaction"]

_UPSERT = """
INSERT INTO feedback (platform, channel, message_ts, user_id, answer_id, question, cited_chunk_ids,
                      uncited_chunk_ids, cited_keys, vote, via)
SELECT %(platform)s, %(channel)s, %(message_ts)s, %(user_id)s, a.id, a.question, a.cited_chunk_ids,
       coalesce(ARRAY(SELECT r FROM unnest(a.retrieved_chunk_ids) AS r
                      WHERE NOT r = ANY(a.cited_chunk_ids)), '{}'),
       a.cited_keys, %(vote)s, %(via)s
FROM answers a WHERE a.id = %(answer_id)s
ON CONFLICT (platform, channel, message_ts, user_id) DO UPDATE
    SET vote = EXCLUDED.vote, via = EXCLUDED.via, updated_at = now(),
        comment = CASE WHEN feedback.vote = EXCLUDED.vote THEN feedback.comment END
RETURNING id
"""
_UNDO = """
DELETE FROM feedback WHERE platform = %(platform)s AND channel = %(channel)s AND message_ts = %(message_ts)s
    AND user_id = %(user_id)s AND vote = %(vote)s
"""
_COMMENT = """
UPDATE feedback SET comment = %(comment)s, updated_at = now()
WHERE platform = %(platform)s AND channel = %(channel)s AND message_ts = %(message_ts)s AND user_id = %(user_id)s
RETURNING id
"""


@dataclass(frozen=True)
class Vote:
    """One user's vote on one posted answer message."""

    platform: str
    channel: str
    message_ts: str
    user_id: str
    answer_id: int
    vote: int  # +1 or -1
    via: Via = "button"


async def record_vote(pool: AsyncConnectionPool, vote: Vote) -> int | None:
    """Store or update the vote; returns the feedback row id (None when the answer is unknown).

    A changed vote drops an earlier comment (it was about the other vote)."""
    if vote.vote not in (-1, 1):
        raise ValueError(f"a vote is +1 or -1, not {vote.vote}")
    async with pool.connection() as conn:
        row = await (await conn.execute(_UPSERT, vars(vote))).fetchone()
    return int(row[0]) if row else None


async def undo_vote(pool: AsyncConnectionPool, platform: str, channel: str, message_ts: str, user_id: str,
                    vote: int) -> bool:
    """Withdraw a vote (a reaction removed); only a vote of the same sign is withdrawn."""
    params = {"platform": platform, "channel": channel, "message_ts": message_ts, "user_id": user_id, "vote": vote}
    async with pool.connection() as conn:
        cur = await conn.execute(_UNDO, params)
        return cur.rowcount > 0


async def add_comment(pool: AsyncConnectionPool, platform: str, channel: str, message_ts: str, user_id: str,
                      comment: str, *, max_chars: int = 3000) -> bool:
    """Attach free text to the user's vote on the message; False when there is no vote to attach it to."""
    params = {"platform": platform, "channel": channel, "message_ts": message_ts, "user_id": user_id,
              "comment": comment.strip()[:max_chars] or None}
    async with pool.connection() as conn:
        row = await (await conn.execute(_COMMENT, params)).fetchone()
    return row is not None


async def feedback_rows(pool: AsyncConnectionPool, answer_id: int | None = None) -> list[dict[str, Any]]:
    """Feedback rows, oldest first (all, or one answer's), for reports and tests."""
    query = ("SELECT id, created_at, updated_at, platform, channel, message_ts, user_id, answer_id, question,"
             " cited_chunk_ids, uncited_chunk_ids, cited_keys, vote, via, comment FROM feedback")
    args: tuple[Any, ...] = ()
    if answer_id is not None:
        query += " WHERE answer_id = %s"
        args = (answer_id,)
    async with pool.connection() as conn:
        cur = await conn.execute(query + " ORDER BY id", args)
        names = [d.name for d in cur.description or []]
        return [dict(zip(names, row)) for row in await cur.fetchall()]
