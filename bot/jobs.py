"""Scheduled jobs of the serve process (apscheduler): feedback weights, source re-sync, and the
staleness report. Each job is safe with several replicas (Postgres advisory locks) and never
raises into the scheduler: failures are logged with context."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.app import Runtime, ingest_options, search_config
from bot.observability import observe_ingest
from bot.settings import Settings
from retrieval.sync import SourceSpec, staleness_report, sync_source
from retrieval.weights import recompute_if_needed

log = logging.getLogger(__name__)


def source_specs(settings: Settings) -> list[SourceSpec]:
    """The configured sources as sync specs."""
    return [SourceSpec(s.name, s.path.expanduser(), s.pull) for s in settings.sync_sources]


async def recompute_job(runtime: Runtime) -> dict[str, Any]:
    """Recompute feedback weights when votes changed."""
    config = search_config(runtime.settings)
    return await recompute_if_needed(runtime.pool, runtime.embedder, config=config)


async def sync_job(runtime: Runtime, spec: SourceSpec) -> dict[str, Any]:
    """Pull and ingest one source."""
    result = await sync_source(runtime.pool, runtime.embedder, spec, ingest_options(runtime.settings, spec.name))
    if "ingest" in result:
        observe_ingest(result["ingest"], result.get("seconds", 0.0))
    return result


async def staleness_job(runtime: Runtime) -> dict[str, Any]:
    """The staleness report, logged for the runbooks' owners."""
    s = runtime.settings
    return await staleness_report(runtime.pool, days=s.stale_after_days, min_downvotes=s.stale_min_downvotes)


def _logged(name: str, job: Callable[..., Awaitable[dict[str, Any]]]) -> Callable[..., Awaitable[None]]:
    async def run(*args: Any) -> None:
        try:
            result = await job(*args)
            log.info("job %s: %s", name, json.dumps(result, default=str)[:2000])
        except Exception:
            log.exception("job %s failed", name)
    return run


def build_scheduler(runtime: Runtime) -> AsyncIOScheduler:
    """A scheduler with every enabled job (not started)."""
    s = runtime.settings
    scheduler = AsyncIOScheduler(timezone=timezone.utc)
    common: dict[str, Any] = {"max_instances": 1, "coalesce": True, "misfire_grace_time": 300}
    now = datetime.now(timezone.utc)
    if s.feedback_recompute_minutes > 0:
        scheduler.add_job(_logged("feedback-recompute", recompute_job), "interval", args=[runtime],
                          minutes=s.feedback_recompute_minutes, id="feedback-recompute", **common)
    if s.sync_interval_minutes > 0:
        for spec in source_specs(s):
            scheduler.add_job(_logged(f"sync-{spec.name}", sync_job), "interval", args=[runtime, spec],
                              minutes=s.sync_interval_minutes, id=f"sync-{spec.name}", next_run_time=now, **common)
    scheduler.add_job(_logged("staleness-report", staleness_job), "cron", args=[runtime], hour=8, minute=0,
                      id="staleness-report", **common)
    return scheduler
