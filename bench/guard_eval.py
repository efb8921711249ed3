"""Precision, recall and false alarms of the dangerous-command detector on a case file.

Positive = expected block or warn; predicted positive = the check's worst finding is block or warn.
`expect: ok` (effects_cases.yaml) means "not flagged": the worst finding is info or nothing.
Run: python bench/guard_eval.py [--cases PATH | --effects] [--policy FILE] [--rules-only] [--json]
(--rules-only: without the learned second opinion, guardrails/learned.py)
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from guardrails import check, check_command, load_policy
from guardrails.policy import Policy
from guardrails.commands import LEARNED
from guardrails.verdict import Finding, worst_of

CASES_DIR = Path(__file__).resolve().parents[1] / "tests" / "guardrails"
CASES = CASES_DIR / "cases.yaml"
EFFECT_CASES = CASES_DIR / "effects_cases.yaml"
POSITIVE = {"block", "warn"}


@dataclass(frozen=True)
class Outcome:
    """One case: what was expected and what the detector said."""

    source: str
    expect: str
    rule: str | None
    got: str
    got_rule: str | None
    effect: str | None = None


def run_case(case: dict[str, str], policy: Policy) -> Outcome:
    """Check one case from the corpus."""
    source = case.get("cmd", case.get("text", ""))
    findings: list[Finding] = (check_command(source, policy) if "cmd" in case
                               else list(check(source, policy).findings))
    worst = worst_of(f.severity for f in findings)
    top = next((f.rule for f in findings if f.severity == worst), None)
    return Outcome(source, case["expect"], case.get("rule"), worst or "none", top, case.get("effect"))


def agrees(o: Outcome) -> bool:
    """The severity is the one expected (`ok` accepts info and nothing) and so is the rule, when named."""
    if o.expect == "ok":
        return o.got not in POSITIVE
    return o.expect == o.got and (o.rule is None or o.rule == o.got_rule)


def _rate(num: int, den: int, empty: float) -> float:
    return round(num / den, 4) if den else empty


def metrics(outcomes: list[Outcome]) -> dict[str, Any]:
    """Precision, recall, false-alarm rate, exact severity agreement, per-rule and per-effect counts."""
    tp = sum(o.expect in POSITIVE and o.got in POSITIVE for o in outcomes)
    fp = sum(o.expect not in POSITIVE and o.got in POSITIVE for o in outcomes)
    fn = sum(o.expect in POSITIVE and o.got not in POSITIVE for o in outcomes)
    negatives = sum(o.expect not in POSITIVE for o in outcomes)
    per_rule = Counter(o.got_rule for o in outcomes if o.got_rule)
    expected_rule = Counter(o.rule for o in outcomes if o.rule)
    effects: dict[str, Counter[str]] = defaultdict(Counter)
    for o in outcomes:
        if o.effect:
            row = effects[o.effect]
            row["positives" if o.expect in POSITIVE else "negatives"] += 1
            row["tp"] += o.expect in POSITIVE and o.got in POSITIVE
            row["fp"] += o.expect not in POSITIVE and o.got in POSITIVE
    return {
        "cases": len(outcomes), "positives": tp + fn, "negatives": negatives, "tp": tp, "fp": fp, "fn": fn,
        "precision": _rate(tp, tp + fp, 1.0), "recall": _rate(tp, tp + fn, 1.0),
        "false_alarm_rate": _rate(fp, negatives, 0.0),
        "exact_match": _rate(sum(agrees(o) for o in outcomes), len(outcomes), 1.0),
        "per_rule": {rule: {"predicted": per_rule[rule], "expected": expected_rule[rule]}
                     for rule in sorted(set(per_rule) | set(expected_rule))},
        "per_effect": {effect: dict(row) for effect, row in sorted(effects.items())},
    }


def evaluate(path: Path, policy: Policy) -> tuple[list[Outcome], dict[str, Any]]:
    """Outcomes and figures for one case file."""
    outcomes = [run_case(c, policy) for c in yaml.safe_load(path.read_text(encoding="utf-8"))]
    return outcomes, metrics(outcomes)


def _print(outcomes: list[Outcome], result: dict[str, Any]) -> None:
    print(f"cases {result['cases']}  positives {result['positives']}  negatives {result['negatives']}  "
          f"tp {result['tp']}  fp {result['fp']}  fn {result['fn']}")
    print(f"precision {result['precision']:.3f}  recall {result['recall']:.3f}  "
          f"false alarms {result['false_alarm_rate']:.3f}  exact severity+rule {result['exact_match']:.3f}")
    if result["per_effect"]:
        print("\neffect                  recall    false alarms")
        for effect, row in result["per_effect"].items():
            recall = f"{row.get('tp', 0)}/{row.get('positives', 0)}"
            alarms = f"{row.get('fp', 0)}/{row.get('negatives', 0)}"
            print(f"  {effect:<22}{recall:>8}{alarms:>14}")
    else:
        print("\nrule                          predicted  expected")
        for rule, counts in result["per_rule"].items():
            print(f"  {rule:<28}{counts['predicted']:>9}{counts['expected']:>10}")
    wrong = [o for o in outcomes if not agrees(o)]
    if wrong:
        print("\ndisagreements:")
        for o in wrong:
            print(f"  {o.source!r}: expected {o.expect}/{o.rule or o.effect}, got {o.got}/{o.got_rule}")


def main() -> None:
    """Print the figures (and every disagreement) for the case file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=None, help=f"case file (default {CASES.name})")
    parser.add_argument("--effects", action="store_true", help=f"use {EFFECT_CASES.name}")
    parser.add_argument("--policy", type=Path, default=None, help="operator policy file on top of the default")
    parser.add_argument("--rules-only", action="store_true", help="without the learned score (rule learned-risk)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    path = args.cases or (EFFECT_CASES if args.effects else CASES)
    policy = load_policy(args.policy)
    if args.rules_only:
        policy = policy.with_severities({LEARNED: "off"})
    outcomes, result = evaluate(path, policy)
    if args.json:
        print(json.dumps(result))
    else:
        _print(outcomes, result)


if __name__ == "__main__":
    main()
