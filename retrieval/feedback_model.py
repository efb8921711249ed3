"""Votes into reranking boosts: a Bayesian-smoothed helpfulness per runbook chunk and document,
globally and near similar past questions (a soft query cluster). Pure: no SQL, no I/O.

A vote on an answer credits (or blames) the chunks the answer cited, the first one fully and the
n-th with weight 1/n (an answer leads with its first source). Each vote's weight decays
with age (half-life), and one user's votes on one chunk count at most `user_cap` in total, so one
engineer (or one angry click) cannot dominate. Helpfulness is the posterior mean of a
Beta(prior_a, prior_b) updated with the weighted up and down votes; a boost is its distance from
the prior mean, scaled, so a chunk nobody voted on gets exactly zero.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

Key = tuple[str, str]  # (document path, chunk text hash): survives re-ingestion


@dataclass(frozen=True)
class FeedbackParams:
    """Knobs of the weighting (defaults checked by `runbook-bot feedback replay`)."""

    prior_a: float = 2.0
    prior_b: float = 2.0
    half_life_days: float = 90.0
    user_cap: float = 1.0  # total weight of one user's votes on one key
    min_weight: float = 1.0  # evidence needed before a key gets a global boost
    global_strength: float = 0.05  # max |boost| from a chunk's overall helpfulness
    local_strength: float = 0.30  # max |boost| from votes on similar questions
    doc_strength: float = 0.03  # max |boost| from the document's overall helpfulness
    local_doc_strength: float = 0.15  # max |boost| from votes on the document near similar questions
    similarity: float = 0.80  # cosine above which a past question counts as "the same kind"


@dataclass(frozen=True)
class Vote:
    """One user's vote on one answer, with what the answer cited."""

    user: str
    vote: int  # +1 or -1
    at: datetime
    keys: tuple[Key, ...]
    question_vector: np.ndarray | None = None


@dataclass
class Evidence:
    """Weighted up and down votes."""

    up: float = 0.0
    down: float = 0.0

    def helpful(self, params: FeedbackParams) -> float:
        """Posterior mean of the Beta prior after these votes."""
        return (params.prior_a + self.up) / (params.prior_a + params.prior_b + self.up + self.down)

    @property
    def total(self) -> float:
        """All weight seen."""
        return self.up + self.down


def _prior_mean(params: FeedbackParams) -> float:
    return params.prior_a / (params.prior_a + params.prior_b)


def decay(at: datetime, now: datetime, half_life_days: float) -> float:
    """Weight of a vote cast at `at`, seen at `now`."""
    age_days = max((now - at).total_seconds() / 86_400, 0.0)
    return math.pow(0.5, age_days / half_life_days)


def capped_votes(votes: list[Vote], params: FeedbackParams, now: datetime) -> list[tuple[Vote, Key, float]]:
    """(vote, key, signed weight) after decay, with each user's net weight per key capped."""
    by_user_key: dict[tuple[str, Key], list[tuple[Vote, float]]] = defaultdict(list)
    for v in votes:
        w = decay(v.at, now, params.half_life_days) * (1 if v.vote > 0 else -1)
        for position, key in enumerate(v.keys):
            # An answer leads with its first source: a vote is mostly about it.
            by_user_key[(v.user, key)].append((v, w / (position + 1)))
    out: list[tuple[Vote, Key, float]] = []
    for (_, key), items in by_user_key.items():
        total = sum(abs(w) for _, w in items)
        scale = min(1.0, params.user_cap / total) if total else 0.0
        out.extend((v, key, w * scale) for v, w in items)
    return out


