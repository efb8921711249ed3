"""Feedback weighting as pure functions: smoothing, decay, per-user caps, query-local boosts."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from retrieval.feedback_model import FeedbackParams, Vote, apply_feedback, build_model, decay

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
A, B = ("disk-full.md", "h1"), ("redis-memory.md", "h2")
Q_DISK = np.array([1.0, 0.0, 0.0], dtype=np.float32)
Q_REDIS = np.array([0.0, 1.0, 0.0], dtype=np.float32)


def _vote(user: str, sign: int, key=A, days: float = 0.0, vector=Q_DISK) -> Vote:  # type: ignore[no-untyped-def]
    return Vote(user=user, vote=sign, at=NOW - timedelta(days=days), keys=(key,), question_vector=vector)


def test_no_votes_no_boost() -> None:
    model = build_model([], FeedbackParams(), NOW)
    assert model.empty and model.boosts(Q_DISK, [A, B]) == [0.0, 0.0]


def test_up_votes_raise_and_down_votes_lower() -> None:
    model = build_model([_vote(f"u{i}", 1) for i in range(5)] + [_vote(f"d{i}", -1, B) for i in range(5)],
                        FeedbackParams(), NOW)
    up, down = model.boosts(Q_DISK, [A, B])
    assert up > 0 > model.global_boost(B)
    assert model.global_boost(A) > 0 and model.document_boost("disk-full.md") > 0


def test_one_user_cannot_dominate() -> None:
    params = FeedbackParams()
    angry = build_model([_vote("angry", -1) for _ in range(50)], params, NOW)
    crowd = build_model([_vote(f"u{i}", -1) for i in range(5)], params, NOW)
    assert angry.chunk[A].down == pytest.approx(params.user_cap)
    assert abs(angry.global_boost(A)) < abs(crowd.global_boost(A))


def test_single_vote_is_below_the_evidence_threshold_globally() -> None:
    model = build_model([_vote("u", -1)], FeedbackParams(min_weight=1.5), NOW)
    assert model.global_boost(A) == 0.0


def test_old_votes_count_less() -> None:
    assert decay(NOW - timedelta(days=90), NOW, 90) == pytest.approx(0.5)
    fresh = build_model([_vote(f"u{i}", 1) for i in range(3)], FeedbackParams(), NOW)
    stale = build_model([_vote(f"u{i}", 1, days=365) for i in range(3)], FeedbackParams(min_weight=0.1), NOW)
    assert fresh.global_boost(A) > stale.global_boost(A) > 0


def test_local_boost_applies_only_to_similar_questions() -> None:
    model = build_model([_vote(f"u{i}", 1, key=B, vector=Q_REDIS) for i in range(3)], FeedbackParams(), NOW)
    near = model.local_boosts(Q_REDIS)
    far = model.local_boosts(Q_DISK)
    assert near[B] > 0 and B not in far


def test_smoothing_bounds_boosts() -> None:
    params = FeedbackParams()
    model = build_model([_vote(f"u{i}", 1) for i in range(1000)], params, NOW)
    assert model.global_boost(A) <= params.global_strength
    assert sum(model.boosts(Q_DISK, [A])) <= (params.global_strength + params.local_strength + params.doc_strength
                                             + params.local_doc_strength)


def test_apply_feedback_changes_scores_visibly() -> None:
    class Hit:
        def __init__(self, path: str, h: str, score: float) -> None:
            self.document_path, self.text_hash, self.score, self.boosts = path, h, score, {}

    hits = [Hit("redis-memory.md", "h2", 0.6), Hit("disk-full.md", "h1", 0.5)]
    model = build_model([_vote(f"u{i}", 1) for i in range(5)] + [_vote(f"d{i}", -1, B) for i in range(5)],
                        FeedbackParams(), NOW)
    apply_feedback(hits, model, Q_DISK)
    assert hits[1].score > hits[0].score, "the voted chunk now outranks the down-voted one"
    assert hits[1].boosts["feedback"] > 0 > hits[0].boosts["feedback"]
