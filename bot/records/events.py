"""Chat adapters' bookkeeping in Postgres: event de-duplication and posted message -> answer.

Platform-neutral: `platform` is "slack" or "teams"; channel and message ids are opaque strings.
"""

from __future__ import annotations

from typing import Any

from psycopg_pool import AsyncConnectionPool

# The first claim wins; an unfinished claim older than the stale interval may be taken over
# (the replica that held it died mid-answer). Finished events are never claimed again.
_CLAIM = """
INSERT INTO chat_events AS e (platform, event_id) VALUES (%(platform)s, %(event_id)s)
ON CONFLICT (platform, event_id) DO UPDATE SET claimed_at = now(), attempts = e.attempts + 1
    WHERE e.done_at IS NULL AND e.claimed_at < now() - make_interval(secs => %(stale_s)s)
RETURNING attempts
"""
_FINISH = "UPDATE chat_events SET done_at = now() WHERE platform = %(platform)s AND event_id = %(event_id)s"
_PRUNE = "DELETE FROM chat_events WHERE claimed_at < now() - make_interval(secs => %(older_than_s)s)"
_REMEMBER = """
INSERT INTO answer_messages (platform, channel, ts, answer_id, thread_ts)
VALUES (%(platform)s, %(channel)s, %(ts)s, %(answer_id)s, %(thread_ts)s)
ON CONFLICT (platform, channel, ts) DO UPDATE SET answer_id = EXCLUDED.answer_id
"""
_ANSWER_FOR = "SELECT answer_id FROM answer_messages WHERE platform = %s AND channel = %s AND ts = %s"
_LATEST = """
SELECT answer_id FROM answer_messages
WHERE platform = %(platform)s AND channel = %(channel)s
  AND (%(thread)s::text IS NULL OR thread_ts = %(thread)s OR ts = %(thread)s)
ORDER BY answer_id DESC LIMIT 1
"""
_LOAD_ANSWER = "SELECT answer, user_id FROM answers WHERE id = %s"
_CHUNK_SOURCES = """
SELECT c.id, s.name FROM chunks c JOIN documents d ON d.id = c.document_id JOIN sources s ON s.id = d.source_id
WHERE c.id = ANY(%s::bigint[])
"""


async def claim_event(pool: AsyncConnectionPool, platform: str, event_id: str, *, stale_s: float = 600) -> bool:
    """True if this process should handle the event; False if another delivery already has it."""
    async with pool.connection() as conn:
        cur = await conn.execute(_CLAIM, {"platform": platform, "event_id": event_id, "stale_s": stale_s})
        return await cur.fetchone() is not None


async def finish_event(pool: AsyncConnectionPool, platform: str, event_id: str) -> None:
    """Mark a claimed event as handled (it is never claimed again)."""
    async with pool.connection() as conn:
        await conn.execute(_FINISH, {"platform": platform, "event_id": event_id})


async def prune_events(pool: AsyncConnectionPool, *, older_than_s: float = 86_400) -> int:
    """Forget claims older than a day (Slack stops retrying after minutes); returns rows deleted."""
    async with pool.connection() as conn:
        cur = await conn.execute(_PRUNE, {"older_than_s": older_than_s})
        return cur.rowcount


async def remember_message(pool: AsyncConnectionPool, platform: str, channel: str, ts: str, answer_id: int,
                           thread_ts: str | None = None) -> None:
    """Record that the message (channel, ts) shows answer `answer_id`."""
    async with pool.connection() as conn:
        await conn.execute(_REMEMBER, {"platform": platform, "channel": channel, "ts": ts,
                                       "answer_id": answer_id, "thread_ts": thread_ts})


async def answer_for_message(pool: AsyncConnectionPool, platform: str, channel: str, ts: str) -> int | None:
    """The answer a posted message shows, or None when the message is not one of the bot's answers."""
    async with pool.connection() as conn:
        row = await (await conn.execute(_ANSWER_FOR, (platform, channel, ts))).fetchone()
    return int(row[0]) if row else None


async def latest_answer(pool: AsyncConnectionPool, platform: str, channel: str, thread: str | None = None) -> int | None:
    """The latest answer the bot posted in a thread (or, with no thread, in the channel), or None."""
    async with pool.connection() as conn:
        row = await (await conn.execute(_LATEST, {"platform": platform, "channel": channel, "thread": thread})).fetchone()
    return int(row[0]) if row else None


async def load_answer(pool: AsyncConnectionPool, answer_id: int) -> tuple[dict[str, Any], str | None] | None:
    """The stored answer (the Answer model as JSON, without its trace) and who asked, or None."""
    async with pool.connection() as conn:
        row = await (await conn.execute(_LOAD_ANSWER, (answer_id,))).fetchone()
    return (dict(row[0]), row[1]) if row else None


async def chunk_sources(pool: AsyncConnectionPool, chunk_ids: list[int]) -> dict[int, str]:
    """The source name of each chunk (to build links from a per-source base URL)."""
    if not chunk_ids:
        return {}
    async with pool.connection() as conn:
        rows = await (await conn.execute(_CHUNK_SOURCES, (chunk_ids,))).fetchall()
    return {int(cid): name for cid, name in rows}
