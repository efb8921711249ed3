"""Answer history: what was asked, what was retrieved and cited (feedback joins on it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from bot.answer import Answer

_INSERT = """
INSERT INTO answers (entry_point, channel, user_id, question, mode, model_used, abstained, confidence,
                     retrieved_chunk_ids, cited_chunk_ids, cited_keys, retrieval_ms, generation_ms,
                     prompt_tokens, completion_tokens, cost_usd, errors, answer, alert)
SELECT %(entry_point)s, %(channel)s, %(user_id)s, %(question)s, %(mode)s, %(model_used)s, %(abstained)s,
       %(confidence)s, %(retrieved)s, %(cited)s,
       coalesce((SELECT jsonb_agg(jsonb_build_object('path', d.path, 'text_hash', c.text_hash)
                                  ORDER BY array_position(%(cited)s::bigint[], c.id))
                 FROM chunks c JOIN documents d ON d.id = c.document_id
                 WHERE c.id = ANY(%(cited)s::bigint[])), '[]'::jsonb),
       %(retrieval_ms)s, %(generation_ms)s, %(prompt_tokens)s, %(completion_tokens)s, %(cost_usd)s,
       %(errors)s, %(answer)s, %(alert)s
RETURNING id
"""


async def record_answer(pool: AsyncConnectionPool, answer: Answer, *, entry_point: str, channel: str | None = None,
                        user_id: str | None = None, alert: dict[str, str] | None = None) -> int:
    """Store an answer (its trace in columns, the rest as JSON, with the alert it answered); returns its id."""
    t = answer.trace
    params = {
        "entry_point": entry_point, "channel": channel, "user_id": user_id, "question": answer.question,
        "mode": answer.mode, "model_used": answer.model_used, "abstained": answer.abstained,
        "confidence": answer.confidence, "retrieved": t.retrieved_chunk_ids, "cited": answer.cited_chunk_ids,
        "retrieval_ms": t.retrieval_ms, "generation_ms": t.generation_ms, "prompt_tokens": t.prompt_tokens,
        "completion_tokens": t.completion_tokens, "cost_usd": t.cost_usd, "errors": t.errors,
        "answer": Jsonb(answer.model_dump(mode="json", exclude={"trace"})), "alert": Jsonb(alert or {}),
    }
    async with pool.connection() as conn:
        row = await (await conn.execute(_INSERT, params)).fetchone()
    assert row is not None
    return int(row[0])


async def recent_answers(pool: AsyncConnectionPool, limit: int = 20) -> list[dict[str, Any]]:
    """The latest answers, newest first (for `runbook-bot history` and tests)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT id, created_at, entry_point, question, mode, model_used, abstained, confidence,"
            " retrieved_chunk_ids, cited_chunk_ids, cited_keys, errors FROM answers ORDER BY id DESC LIMIT %s",
            (limit,),
        )
        names = [d.name for d in cur.description or []]
        return [dict(zip(names, row)) for row in await cur.fetchall()]


@dataclass(frozen=True)
class AnsweredIn:
    """What a stored answer was asked with, for a correction made on it later."""

    question: str
    alert: dict[str, str]
    channel: str | None
    shown: str | None  # the path of the runbook it led with (None: it abstained)


async def answered_in(pool: AsyncConnectionPool, answer_id: int) -> AnsweredIn | None:
    """The question, alert, channel and first runbook of a stored answer, or None."""
    async with pool.connection() as conn:
        row = await (await conn.execute(
            "SELECT question, alert, channel, CASE WHEN NOT abstained THEN answer->'sources'->0->>'path' END"
            " FROM answers WHERE id = %s", (answer_id,))).fetchone()
    return AnsweredIn(row[0], dict(row[1] or {}), row[2], row[3]) if row else None
