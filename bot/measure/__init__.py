"""Measurement, not run time: retrieval and answer evals, benchmarks, synthetic corpora, feedback
replay. The CLI imports these lazily; nothing that answers a question imports them."""