@dataclass
class FeedbackModel:
    """Boosts for chunks and documents, and the examples behind the query-local part."""

    params: FeedbackParams = field(default_factory=FeedbackParams)
    chunk: dict[Key, Evidence] = field(default_factory=dict)
    document: dict[str, Evidence] = field(default_factory=dict)
    example_vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    example_keys: list[Key] = field(default_factory=list)
    example_weights: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    lexical_weight: float | None = None  # re-fitted fusion weight, if enough feedback
    version: int | None = None

    @property
    def empty(self) -> bool:
        """True when there is nothing to apply."""
        return not self.chunk and self.lexical_weight is None

    def global_boost(self, key: Key) -> float:
        """The chunk's boost from all its votes (zero below the evidence threshold)."""
        ev = self.chunk.get(key)
        if ev is None or ev.total < self.params.min_weight:
            return 0.0
        return self.params.global_strength * 2 * (ev.helpful(self.params) - _prior_mean(self.params))

    def document_boost(self, path: str) -> float:
        """The document's boost from all votes on its chunks."""
        ev = self.document.get(path)
        if ev is None or ev.total < self.params.min_weight:
            return 0.0
        return self.params.doc_strength * 2 * (ev.helpful(self.params) - _prior_mean(self.params))

    def local_evidence(self, query_vector: np.ndarray | None) -> tuple[dict[Key, Evidence], dict[str, Evidence]]:
        """Votes on questions similar to this one, weighted by similarity, per key and per document."""
        chunks: dict[Key, Evidence] = {}
        docs: dict[str, Evidence] = {}
        if query_vector is None or not self.example_keys:
            return chunks, docs
        sims = self.example_vectors @ np.asarray(query_vector, dtype=np.float32)
        t = self.params.similarity
        closeness = np.clip((sims - t) / (1 - t), 0.0, 1.0)
        for i in np.flatnonzero(closeness > 0):
            w = float(self.example_weights[i] * closeness[i])
            key = self.example_keys[i]
            for ev in (chunks.setdefault(key, Evidence()), docs.setdefault(key[0], Evidence())):
                if w > 0:
                    ev.up += w
                else:
                    ev.down -= w
        return chunks, docs

    def local_boosts(self, query_vector: np.ndarray | None) -> dict[Key, float]:
        """Boosts from votes on questions similar to this one, by key."""
        chunks, _ = self.local_evidence(query_vector)
        return {k: self._scaled(ev, self.params.local_strength) for k, ev in chunks.items()}

    def _scaled(self, ev: Evidence, strength: float) -> float:
        return strength * 2 * (ev.helpful(self.params) - _prior_mean(self.params))

    def boosts(self, query_vector: np.ndarray | None, keys: list[Key]) -> list[float]:
        """Total boost per (path, text_hash) key for one query."""
        chunks, docs = self.local_evidence(query_vector)
        p = self.params
        return [
            self.global_boost(k) + self.document_boost(k[0])
            + (self._scaled(chunks[k], p.local_strength) if k in chunks else 0.0)
            + (self._scaled(docs[k[0]], p.local_doc_strength) if k[0] in docs else 0.0)
            for k in keys
        ]


def build_model(votes: list[Vote], params: FeedbackParams, now: datetime) -> FeedbackModel:
    """Aggregate votes into a model."""
    model = FeedbackModel(params=params)
    vectors: list[np.ndarray] = []
    for vote, key, w in capped_votes(votes, params, now):
        for table, k in ((model.chunk, key), (model.document, key[0])):
            ev = table.setdefault(k, Evidence())  # type: ignore[attr-defined]
            if w > 0:
                ev.up += w
            else:
                ev.down -= w
        if vote.question_vector is not None:
            vectors.append(np.asarray(vote.question_vector, dtype=np.float32))
            model.example_keys.append(key)
            model.example_weights = np.append(model.example_weights, np.float32(w))
    if vectors:
        model.example_vectors = np.vstack(vectors)
    return model


def apply_feedback(hits: list, model: FeedbackModel, query_vector: np.ndarray | None) -> None:  # type: ignore[type-arg]
    """Add each hit's feedback boost to its score (visible as boosts["feedback"])."""
    if model.empty or not hits:
        return
    keys = [(h.document_path, h.text_hash) for h in hits]
    for hit, boost in zip(hits, model.boosts(query_vector, keys)):
        if boost:
            hit.boosts["feedback"] = round(boost, 4)
            hit.score += boost
