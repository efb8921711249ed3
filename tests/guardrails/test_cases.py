"""The table-driven command corpus (cases.yaml): every case's worst severity and rule."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from guardrails import check, check_command, default_policy
from guardrails.verdict import worst_of

CASES_FILE = Path(__file__).with_name("cases.yaml")
CASES = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))
REPO = Path(__file__).resolve().parents[2]


def _id(case: dict[str, str]) -> str:
    return (case.get("cmd") or case.get("text", "")).replace("\n", "⏎")[:60]


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_case(case: dict[str, str]) -> None:
    findings = check_command(case["cmd"]) if "cmd" in case else list(check(case["text"]).findings)
    worst = worst_of(f.severity for f in findings) or "none"
    assert worst == case["expect"], [(f.rule, f.severity) for f in findings]
    if case.get("rule"):
        assert case["rule"] in {f.rule for f in findings if f.severity == worst}


def test_corpus_is_big_and_balanced() -> None:
    commands = [c for c in CASES if "cmd" in c]
    assert len(commands) >= 150
    expects = {c["expect"] for c in CASES}
    assert expects == {"block", "warn", "info", "none"}
    assert sum(c["expect"] in ("block", "warn") for c in CASES) >= 60
    assert sum(c["expect"] == "none" for c in CASES) >= 60


def test_corpus_rule_ids_exist_and_flagged_cases_name_one() -> None:
    known = {r.id for r in default_policy().rules}
    for case in CASES:
        if case["expect"] != "none":
            assert case.get("rule") in known, case
        else:
            assert "rule" not in case, case


def test_bench_prints_precision_and_recall() -> None:
    # the rules' own cases, judged by the rules (the learned score is judged in test_learned.py)
    result = subprocess.run([sys.executable, "bench/guard_eval.py", "--rules-only", "--json"], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["cases"] == len(CASES)
    assert figures["precision"] == 1.0 and figures["recall"] == 1.0
    assert figures["per_rule"]["rm-rf-root"]["expected"] >= 10


def test_cost_bench_times_the_check_against_a_split(tmp_path: Path) -> None:
    runbook = tmp_path / "team" / "corpus" / "disk.md"
    runbook.parent.mkdir(parents=True)
    runbook.write_text("# Disk full\n\n```bash\ndf -h /var\nsudo rm -rf /var/cache/app/*\n```\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "bench/guard_cost.py", "--corpora", str(tmp_path)], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("2 commands: check ") and "a split" in result.stdout
    empty = subprocess.run([sys.executable, "bench/guard_cost.py", "--corpora", str(tmp_path / "none")], cwd=REPO,
                           capture_output=True, text=True, timeout=120)
    assert empty.returncode != 0 and "no runbook commands" in empty.stderr
