"""Fit the confidence model for the configured embedder (retrieval/confidence.py) on the shared eval sets.

For each set (../shared/eval/NAME: its corpus, queries.jsonl and incidents/NAME.jsonl) the corpus is
ingested into a throw-away database with the embedder the settings name (EMBEDDING_BACKEND,
EMBEDDING_MODEL); every incident case is searched as the bot searches it (the Slack adapter's reading
of the thread, the alert driving the search when the mention says little), every templated alert
text as pasted, and a few questions that are not about operations at all. The confidence features of
each search and whether some runbook answers it make one row. Rows are weighted so that each set,
kind of input and class counts the same (the non-operations questions a third), and an L2-regularised
logistic regression on standardised features is fitted by Newton's method.

Printed: the separation (AUC) of answerable from unanswerable incident cases when trained on the
other sets only, what the bot would do with the fitted model at the configured thresholds, and the
model as the Python literal that retrieval/confidence.py takes; the last line is JSON.

Run: EMBEDDING_BACKEND=sentence-transformers python bench/fit_confidence.py [--sets NAME ...] [--c 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bot.app import make_answerer, make_embedder
from bot.measure.answer_eval import case_question, load_cases
from bot.measure.databases import ingested_corpus
from bot.measure.evaluate import load_queries
from bot.settings import Settings
from retrieval.confidence import FEATURES, model_for
from retrieval.embed import CachedEmbedder
from retrieval.search import hybrid_search

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
INCIDENT_KINDS = ("typed", "pasted", "thread", "offtopic")
# Questions no operations runbook answers, whatever the corpus: the far end of "unanswerable".
NOT_OPERATIONS = (
    "what's a good recipe for banana bread", "who won the football world cup in 2010",
    "how do i file my expense report for the team offsite", "recommend a good book about sailing",
    "what time is the all hands meeting tomorrow", "translate good morning into japanese",
    "write a short poem about autumn leaves", "how tall is mount everest",
    "my laptop keyboard is sticky after i spilled coffee on it", "which hotel is closest to the conference venue",
    "can you summarise the plot of hamlet", "what's the capital of australia",
)


@dataclass(frozen=True)
class Row:
    """One search: its features, whether some runbook answers it, and where it came from."""

    features: tuple[float, ...]
    answerable: bool
    corpus: str
    kind: str


async def collect(settings: Settings, name: str) -> list[Row]:
    """The rows of one eval set, searched with the configured embedder."""
    root = EVAL / name
    cases = load_cases(EVAL / "incidents" / f"{name}.jsonl")
    queries = load_queries(root / "queries.jsonl")
    embedder = CachedEmbedder(make_embedder(settings), size=8192)
    quiet = settings.model_copy(update={"feedback_enabled": False, "record_answers": False})
    rows: list[Row] = []
    async with ingested_corpus(settings, embedder, root / "corpus", "fit") as pool:
        config = make_answerer(quiet, pool, embedder, None).search_config
        searches: list[tuple[str, bool, str]] = []
        for case in cases:
            asked = case_question(case, "C0FIT")
            text = asked[1].search_query(asked[0]) if asked else case.ask
            searches.append((text, case.answerable, case.kind))
        searches += [(q.text, bool(q.relevant), f"templated-{q.variant or 'text'}") for q in queries]
        searches += [(q, False, "not-operations") for q in NOT_OPERATIONS]
        for text, answerable, kind in searches:
            result = await hybrid_search(pool, embedder, text, k=5, config=config)
            values = tuple(result.features.get(f, 0.0) for f in FEATURES)
            rows.append(Row(values, answerable, name, kind))
    return rows


def weights_of(rows: list[Row]) -> np.ndarray:
    """Each (corpus, kind, class) cell weighs the same; the non-operations questions a third."""
    cells = Counter((r.corpus, r.kind, r.answerable) for r in rows)
    return np.array([(1 / 3 if r.kind == "not-operations" else 1.0) / cells[(r.corpus, r.kind, r.answerable)]
                     for r in rows])


def fit_logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray, c: float = 1.0, steps: int = 50) -> np.ndarray:
    """Weighted L2-regularised logistic regression by Newton's method; x has a leading column of ones
    (the bias, not regularised). Returns the coefficients."""
    beta = np.zeros(x.shape[1])
    penalty = np.eye(x.shape[1]) / c
    penalty[0, 0] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(x @ beta, -60, 60)))
        gradient = x.T @ (w * (y - p)) - penalty @ beta
        hessian = (x.T * (w * p * (1 - p))) @ x + penalty
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if np.abs(step).max() < 1e-8:
            break
    return beta


@dataclass(frozen=True)
class Fitted:
    """A model on the raw features (weights, bias), from a fit on standardised ones."""

    weights: dict[str, float]
    bias: float

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Probabilities for raw feature rows."""
        z = self.bias + x @ np.array([self.weights[f] for f in FEATURES])
        return 1 / (1 + np.exp(-np.clip(z, -60, 60)))


