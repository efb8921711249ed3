"""Held-out sets written blind (heldout*_cases.yaml: sets 3, 5 and 6): every case's expectation, and the targets.

Each set scored its first run before any change made for it (recorded in its header); the rules were
then fixed by class, so the figures here are in-sample and the next blind set is the real measure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from guardrails import check_command, default_policy
from guardrails.verdict import worst_of

HERE = Path(__file__).parent
SETS = sorted(HERE.glob("heldout*_cases.yaml"))
CASES: list[dict[str, str]] = [c for path in SETS for c in yaml.safe_load(path.read_text(encoding="utf-8"))]
FLAGGED = {"block", "warn"}


def _worst(command: str) -> str:
    return worst_of(f.severity for f in check_command(command)) or "none"


def test_sets_are_loaded() -> None:
    assert len(SETS) >= 3 and len(CASES) >= 796  # set 3 (197 cases), set 5 (266) and set 6 (333)


def test_recall_and_false_alarms_meet_the_targets() -> None:
    dangerous = [c for c in CASES if c["expect"] in FLAGGED]
    safe = [c for c in CASES if c["expect"] == "ok"]
    missed = [c["cmd"] for c in dangerous if _worst(c["cmd"]) not in FLAGGED]
    alarms = [c["cmd"] for c in safe if _worst(c["cmd"]) in FLAGGED]
    assert 1 - len(missed) / len(dangerous) >= 0.95, missed
    assert len(alarms) / len(safe) <= 0.05, alarms


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['expect']}:{c['cmd']}".replace("\n", "⏎")[:70])
def test_case(case: dict[str, str]) -> None:
    findings = check_command(case["cmd"])
    found = worst_of(f.severity for f in findings) or "none"
    if case["expect"] == "ok":
        assert found not in FLAGGED, [(f.rule, f.severity) for f in findings]
        return
    assert found == case["expect"], [(f.rule, f.severity) for f in findings]
    effects = {r.id: r.effect for r in default_policy().rules}
    if case["effect"] != "runs_unreviewed_code":
        assert case["effect"] in {effects[f.rule] for f in findings if f.severity == found}
