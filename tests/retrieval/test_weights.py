"""Feedback weights through the real tables: votes change what search returns, versioned."""

from __future__ import annotations

import pytest

from bot.measure.evaluate import Query
from bot.records.feedback import Vote, record_vote
from bot.answer import answer_citing
from bot.records.answers import record_answer
from bot.measure.replay import ReplayOptions, alert_group, replay, split
from retrieval.search import hybrid_search
from retrieval.weights import FitOptions, WeightsCache, explain, load_active, recompute

QUESTION = "pods keep restarting after being killed for using too much memory"


async def _vote_for(pool, chunk_id: int, question: str, sign: int, users: list[str]) -> None:  # type: ignore[no-untyped-def]
    answer_id = await record_answer(pool, answer_citing(question, [chunk_id], confidence=0.5, mode="llm"),
                                    entry_point="slack")
    for user in users:
        await record_vote(pool, Vote("slack", "C1", f"ts-{answer_id}", user, answer_id, sign))


async def test_votes_reorder_results_for_similar_questions(examples_pool, embedder) -> None:
    plain = await hybrid_search(examples_pool, embedder, QUESTION, k=5)
    docs = list(dict.fromkeys(h.document_path for h in plain.chunks))
    assert len(docs) >= 2
    top, runner_up = plain.chunks[0], next(h for h in plain.chunks if h.document_path != plain.chunks[0].document_path)
    await _vote_for(examples_pool, runner_up.chunk_id, QUESTION, +1, ["ana", "bo", "cy", "di"])
    await _vote_for(examples_pool, top.chunk_id, QUESTION, -1, ["ana", "bo", "cy"])
    summary = await recompute(examples_pool, embedder)
    assert summary["votes"] == 7 and summary["chunks"] == 2 and summary["lexical_weight"] is None
    model = await load_active(examples_pool)
    voted = await hybrid_search(examples_pool, embedder, QUESTION, k=5, feedback=model)
    assert voted.chunks[0].document_path == runner_up.document_path
    assert voted.chunks[0].boosts["feedback"] > 0
    shown = explain(model)
    assert shown["boosts"][0]["path"] == runner_up.document_path
    assert shown["penalties"][0]["path"] == top.document_path
    unrelated = await hybrid_search(examples_pool, embedder, "x509: certificate has expired", k=3, feedback=model)
    assert unrelated.chunks[0].document_path == "tls-certificate-expiry.md", "votes elsewhere do not leak"


async def test_one_angry_user_cannot_bury_the_right_answer(examples_pool, embedder) -> None:
    plain = await hybrid_search(examples_pool, embedder, QUESTION, k=5)
    for _ in range(20):
        await _vote_for(examples_pool, plain.chunks[0].chunk_id, QUESTION, -1, ["angry"])
    await recompute(examples_pool, embedder)
    voted = await hybrid_search(examples_pool, embedder, QUESTION, k=5, feedback=await load_active(examples_pool))
    assert voted.chunks[0].document_path == plain.chunks[0].document_path


async def test_versions_and_cache(examples_pool, embedder) -> None:
    cache = WeightsCache(examples_pool, ttl_s=0)
    assert (await cache.current()).version is None and (await cache.current()).empty
    chunk = (await hybrid_search(examples_pool, embedder, QUESTION, k=1)).chunks[0]
    await _vote_for(examples_pool, chunk.chunk_id, QUESTION, +1, ["ana"])
    first = (await recompute(examples_pool, embedder))["version"]
    assert (await cache.current()).version == first
    second = (await recompute(examples_pool, embedder))["version"]
    assert second > first and (await cache.current()).version == second
    async with examples_pool.connection() as conn:
        active = await (await conn.execute("SELECT id FROM feedback_weight_versions WHERE active")).fetchall()
    assert active == [(second,)]


async def test_fusion_weight_is_refit_only_with_enough_voted_questions(examples_pool, embedder) -> None:
    chunk = (await hybrid_search(examples_pool, embedder, QUESTION, k=1)).chunks[0]
    await _vote_for(examples_pool, chunk.chunk_id, QUESTION, +1, ["ana"])
    summary = await recompute(examples_pool, embedder, fit=FitOptions(min_answers=2))
    assert summary["fit"]["lexical_weight"] is None and "1 voted questions < 2" in summary["fit"]["reason"]
    summary = await recompute(examples_pool, embedder, fit=FitOptions(min_answers=1, min_gain=-1.0))
    assert set(summary["fit"]["scores"]) >= {"0.5", "0.7", "0.9"}
    assert summary["lexical_weight"] is not None, "a re-fit weight is stored when it wins"


def test_split_keeps_an_alert_and_its_rewording_together() -> None:
    queries = [Query(f"Alert{n}-{i}-{v}", "q", ("a.md",), v) for n in range(20) for i in (0,) for v in ("desc", "alert")]
    train, held_out = split(queries)
    assert train and held_out
    assert not {alert_group(q.id) for q in train} & {alert_group(q.id) for q in held_out}


@pytest.mark.parametrize("wrong", [0.0, 0.3])
async def test_replay_reports_before_and_after(examples_pool, embedder, wrong: float) -> None:
    queries = [
        Query("Disk-0-desc", "no space left on device on /var/lib/docker", ("disk-full.md",), "desc"),
        Query("Disk-0-alert", "NodeFilesystemAlmostOutOfSpace firing", ("disk-full.md",), "alert"),
        Query("Tls-0-desc", "certificate expired on the ingress", ("tls-certificate-expiry.md",), "desc"),
        Query("Redis-0-desc", "redis used memory above maxmemory, OOM command not allowed", ("redis-memory.md",), "desc"),
        Query("Kafka-0-desc", "consumer group lag keeps growing", ("kafka-consumer-lag.md",), "desc"),
        Query("Dns-0-desc", "pods cannot resolve service names, NXDOMAIN", ("dns-resolution-failures.md",), "desc"),
        Query("Node-0-desc", "node NotReady kubelet stopped posting status", ("node-not-ready.md",), "desc"),
        Query("Crash-0-desc", "pod in CrashLoopBackOff", ("k8s-pod-crashloop.md",), "desc"),
    ]
    result = await replay(examples_pool, embedder, queries, options=ReplayOptions(wrong_vote_rate=wrong))
    assert set(result) >= {"before", "after", "held_out_queries"}
    assert result["held_out_queries"] + result["train_queries"] == len(queries)
    assert result["votes"] > 0 and 0.0 <= result["after"]["recall@1"] <= 1.0
    assert result["after"]["mrr@10"] >= result["before"]["mrr@10"] - 0.15