def fit(rows: list[Row], c: float) -> Fitted:
    """The model fitted on these rows, expressed on the raw features."""
    x = np.array([r.features for r in rows])
    y = np.array([float(r.answerable) for r in rows])
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    beta = fit_logistic(np.column_stack([np.ones(len(x)), (x - mean) / scale]), y, weights_of(rows), c)
    raw = beta[1:] / scale
    return Fitted({f: round(float(v), 3) for f, v in zip(FEATURES, raw)}, round(float(beta[0] - raw @ mean), 3))


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Area under the ROC curve (ties count half)."""
    pos, neg = scores[labels], scores[~labels]
    if not len(pos) or not len(neg):
        return math.nan
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(wins / (len(pos) * len(neg)))


def report(rows: list[Row], model: Fitted, low: float, high: float) -> dict[str, Any]:
    """Per corpus: abstention on the incident cases at `low`, on the templated texts at `high`."""
    out: dict[str, Any] = {}
    for corpus in sorted({r.corpus for r in rows}):
        incident = [r for r in rows if r.corpus == corpus and r.kind in INCIDENT_KINDS]
        templated = [r for r in rows if r.corpus == corpus and r.kind.startswith("templated")]
        out[corpus] = {"incidents": _abstention(incident, model, low), "templated": _abstention(templated, model, high)}
    return out


def _abstention(rows: list[Row], model: Fitted, threshold: float) -> dict[str, float]:
    if not rows:
        return {}
    p = model.predict(np.array([r.features for r in rows]))
    answerable = np.array([r.answerable for r in rows])
    abstains = p < threshold
    return {"abstained_on_answerable": round(float(abstains[answerable].mean()), 3) if answerable.any() else 0.0,
            "abstain_precision": round(float((~answerable[abstains]).mean()), 3) if abstains.any() else 0.0,
            "abstain_recall": round(float(abstains[~answerable].mean()), 3) if (~answerable).any() else 0.0}


def held_out_auc(rows: list[Row], c: float) -> dict[str, float]:
    """Per corpus: trained on the others, how well its incident cases separate."""
    corpora = sorted({r.corpus for r in rows})
    out = {}
    for corpus in corpora if len(corpora) > 1 else []:
        model = fit([r for r in rows if r.corpus != corpus], c)
        test = [r for r in rows if r.corpus == corpus and r.kind in INCIDENT_KINDS]
        out[corpus] = round(auc(model.predict(np.array([r.features for r in test])),
                                np.array([r.answerable for r in test])), 3)
    return out


async def main() -> None:
    """Collect, fit, report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["prometheus-operator", "gitlab"])
    parser.add_argument("--c", type=float, default=1.0, help="inverse strength of the L2 penalty")
    args = parser.parse_args()
    settings = Settings()
    rows = [row for name in args.sets for row in await collect(settings, name)]
    model = fit(rows, args.c)
    embedder = make_embedder(settings)
    current = model_for(embedder.backend, embedder.model)
    in_use = Fitted(dict(current.weights), current.bias)
    found = {"embedder": f"{embedder.backend}/{embedder.model}", "rows": len(rows),
             "held_out_auc": held_out_auc(rows, args.c), "weights": model.weights, "bias": model.bias,
             "at_thresholds": report(rows, model, settings.min_plausible, settings.min_confidence),
             "model_in_use": current.name,
             "model_in_use_at_thresholds": report(rows, in_use, settings.min_plausible, settings.min_confidence)}
    print(f"held-out AUC (answerable vs not, incident cases): {found['held_out_auc']}", file=sys.stderr)
    print(json.dumps(found))


if __name__ == "__main__":
    asyncio.run(main())
