"""Train guardrails/learned.bin: the learned second opinion of the command check (guardrails/learned.py).

    pip install -e '.[train]'   # scikit-learn, only to train: the bot reads the weights in plain Python
    python bench/guard_clusters.py  # only when the word table (guardrails/learned_words.bin) is rebuilt
    python bench/guard_train.py [--dry-run]

Trained on labelled commands we wrote or had written blind: the held-out sets used for fixing (not those kept
unseen, listed in HELD_OUT), the rule tests' case files, the class tests' warn and look-alike lists, and the
runbook-line sets (what code blocks in runbooks hold: routine commands, output, config). The threshold is chosen
by cross-validation over the held-out sets trained on (five folds, a set never split across folds): the lowest
threshold whose false alarms, with the rules, stay under TARGET_FA. It prints the cross-validated figures and,
for information, those of the kept-unseen sets present, which are never used to choose anything.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import time
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from guardrails import check_command, default_policy, invocations  # noqa: E402
from guardrails.commands import LEARNED, asks_learned  # noqa: E402
from guardrails.learned import BITS, WEIGHTS, features, save  # noqa: E402
from guardrails.verdict import worst_of  # noqa: E402

# Sets kept unseen: measured, never looked at, never trained on.
HELD_OUT = frozenset({33, 34, 40, 41, 44, 46, 47, 48, 51, 53, 54, 55, 56, 57, 58, 59, 60, 87, 94, 95, 102, 109,
                      118, 119, 120, 129, 130, 131, 134, 136, 139, 140, 142, 144})
TARGET_FA = 0.04
C = 64.0
# The solver runs to convergence: at scikit-learn's default tolerance (1e-4) L-BFGS stopped after ~100 of the
# ~350 iterations it needs, and the weights it left depended on the order of the training rows (scores moved
# by up to 0.4 when the rows were shuffled).
TOL = 1e-6
POSITIVE = {"block", "warn"}


def heldout_sets() -> dict[int, Path]:
    found = {}
    for path in (REPO / "bench").glob("guard_heldout*.yaml"):
        number = int(re.search(r"(\d+)", path.stem).group(1))
        found[number] = path
    return dict(sorted(found.items()))


def labelled(path: Path) -> list[tuple[str, int]]:
    rows = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return [(r["cmd"], int(r["expect"] in POSITIVE)) for r in rows if isinstance(r, dict) and r.get("cmd")]


def class_lists() -> list[tuple[str, int]]:
    """The class tests' module-level lists: *_WARN / *_BLOCK are dangerous, *_PASS / *_QUIET are look-alikes."""
    out = []
    for path in sorted((REPO / "tests" / "guardrails").glob("test_*.py")):
        module = importlib.import_module(f"tests.guardrails.{path.stem}")
        for name, value in vars(module).items():
            if not name.isupper() or not isinstance(value, list):
                continue
            label = 1 if name.endswith(("WARN", "BLOCK")) else 0 if name.endswith(("PASS", "QUIET")) else None
            if label is None:
                continue
            for item in value:
                command = item[0] if isinstance(item, tuple) else item
                if isinstance(command, str):
                    out.append((command, label))
    return out


def matrix(texts: list[str]):
    from scipy.sparse import csr_matrix
    data, index, pointer = [], [], [0]
    for text in texts:
        found = features(text)
        index.extend(found)
        data.extend(found.values())
        pointer.append(len(index))
    return csr_matrix((np.asarray(data, np.float32), np.asarray(index), np.asarray(pointer)),
                      shape=(len(texts), 1 << BITS))


def fit(texts: list[str], labels: list[int]):
    from sklearn.linear_model import LogisticRegression
    return LogisticRegression(C=C, tol=TOL, max_iter=20000, class_weight="balanced").fit(matrix(texts),
                                                                                      np.asarray(labels))


def judged(command: str) -> tuple[bool, bool]:
    """(the rules flag it, the learned score would be asked about it). The default policy: the learned finding
    comes only where no rule found anything, so the rules' findings are the others."""
    found = [f for f in check_command(command) if f.rule != LEARNED]
    if found:
        return (worst_of(f.severity for f in found) or "none") in POSITIVE, False
    text = command.strip()
    return False, asks_learned(text, invocations(text, default_policy()), default_policy())


