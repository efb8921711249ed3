"""What the check says of one command, as the class tests read it."""

from __future__ import annotations

from guardrails import check_command
from guardrails.verdict import worst_of


def flagged(command: str) -> list[str]:
    """The ids of the rules that warn about or block the command."""
    return [f.rule for f in check_command(command) if f.severity in ("warn", "block")]


def judged(command: str) -> tuple[str, list[str]]:
    """The worst severity ("none" when nothing) and every rule id reported."""
    found = check_command(command)
    return worst_of(f.severity for f in found) or "none", [f.rule for f in found]
