"""What the command check costs: every command extracted from the eval corpora's runbooks, checked three
times (the best run counts), against splitting the same commands with shlex in the same run.

    python bench/guard_cost.py [--corpora ../shared/eval]
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guardrails import check_command, extract_commands, learned  # noqa: E402


def _best(run: Callable[[str], object], commands: list[str], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for command in commands:
            run(command)
        best = min(best, time.perf_counter() - start)
    return best


def _split(command: str) -> object:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "eval")
    args = parser.parse_args()
    commands = [c for p in sorted(args.corpora.glob("*/corpus/**/*.md"))
                for c in extract_commands(p.read_text(encoding="utf-8", errors="ignore"))]
    if not commands:
        sys.exit(f"no runbook commands under {args.corpora}")
    for command in commands[:200]:
        check_command(command)  # (the policy and the caches loaded before timing)
    checked, split = _best(check_command, commands), _best(_split, commands)
    shipped, learned.model = learned.model, lambda: None  # the same check with the learned score not asked
    try:
        ruled = _best(check_command, commands)
    finally:
        learned.model = shipped
    print(f"{len(commands)} commands: check {checked / len(commands) * 1000:.3f} ms a command, "
          f"shlex.split {split / len(commands) * 1000:.4f} ms; the check costs {checked / split:.0f}x a split "
          f"({ruled / split:.0f}x without the learned score)")


if __name__ == "__main__":
    main()