def figures(rows, scores, threshold) -> tuple[float, float]:
    """Recall and false alarms of the rules with the model (the model counts only where the rules did not flag)."""
    tp = p = fa = n = 0
    for (_, label, (ruled, asked)), score in zip(rows, scores):
        hit = ruled or (asked and score > threshold)
        if label:
            p, tp = p + 1, tp + hit
        else:
            n, fa = n + 1, fa + hit
    return tp / max(p, 1), fa / max(n, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print the figures, do not write the weights")
    args = parser.parse_args()
    start = time.perf_counter()
    sets = heldout_sets()
    trained = {n: p for n, p in sets.items() if n not in HELD_OUT}
    extra: list[tuple[str, int]] = []
    sources = []
    for path in sorted((REPO / "tests" / "guardrails").glob("*cases.yaml")):
        extra += labelled(path)
        sources.append(str(path.relative_to(REPO)))
    for path in sorted((REPO / "bench").glob("guard_runbook_lines*.yaml")):
        extra += labelled(path)
        sources.append(str(path.relative_to(REPO)))
    extra += class_lists()
    sources.append("tests/guardrails/test_*.py lists")
    by_set = {n: [(c, y, judged(c)) for c, y in labelled(p)] for n, p in sets.items()}

    # cross-validation: which threshold keeps false alarms (rules + model) under the target on sets not trained on
    numbers = list(trained)
    folds = [numbers[i::5] for i in range(5)]
    cv_rows, cv_scores = [], []
    for fold in folds:
        train = [(c, y) for n in numbers if n not in fold for c, y, _ in by_set[n]] + extra
        model = fit([c for c, _ in train], [y for _, y in train])
        rows = [r for n in fold for r in by_set[n]]
        cv_rows += rows
        cv_scores += list(model.predict_proba(matrix([c for c, _, _ in rows]))[:, 1])
    candidates = [t / 100 for t in range(40, 96)]
    threshold = next(t for t in candidates if figures(cv_rows, cv_scores, t)[1] <= TARGET_FA)
    recall, fa = figures(cv_rows, cv_scores, threshold)
    rules_only = figures(cv_rows, [0.0] * len(cv_rows), 1.0)
    print(f"cross-validated over {len(numbers)} sets: threshold {threshold:.2f}; rules {rules_only[0]:.4f} / "
          f"{rules_only[1]:.4f} -> with the model {recall:.4f} / {fa:.4f}")

    train = [(c, y) for n in numbers for c, y, _ in by_set[n]] + extra
    model = fit([c for c, _ in train], [y for _, y in train])
    every, every_scores = [], []
    for n in sorted(set(sets) & HELD_OUT):
        rows = by_set[n]
        scores = list(model.predict_proba(matrix([c for c, _, _ in rows]))[:, 1])
        every, every_scores = every + rows, every_scores + scores
        print(f"  kept unseen {n}: rules {figures(rows, [0.0] * len(rows), 1.0)[0]:.3f} -> "
              f"{figures(rows, scores, threshold)[0]:.3f} / {figures(rows, scores, threshold)[1]:.3f}")
    if every:
        rules = figures(every, [0.0] * len(every), 1.0)
        both = figures(every, every_scores, threshold)
        print(f"kept unseen, together: rules {rules[0]:.4f} / {rules[1]:.4f} -> with the model {both[0]:.4f} / "
              f"{both[1]:.4f} (for information: never used to choose anything)")
    meta = {
        "threshold": threshold, "C": C, "tol": TOL, "target_fa": TARGET_FA,
        "trained_on_sets": numbers, "held_out_sets": sorted(HELD_OUT), "other_sources": sources,
        "examples": len(train), "dangerous": sum(y for _, y in train),
        "cv": {"recall": round(recall, 4), "false_alarms": round(fa, 4),
               "rules_recall": round(rules_only[0], 4), "rules_false_alarms": round(rules_only[1], 4)},
    }
    print(f"{len(train)} examples ({meta['dangerous']} dangerous), {time.perf_counter() - start:.0f} s")
    if not args.dry_run:
        save([float(w) for w in model.coef_[0]], float(model.intercept_[0]), meta)
        print(f"wrote {WEIGHTS.relative_to(REPO)} ({WEIGHTS.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
