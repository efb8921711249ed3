"""Precision and recall of the dangerous-command detector on tests/guardrails/cases.yaml.

Positive = expected block or warn; predicted positive = the check's worst finding is block or warn.
Run: python bench/guard_eval.py [--cases PATH] [--policy FILE] [--json]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

from guardrails import check, check_command, load_policy
from guardrails.policy import Policy
from guardrails.verdict import Finding, worst_of

CASES = Path(__file__).resolve().parents[1] / "tests" / "guardrails" / "cases.yaml"
POSITIVE = {"block", "warn"}


@dataclass(frozen=True)
class Outcome:
    """One case: what was expected and what the detector said."""

    source: str
    expect: str
    rule: str | None
    got: str
    got_rule: str | None


def run_case(case: dict[str, str], policy: Policy) -> Outcome:
    """Check one case from the corpus."""
    source = case.get("cmd", case.get("text", ""))
    findings: list[Finding] = (check_command(source, policy) if "cmd" in case
                               else list(check(source, policy).findings))
    worst = worst_of(f.severity for f in findings)
    top = next((f.rule for f in findings if f.severity == worst), None)
    return Outcome(source, case["expect"], case.get("rule"), worst or "none", top)


def metrics(outcomes: list[Outcome]) -> dict[str, object]:
    """Precision, recall, exact severity agreement and per-rule counts."""
    tp = sum(o.expect in POSITIVE and o.got in POSITIVE for o in outcomes)
    fp = sum(o.expect not in POSITIVE and o.got in POSITIVE for o in outcomes)
    fn = sum(o.expect in POSITIVE and o.got not in POSITIVE for o in outcomes)
    exact = sum(o.expect == o.got and (o.rule is None or o.rule == o.got_rule) for o in outcomes)
    per_rule = Counter(o.got_rule for o in outcomes if o.got_rule)
    expected_rule = Counter(o.rule for o in outcomes if o.rule)
    return {
        "cases": len(outcomes), "positives": tp + fn, "tp": tp, "fp": fp, "fn": fn,
        "precision": round(tp / (tp + fp), 4) if tp + fp else 1.0,
        "recall": round(tp / (tp + fn), 4) if tp + fn else 1.0,
        "exact_match": round(exact / len(outcomes), 4) if outcomes else 1.0,
        "per_rule": {rule: {"predicted": per_rule[rule], "expected": expected_rule[rule]}
                     for rule in sorted(set(per_rule) | set(expected_rule))},
    }


def main() -> None:
    """Print the figures (and every disagreement) for the corpus."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--policy", type=Path, default=None, help="operator policy file on top of the default")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    policy = load_policy(args.policy)
    outcomes = [run_case(c, policy) for c in yaml.safe_load(args.cases.read_text(encoding="utf-8"))]
    result = metrics(outcomes)
    if args.json:
        print(json.dumps(result))
        return
    print(f"cases {result['cases']}  positives {result['positives']}  "
          f"tp {result['tp']}  fp {result['fp']}  fn {result['fn']}")
    print(f"precision {result['precision']:.3f}  recall {result['recall']:.3f}  "
          f"exact severity+rule {result['exact_match']:.3f}")
    print("\nrule                          predicted  expected")
    for rule, counts in result["per_rule"].items():  # type: ignore[union-attr]
        print(f"  {rule:<28}{counts['predicted']:>9}{counts['expected']:>10}")
    wrong = [o for o in outcomes if o.expect != o.got or (o.rule and o.rule != o.got_rule)]
    if wrong:
        print("\ndisagreements:")
        for o in wrong:
            print(f"  {o.source!r}: expected {o.expect}/{o.rule}, got {o.got}/{o.got_rule}")


if __name__ == "__main__":
    main()
