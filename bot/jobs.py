"""Scheduled jobs of the serve process (apscheduler): feedback weights, source re-sync, and the
staleness report. Each job is safe with several replicas (Postgres advisory locks) and never
raises into the scheduler: failures are logged with context."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.observability import observe_ingest
from bot.runtime import Runtime
from retrieval.ingest import IngestOptions
from retrieval.search_types import SearchConfig
from retrieval.sync import SourceSpec, staleness_report, sync_source
from retrieval.weights import recompute_if_needed

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobsConfig:
    """What the jobs need; bot/app.py builds it from the settings."""

    search: SearchConfig = field(default_factory=SearchConfig)  # the answers' ranking, for the weights' replay
    ingest: IngestOptions = field(default_factory=IngestOptions)
    sources: tuple[SourceSpec, ...] = ()  # re-synced on the interval
    recompute_minutes: float = 15.0  # 0 = off
    sync_minutes: float = 30.0  # 0 = off
    stale_after_days: int = 180
    stale_min_downvotes: int = 3


async def recompute_job(runtime: Runtime, config: JobsConfig) -> dict[str, Any]:
    """Recompute feedback weights when votes changed."""
    return await recompute_if_needed(runtime.pool, runtime.embedder, config=config.search)


async def sync_job(runtime: Runtime, config: JobsConfig, spec: SourceSpec) -> dict[str, Any]:
    """Pull and ingest one source."""
    result = await sync_source(runtime.pool, runtime.embedder, spec, replace(config.ingest, source=spec.name))
    if "ingest" in result:
        observe_ingest(result["ingest"], result.get("seconds", 0.0))
    return result


async def staleness_job(runtime: Runtime, config: JobsConfig) -> dict[str, Any]:
    """The staleness report, logged for the runbooks' owners."""
    return await staleness_report(runtime.pool, days=config.stale_after_days, min_downvotes=config.stale_min_downvotes)


def _logged(name: str, job: Callable[..., Awaitable[dict[str, Any]]]) -> Callable[..., Awaitable[None]]:
    async def run(*args: Any) -> None:
        try:
            result = await job(*args)
            log.info("job %s: %s", name, json.dumps(result, default=str)[:2000])
        except Exception:
            log.exception("job %s failed", name)
    return run


def build_scheduler(runtime: Runtime, config: JobsConfig) -> AsyncIOScheduler:
    """A scheduler with every enabled job (not started)."""
    scheduler = AsyncIOScheduler(timezone=timezone.utc)
    common: dict[str, Any] = {"max_instances": 1, "coalesce": True, "misfire_grace_time": 300}
    now = datetime.now(timezone.utc)
    if config.recompute_minutes > 0:
        scheduler.add_job(_logged("feedback-recompute", recompute_job), "interval", args=[runtime, config],
                          minutes=config.recompute_minutes, id="feedback-recompute", **common)
    if config.sync_minutes > 0:
        for spec in config.sources:
            scheduler.add_job(_logged(f"sync-{spec.name}", sync_job), "interval", args=[runtime, config, spec],
                              minutes=config.sync_minutes, id=f"sync-{spec.name}", next_run_time=now, **common)
    scheduler.add_job(_logged("staleness-report", staleness_job), "cron", args=[runtime, config], hour=8, minute=0,
                      id="staleness-report", **common)
    return scheduler
