"""Answer history: what was asked, what was retrieved and cited (feedback joins on it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

_INSERT = """
INSERT INTO answers (entry_point, channel, user_id, question, mode, model_used, abstained, confidence,
                     retrieved_chunk_ids, cited_chunk_ids, cited_keys, retrieval_ms, generation_ms,
                     prompt_tokens, completion_tokens, cost_usd, errors, answer)
SELECT %(entry_point)s, %(channel)s, %(user_id)s, %(question)s, %(mode)s, %(model_used)s, %(abstained)s,
       %(confidence)s, %(retrieved)s, %(cited)s,
       coalesce((SELECT jsonb_agg(jsonb_build_object('path', d.path, 'text_hash', c.text_hash)
                                  ORDER BY array_position(%(cited)s::bigint[], c.id))
                 FROM chunks c JOIN documents d ON d.id = c.document_id
                 WHERE c.id = ANY(%(cited)s::bigint[])), '[]'::jsonb),
       %(retrieval_ms)s, %(generation_ms)s, %(prompt_tokens)s, %(completion_tokens)s, %(cost_usd)s,
       %(errors)s, %(answer)s
RETURNING id
"""


@dataclass
class AnswerRecord:
    """One answer as stored."""

    entry_point: str
    question: str
    mode: str
    abstained: bool
    confidence: float
    answer: dict[str, Any]
    channel: str | None = None
    user_id: str | None = None
    model_used: str | None = None
    retrieved: list[int] = field(default_factory=list)
    cited: list[int] = field(default_factory=list)
    retrieval_ms: float = 0.0
    generation_ms: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    errors: list[str] = field(default_factory=list)


async def record_answer(pool: AsyncConnectionPool, record: AnswerRecord) -> int:
    """Store an answer; returns its id."""
    params = dict(vars(record))
    params["answer"] = Jsonb(record.answer)
    async with pool.connection() as conn:
        cur = await conn.execute(_INSERT, params)
        row = await cur.fetchone()
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
