"""The rule tests judge the rules: the learned second opinion (guardrails/learned.py) is off for them.

A test module that judges the whole check, learned score included (test_learned.py, test_corpora.py,
test_heldout.py), says so with `WITH_LEARNED = True`.
"""

from __future__ import annotations

import pytest

from guardrails import learned


@pytest.fixture(autouse=True)
def _rules_only(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if not getattr(request.module, "WITH_LEARNED", False):
        monkeypatch.setattr(learned, "model", lambda: None)
