"""How likely the best hit answers the query: a logistic model over ranking features, one per embedder.

The features mix lexical coverage, names and margins with the dense leg's cosine similarities, and a
cosine means something else for each embedding model (WordLlama's best matches sit near 0.5,
MiniLM's near 0.7): so each embedder has its own weights, fitted the same way by
`bench/fit_confidence.py` on both shared eval corpora at once (typed questions, pasted logs and
alert threads of ../shared/eval/incidents, the templated alert texts of ../shared/eval/*/queries.jsonl,
and a few non-operations questions), each set, kind of input and class weighted equally,
L2-regularised on standardised features, the label being "some runbook answers it". Two thresholds
read the result (SearchConfig): below `min_plausible` nothing is worth showing, below
`min_confidence` the best match is shown as the closest one, not as the answer. An embedder with no
fitted model (a hosted one through litellm) uses the nearest kind's: check the thresholds with
`runbook-bot eval answers` on your own cases.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from retrieval.analyzer import analyze
from retrieval.ranking import K1_PLUS_1, name_coverage
from retrieval.search_types import ScoredChunk

FEATURES = ("cov_top", "cov_max", "dense_top", "dense_max", "agree", "named", "path", "margin", "lex_ratio",
            "gap", "known")


@dataclass(frozen=True)
class ConfidenceModel:
    """Logistic weights over `confidence_features`, fitted for one embedder."""

    name: str
    weights: Mapping[str, float]
    bias: float
    note: str = ""  # when and on what it was fitted, and how well it separates

    def probability(self, features: Mapping[str, float]) -> float:
        """The logistic of the weighted features."""
        z = self.bias + sum(self.weights[name] * value for name, value in features.items())
        return 1.0 / (1.0 + math.exp(-max(min(z, 60.0), -60.0)))


MODELS: dict[str, ConfidenceModel] = {
    "wordllama": ConfidenceModel(
        "wordllama",
        {"cov_top": 2.34, "cov_max": 5.00, "dense_top": 1.15, "dense_max": 2.75, "agree": -0.11, "named": 1.64,
         "path": 0.61, "margin": 1.22, "lex_ratio": 0.40, "gap": 0.98, "known": 1.04},
        -6.95,
        "2026-11-24; trained on one corpus and tested on the other, answerable and unanswerable incident "
        "cases separate with AUC 0.91 and 0.95"),
    "sentence-transformers/all-MiniLM-L6-v2": ConfidenceModel(
        "sentence-transformers/all-MiniLM-L6-v2",
        {"cov_top": 0.473, "cov_max": 4.499, "dense_top": 1.526, "dense_max": 3.704, "agree": 0.216, "named": 1.619,
         "path": 0.442, "margin": 0.966, "lex_ratio": 0.484, "gap": 1.633, "known": 1.375},
        -8.41,
        "2026-11-26 by bench/fit_confidence.py --c 3; trained on one corpus and tested on the other, "
        "answerable and unanswerable incident cases separate with AUC 0.98 and 0.98"),
}
DEFAULT_MODEL = "wordllama"


def model_for(backend: str, model: str) -> ConfidenceModel:
    """The confidence model fitted for an embedder (`sentence-transformers/all-MiniLM-L6-v2`), else
    the one of its backend, else the default."""
    return MODELS.get(f"{backend}/{model}") or MODELS.get(backend) or MODELS[DEFAULT_MODEL]


def confidence_features(
    hits: Sequence[ScoredChunk], query: str, query_idf: float, unknown_idf: float = 0.0, chunks: int = 0,
) -> dict[str, float]:
    """The model's inputs: lexical coverage (of the whole query: words no runbook uses,
    `unknown_idf`, count as unmatched; see search.plain_terms), dense similarity, agreement, names,
    margin, and three that compare the best document with the rest, so they mean the same in a
    corpus of a hundred runbooks and of ten thousand: how far its lexical score stands above the
    tenth document's, how far its fused score stands above the fifth's, and how many of the rarest
    words' worth of the query the index knows."""
    top = hits[0]
    ceiling = (query_idf + unknown_idf) * K1_PLUS_1  # words no runbook uses are words left unmatched
    lex_top = min((h for h in hits if h.lexical_rank), key=lambda h: h.lexical_rank or 0, default=None)
    den_top = min((h for h in hits if h.dense_rank), key=lambda h: h.dense_rank or 0, default=None)
    second = next((h.score for h in hits if h.document_id != top.document_id), 0.0)
    lexical, fused = _by_document(hits)
    max_idf = math.log(1 + (chunks + 0.5) / 0.5) if chunks else 1.0
    return {
        "cov_top": min((top.lexical_score or 0.0) / ceiling, 1.0) if ceiling else 0.0,
        "cov_max": min(max(h.lexical_score or 0.0 for h in hits) / ceiling, 1.0) if ceiling else 0.0,
        "dense_top": top.dense_score or 0.0,
        "dense_max": max(h.dense_score or 0.0 for h in hits),
        "agree": float(bool(lex_top and den_top and lex_top.document_id == den_top.document_id)),
        "named": float("name_match" in top.boosts),
        "path": name_coverage(top, frozenset(analyze(query))),
        "margin": top.score - second,
        "lex_ratio": math.log((lexical[0] + 0.1) / (lexical[min(9, len(lexical) - 1)] + 0.1)),
        "gap": fused[0] - fused[min(4, len(fused) - 1)],
        "known": math.log(1 + query_idf / max_idf),
    }


def _by_document(hits: Sequence[ScoredChunk]) -> tuple[list[float], list[float]]:
    """Each document's best lexical and best fused score, highest first."""
    lexical: dict[int, float] = {}
    fused: dict[int, float] = {}
    for h in hits:
        lexical[h.document_id] = max(lexical.get(h.document_id, 0.0), h.lexical_score or 0.0)
        fused[h.document_id] = max(fused.get(h.document_id, float("-inf")), h.score)
    return sorted(lexical.values(), reverse=True), sorted(fused.values(), reverse=True)


def assess(
    hits: Sequence[ScoredChunk], query: str, query_idf: float, unknown_idf: float = 0.0, chunks: int = 0,
    model: ConfidenceModel | None = None,
) -> tuple[float, dict[str, float]]:
    """How likely the top hit answers the query (the model over `confidence_features`, the default
    embedder's unless given), and the features it read; without hits, 0 and none."""
    if not hits:
        return 0.0, {}
    features = confidence_features(hits, query, query_idf, unknown_idf, chunks)
    return (model or MODELS[DEFAULT_MODEL]).probability(features), features
