"""What the command checks return: findings about single commands and a verdict over a text."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Severity = Literal["block", "warn", "info"]
SEVERITIES: tuple[Severity, ...] = ("block", "warn", "info")  # worst first
_RANK = {s: n for n, s in enumerate(SEVERITIES)}


def rank(severity: str) -> int:
    """Sort key of a severity: 0 for block, 1 for warn, 2 for info."""
    return _RANK[severity]


def worst_of(severities: Iterable[str]) -> Severity | None:
    """The worst of some severities, or None when there are none."""
    found = sorted(severities, key=rank)
    return found[0] if found else None  # type: ignore[return-value]


@dataclass(frozen=True)
class Finding:
    """One policy rule that matched one command."""

    command: str
    rule: str
    severity: Severity
    reason: str
    safer: str | None = None


@dataclass(frozen=True)
class Verdict:
    """All findings about the commands in a text."""

    findings: tuple[Finding, ...] = ()

    @property
    def blocked(self) -> bool:
        """True when any finding blocks."""
        return any(f.severity == "block" for f in self.findings)

    @property
    def worst(self) -> Severity | None:
        """The worst severity found ("block", "warn", "info"), or None."""
        return worst_of(f.severity for f in self.findings)
