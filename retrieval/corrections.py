"""Corrections into ranking: after engineers named the runbook that was right for a question, the
same alert (by name) and questions close to a corrected one put that runbook first. Who wins when
engineers disagree: the runbook more engineers backed (each engineer counts once, however often they
corrected), then the most recent correction. Loading is SQL; choosing is pure."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from retrieval.feedback_alerts import AlertVote, alert_votes

log = logging.getLogger(__name__)
SIMILARITY = 0.85  # cosine above which a question counts as the corrected one asked again

# Corrections of runbooks that are gone are withdrawn (once, with a log line) when ingest deletes them.
_WITHDRAW_GONE = """
UPDATE corrections c SET withdrawn_at = now(), withdrawn_why = 'runbook deleted'
WHERE c.withdrawn_at IS NULL AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.path = c.path)
RETURNING c.id, c.path
"""
_ACTIVE = """
SELECT id, path, alertname, user_id, coalesce(user_name, user_id), created_at, question_vector
FROM corrections WHERE withdrawn_at IS NULL ORDER BY id
"""


@dataclass(frozen=True)
class Correction:
    """One engineer's word on which runbook answers a question."""

    id: int
    path: str
    alertname: str | None
    user: str
    user_name: str
    at: datetime
    vector: np.ndarray


@dataclass(frozen=True)
class Chosen:
    """The runbook corrections put first for a question, and the latest correction behind it."""

    path: str
    by: str  # who made the latest correction for it
    at: datetime
    backers: int  # engineers who named it


async def withdraw_gone(conn: AsyncConnection) -> list[tuple[int, str]]:
    """Withdraw the corrections that name a runbook no longer ingested (ingest calls it in the
    transaction that deletes documents); their ids and paths, each logged."""
    gone = [(cid, path) for cid, path in await (await conn.execute(_WITHDRAW_GONE)).fetchall()]
    for cid, path in gone:
        log.warning("correction %s withdrawn: runbook %s no longer exists", cid, path)
    return gone


async def active_corrections(pool: AsyncConnectionPool) -> list[Correction]:
    """Every correction in force."""
    async with pool.connection() as conn:
        rows = await (await conn.execute(_ACTIVE)).fetchall()
    return [Correction(cid, path, name, user, shown, at, np.asarray(vec, dtype=np.float32))
            for cid, path, name, user, shown, at, vec in rows]


def choose(corrections: Sequence[Correction], alertname: str | None, vector: np.ndarray | None,
           similarity: float = SIMILARITY) -> Chosen | None:
    """The runbook the corrections that apply to this question name: those for the same alert name,
    and those made on questions close to this one; among several, the one backed by the most
    engineers, then the most recently corrected."""
    applying = applying_to(corrections, alertname, vector, similarity)
    if not applying:
        return None
    backers: dict[str, set[str]] = {}
    latest: dict[str, Correction] = {}
    for c in applying:
        backers.setdefault(c.path, set()).add(c.user)
        if c.path not in latest or c.at >= latest[c.path].at:
            latest[c.path] = c
    path = max(backers, key=lambda p: (len(backers[p]), latest[p].at))
    return Chosen(path=path, by=latest[path].user_name, at=latest[path].at, backers=len(backers[path]))


def applying_to(corrections: Sequence[Correction], alertname: str | None, vector: np.ndarray | None,
                similarity: float = SIMILARITY) -> list[Correction]:
    """The corrections that apply to a question: those for the same alert name, and those made on
    questions close to it."""
    name = (alertname or "").strip().lower() or None
    return [c for c in corrections if (name and c.alertname == name) or _close(c, vector, similarity)]


def _close(c: Correction, vector: np.ndarray | None, similarity: float) -> bool:
    if vector is None or c.vector.shape != np.shape(vector):
        return False
    norm = float(np.linalg.norm(c.vector) * np.linalg.norm(vector))
    return norm > 0 and float(c.vector @ vector) / norm >= similarity


class CorrectionsCache:
    """What engineers said about runbooks for questions: the corrections in force and the votes on
    answers to alerts (retrieval/feedback_alerts.py), re-read after `ttl_s` (other replicas') or at
    once after `invalidate` (a correction or vote made in this process applies to the next question)."""

    def __init__(self, pool: AsyncConnectionPool, ttl_s: float = 30.0) -> None:
        self.pool, self.ttl_s = pool, ttl_s
        self._loaded: tuple[list[Correction], list[AlertVote]] | None = None
        self._at = 0.0

    async def current(self) -> list[Correction]:
        """The corrections, from the cache when fresh."""
        return (await self._fresh())[0]

    async def alert_votes(self) -> list[AlertVote]:
        """The votes on answers given under a named alert, from the cache when fresh."""
        return (await self._fresh())[1]

    async def _fresh(self) -> tuple[list[Correction], list[AlertVote]]:
        if self._loaded is None or time.monotonic() - self._at > self.ttl_s:
            self._loaded = (await active_corrections(self.pool), await alert_votes(self.pool))
            self._at = time.monotonic()
        return self._loaded

    def invalidate(self) -> None:
        """Read them again on the next question."""
        self._loaded = None
