"""The confidence models: one per embedder, and the fit that makes them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from retrieval.confidence import DEFAULT_MODEL, FEATURES, MODELS, model_for

REPO = Path(__file__).resolve().parents[2]


def _fit_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("fit_confidence", REPO / "bench" / "fit_confidence.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fit_confidence"] = module
    spec.loader.exec_module(module)
    return module


def test_each_embedder_gets_the_model_fitted_for_it() -> None:
    assert model_for("wordllama", "l2_supercat_256").name == "wordllama"
    assert model_for("sentence-transformers", "all-MiniLM-L6-v2").name == "sentence-transformers/all-MiniLM-L6-v2"
    assert model_for("litellm", "text-embedding-3-small").name == DEFAULT_MODEL, "unknown: the default"
    for model in MODELS.values():
        assert set(model.weights) == set(FEATURES), model.name


def test_a_cosine_means_more_to_the_model_of_a_weaker_embedder() -> None:
    features = {f: 0.0 for f in FEATURES} | {"cov_top": 0.4, "cov_max": 0.4, "dense_top": 0.6, "dense_max": 0.6,
                                               "known": 1.5, "gap": 0.3, "margin": 0.1}
    wordllama, minilm = MODELS["wordllama"], MODELS["sentence-transformers/all-MiniLM-L6-v2"]
    assert 0.0 < minilm.probability(features) < 1.0 and 0.0 < wordllama.probability(features) < 1.0
    assert minilm.probability(features) != wordllama.probability(features)
    assert wordllama.probability({f: 1e6 for f in FEATURES}) > 0.999, "no overflow on absurd inputs"
    assert wordllama.probability({f: -1e6 for f in FEATURES}) < 0.001


def test_the_fit_recovers_which_way_a_feature_points() -> None:
    fit = _fit_module()
    rng = np.random.default_rng(7)
    x = rng.normal(size=(400, 2))
    y = (x[:, 0] - 0.5 * x[:, 1] + rng.normal(scale=0.3, size=400) > 0).astype(float)
    beta = fit.fit_logistic(np.column_stack([np.ones(400), x]), y, np.ones(400), c=10.0)
    assert beta[1] > 1.0 and beta[2] < -0.3
    assert fit.auc(np.array([0.9, 0.8, 0.1]), np.array([True, True, False])) == 1.0
    assert fit.auc(np.array([0.5, 0.5]), np.array([True, False])) == 0.5


def test_cells_weigh_the_same_whatever_their_size() -> None:
    fit = _fit_module()
    zero = tuple(0.0 for _ in FEATURES)
    rows = [fit.Row(zero, True, "a", "typed")] * 3 + [fit.Row(zero, False, "a", "offtopic")] + [
        fit.Row(zero, False, "a", "not-operations")] * 2
    w = fit.weights_of(rows)
    assert np.isclose(w[:3].sum(), 1.0) and np.isclose(w[3], 1.0) and np.isclose(w[4:].sum(), 1 / 3)
