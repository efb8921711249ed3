"""Corrections as stored: who said which runbook was right for which question, and when; listed and
withdrawn by the CLI. Retrieval reads them (retrieval/corrections.py) to put the runbook first."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

_INSERT = """
INSERT INTO corrections (platform, channel, user_id, user_name, answer_id, question, alertname, labels, path,
                         question_vector)
VALUES (%(platform)s, %(channel)s, %(user_id)s, %(user_name)s, %(answer_id)s, %(question)s, %(alertname)s,
        %(labels)s, %(path)s, %(vector)s)
RETURNING id
"""
_WITHDRAW = """
UPDATE corrections SET withdrawn_at = now(), withdrawn_why = %(why)s
WHERE id = %(id)s AND withdrawn_at IS NULL RETURNING id
"""
_LIST = """
SELECT id, created_at, platform, channel, user_id, user_name, answer_id, question, alertname, path,
       withdrawn_at, withdrawn_why
FROM corrections {where} ORDER BY id DESC LIMIT %(limit)s
"""


@dataclass(frozen=True)
class NewCorrection:
    """A correction as an adapter or the CLI makes it."""

    platform: str
    user_id: str
    question: str  # what the search saw: the question with its alert
    path: str  # the runbook's path in the corpus
    channel: str | None = None
    user_name: str | None = None
    answer_id: int | None = None
    alertname: str | None = None
    labels: dict[str, str] = field(default_factory=dict)


async def add_correction(pool: AsyncConnectionPool, correction: NewCorrection, vector: np.ndarray) -> int:
    """Store a correction with its question's vector; returns its id."""
    params = {**vars(correction), "labels": Jsonb(correction.labels),
              "alertname": (correction.alertname or "").strip().lower() or None,
              "vector": [float(x) for x in np.asarray(vector).ravel()]}
    async with pool.connection() as conn:
        row = await (await conn.execute(_INSERT, params)).fetchone()
    assert row is not None
    return int(row[0])


async def withdraw_correction(pool: AsyncConnectionPool, correction_id: int, why: str = "withdrawn") -> bool:
    """Withdraw a correction; False when there is no such correction in force."""
    async with pool.connection() as conn:
        row = await (await conn.execute(_WITHDRAW, {"id": correction_id, "why": why})).fetchone()
    return row is not None


async def list_corrections(pool: AsyncConnectionPool, *, withdrawn: bool = False, limit: int = 50) -> list[dict[str, Any]]:
    """The latest corrections, newest first (those in force, or all with `withdrawn`)."""
    where = "" if withdrawn else "WHERE withdrawn_at IS NULL"
    async with pool.connection() as conn:
        cur = await conn.execute(_LIST.format(where=where), {"limit": limit})
        names = [d.name for d in cur.description or []]
        return [dict(zip(names, row)) for row in await cur.fetchall()]
