"""Scheduled jobs: source re-sync from a git repository, locking, staleness, the weights job."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bot.answer import answer_citing
from bot.app import jobs_config, make_answerer
from bot.jobs import JobsConfig, build_scheduler, recompute_job, staleness_job, sync_job
from bot.records.answers import record_answer
from bot.records.feedback import Vote, record_vote
from bot.runtime import Runtime
from bot.settings import Settings, SyncSource
from retrieval.ingest import IngestOptions
from retrieval.search import hybrid_search
from retrieval.sync import LOCK_SYNC, SourceSpec, sync_source
from tests.conftest import EXAMPLES


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True,
                   capture_output=True)


@pytest.fixture
def repos(tmp_path: Path) -> tuple[Path, Path]:
    """An 'origin' repository of runbooks and a working tree cloned from it."""
    origin = tmp_path / "origin"
    shutil.copytree(EXAMPLES, origin)
    _git(origin, "init", "-q", "-b", "main")
    _git(origin, "add", ".")
    _git(origin, "commit", "-q", "-m", "runbooks")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, capture_output=True)
    return origin, clone


def _runtime(pool, embedder, **settings) -> tuple[Runtime, JobsConfig]:  # type: ignore[no-untyped-def]
    """The runtime and the jobs' configuration, wired from settings as `runbook-bot serve` does."""
    s = Settings(_env_file=None, **settings)
    return Runtime(pool, embedder, make_answerer(s, pool, embedder, None)), jobs_config(s)


async def test_sync_pulls_then_ingests_incrementally(pool, embedder, repos) -> None:
    origin, clone = repos
    runtime, config = _runtime(pool, embedder)
    spec = SourceSpec("platform", clone)
    first = await sync_job(runtime, config, spec)
    assert first["status"] == "ok" and first["ingest"]["added"] == len(list(EXAMPLES.glob("*.md")))
    (origin / "cert-manager-stuck.md").write_text("# cert-manager stuck\n\n## Fix\n\n1. Restart the controller.\n")
    (origin / "dns-resolution-failures.md").unlink()
    _git(origin, "add", "-A")
    _git(origin, "commit", "-q", "-m", "change")
    second = await sync_job(runtime, config, spec)
    assert second["status"] == "ok" and second["pull_error"] is None
    assert second["ingest"]["added"] == 1 and second["ingest"]["deleted"] == 1
    hit = (await hybrid_search(pool, embedder, "cert-manager stuck", k=1)).chunks[0]
    assert hit.document_path == "cert-manager-stuck.md" and hit.source == "platform"
    async with pool.connection() as conn:
        runs = await (await conn.execute("SELECT added, deleted, finished_at IS NOT NULL FROM ingest_runs"
                                         " ORDER BY id")).fetchall()
    assert runs[-1] == (1, 1, True), "each run is recorded"


async def test_pull_failure_is_recorded_and_the_tree_still_ingests(pool, embedder, repos) -> None:
    origin, clone = repos
    shutil.rmtree(origin)  # the remote is gone
    result = await sync_source(pool, embedder, SourceSpec("platform", clone), IngestOptions())
    assert result["status"] == "failed" and "git pull failed" in result["pull_error"]
    assert result["ingest"]["added"] > 0, "what is on disk is still ingested"


async def test_missing_path_is_a_recorded_failure(pool, embedder, tmp_path: Path) -> None:
    result = await sync_source(pool, embedder, SourceSpec("gone", tmp_path / "nope"), IngestOptions())
    assert result["status"] == "failed" and "does not exist" in result["error"]
    async with pool.connection() as conn:
        row = await (await conn.execute("SELECT failed, details->>'error' FROM ingest_runs")).fetchone()
    assert row is not None and row[0] == 1 and "does not exist" in row[1]


async def test_two_syncs_of_one_source_never_run_at_once(pool, embedder, repos) -> None:
    _, clone = repos
    async with pool.connection() as holder:
        await holder.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (LOCK_SYNC, "platform"))
        result = await sync_source(pool, embedder, SourceSpec("platform", clone), IngestOptions())
        await holder.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (LOCK_SYNC, "platform"))
    assert result["status"] == "skipped"
    other = await sync_source(pool, embedder, SourceSpec("other", clone), IngestOptions())
    assert other["status"] == "ok", "another source is not blocked"


async def test_staleness_report_lists_old_and_downvoted_runbooks(examples_pool, embedder) -> None:
    async with examples_pool.connection() as conn:
        await conn.execute("UPDATE documents SET updated_at = now() - interval '400 days' WHERE path = 'oom-killed.md'")
    chunk = (await hybrid_search(examples_pool, embedder, "kafka consumer lag", k=1)).chunks[0]
    answer_id = await record_answer(examples_pool, answer_citing("lag", [chunk.chunk_id], confidence=0.5, mode="llm"),
                                    entry_point="slack")
    for user in ("a", "b", "c"):
        await record_vote(examples_pool, Vote("slack", "C1", "1.0", user, answer_id, -1))
    report = await staleness_job(*_runtime(examples_pool, embedder, stale_after_days=365))
    assert [r["path"] for r in report["stale"]] == ["oom-killed.md"]
    assert report["stale"][0]["owner"] and report["stale"][0]["age_days"] >= 400
    assert report["downvoted"][0]["path"] == "kafka-consumer-lag.md" and report["downvoted"][0]["down"] == 3


async def test_weights_job_recomputes_only_when_votes_changed(examples_pool, embedder) -> None:
    runtime, config = _runtime(examples_pool, embedder)
    assert (await recompute_job(runtime, config))["status"] == "skipped"
    chunk = (await hybrid_search(examples_pool, embedder, "disk full", k=1)).chunks[0]
    answer_id = await record_answer(examples_pool, answer_citing("disk full", [chunk.chunk_id], confidence=0.5,
                                                                 mode="llm"), entry_point="slack")
    await record_vote(examples_pool, Vote("slack", "C1", "2.0", "a", answer_id, 1))
    assert (await recompute_job(runtime, config))["status"] == "ok"
    assert (await recompute_job(runtime, config))["reason"] == "no new votes"


def test_scheduler_has_the_configured_jobs(pool, embedder, tmp_path: Path) -> None:
    wired = _runtime(pool, embedder, sync_sources=[SyncSource(name="platform", path=tmp_path)],
                       feedback_recompute_minutes=5, sync_interval_minutes=10)
    jobs = {j.id: j for j in build_scheduler(*wired).get_jobs()}
    assert set(jobs) == {"feedback-recompute", "sync-platform", "staleness-report"}
    assert jobs["sync-platform"].max_instances == 1
    off = _runtime(pool, embedder, feedback_recompute_minutes=0)
    assert {j.id for j in build_scheduler(*off).get_jobs()} == {"staleness-report"}
