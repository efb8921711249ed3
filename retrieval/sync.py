"""Keeping sources fresh: pull a git working tree (if it is one), then ingest incrementally, never
two syncs of one source at once (a Postgres advisory lock, so several replicas are safe); and the
staleness report for runbook owners."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from psycopg_pool import AsyncConnectionPool

from retrieval import store
from retrieval.embed import Embedder
from retrieval.ingest import IngestOptions, IngestRefused, NotASource, describe, ingest

log = logging.getLogger(__name__)
LOCK_SYNC = 7_310_003  # with hashtext(source name) as the second key


@dataclass(frozen=True)
class SourceSpec:
    """A configured source: a directory, or a git working tree to pull first."""

    name: str
    path: Path
    pull: bool = True  # `git pull --ff-only` when the path is a git working tree


async def _git_pull(path: Path, timeout_s: float = 120.0) -> str | None:
    """Pull a working tree; returns an error message, or None on success (or when not a repo)."""
    if not (path / ".git").exists():
        return None
    proc = await asyncio.create_subprocess_exec(
        "git", "-C", str(path), "pull", "--ff-only", "--quiet",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        _, err = await asyncio.wait_for(proc.communicate(), timeout_s)
    except TimeoutError:
        proc.kill()
        return f"git pull timed out after {timeout_s:.0f}s"
    return None if proc.returncode == 0 else f"git pull failed: {err.decode(errors='replace').strip()[:500]}"


async def sync_source(
    pool: AsyncConnectionPool, embedder: Embedder, spec: SourceSpec, options: IngestOptions,
) -> dict[str, Any]:
    """Pull and ingest one source unless another process is syncing it; a summary either way."""
    started = time.perf_counter()
    async with pool.connection() as lock_conn:
        got = await (await lock_conn.execute(
            "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (LOCK_SYNC, spec.name))).fetchone()
        if not (got and got[0]):
            return {"source": spec.name, "status": "skipped", "reason": "another sync of this source is running"}
        try:
            return await _sync_locked(pool, embedder, spec, options, started)
        finally:
            await lock_conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (LOCK_SYNC, spec.name))


async def _sync_locked(
    pool: AsyncConnectionPool, embedder: Embedder, spec: SourceSpec, options: IngestOptions, started: float,
) -> dict[str, Any]:
    pull_error = await _git_pull(spec.path) if spec.pull else None
    if pull_error:
        log.warning("source %s: %s (ingesting what is on disk)", spec.name, pull_error)
    if not spec.path.exists():
        await _record_failure(pool, spec, f"path {spec.path} does not exist")
        return {"source": spec.name, "status": "failed", "error": f"path {spec.path} does not exist"}
    try:
        summary = describe(await ingest(pool, embedder, [spec.path], replace(options, source=spec.name)))
    except IngestRefused as exc:  # e.g. the tree lost every runbook: nothing was deleted
        log.warning("source %s: %s", spec.name, exc)
        if isinstance(exc, NotASource):  # refused before its run was recorded
            await _record_failure(pool, spec, str(exc))
        return {"source": spec.name, "status": "failed", "pull_error": pull_error, "error": str(exc)}
    status = "failed" if summary["failed"] or pull_error else "ok"
    return {"source": spec.name, "status": status, "pull_error": pull_error, "ingest": summary,
            "seconds": round(time.perf_counter() - started, 2)}


async def _record_failure(pool: AsyncConnectionPool, spec: SourceSpec, error: str) -> None:
    async with pool.connection() as conn, conn.transaction():
        source_id = await store.ensure_source(conn, spec.name, "directory", str(spec.path))
        run_id = await store.start_run(conn, source_id)
        zero = dict.fromkeys(("added", "updated", "unchanged", "deleted", "skipped", "failed"), 0)
        await store.finish_run(conn, run_id, {**zero, "failed": 1}, {"error": error})


_STALE = """
SELECT d.path, d.title, src.name, d.metadata->>'owner', d.updated_at,
       (now() - d.updated_at) AS age
FROM documents d JOIN sources src ON src.id = d.source_id
WHERE d.updated_at < now() - make_interval(days => %(days)s)
ORDER BY d.updated_at
LIMIT %(limit)s
"""
_DOWNVOTED = """
SELECT k->>'path' AS path, max(d.title), max(d.metadata->>'owner'),
       count(*) FILTER (WHERE f.vote < 0) AS down, count(*) FILTER (WHERE f.vote > 0) AS up
FROM feedback f CROSS JOIN LATERAL jsonb_array_elements(f.cited_keys) k
LEFT JOIN documents d ON d.path = k->>'path'
WHERE f.updated_at > now() - make_interval(days => %(window)s)
GROUP BY 1
HAVING count(*) FILTER (WHERE f.vote < 0) >= %(min_down)s
ORDER BY down DESC, up
LIMIT %(limit)s
"""


async def staleness_report(
    pool: AsyncConnectionPool, *, days: int = 180, min_downvotes: int = 3, window_days: int = 90, limit: int = 50,
) -> dict[str, Any]:
    """Runbooks not updated for `days`, and runbooks often cited in 👎 answers, with owners."""
    async with pool.connection() as conn:
        stale = await (await conn.execute(_STALE, {"days": days, "limit": limit})).fetchall()
        down = await (await conn.execute(
            _DOWNVOTED, {"window": window_days, "min_down": min_downvotes, "limit": limit})).fetchall()
    return {
        "stale": [{"path": p, "title": t, "source": s, "owner": o, "updated_at": u.isoformat(), "age_days": a.days}
                  for p, t, s, o, u, a in stale],
        "downvoted": [{"path": p, "title": t, "owner": o, "down": dn, "up": up} for p, t, o, dn, up in down],
        "days": days, "min_downvotes": min_downvotes,
    }
