"""Answer checks: are the citations real, is every step cited, is the answer confident enough."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

_CITATION = re.compile(r"^\s*\[?\s*c?(\d+)\s*\]?\s*$", re.IGNORECASE)


def parse_citation(value: object) -> int | None:
    """`c123`, `[c123]`, `123` or 123 -> 123; anything else -> None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    match = _CITATION.match(str(value))
    return int(match[1]) if match else None


@dataclass
class CitationReport:
    """Which citations of each step point at evidence the model was actually shown."""

    valid: list[list[int]] = field(default_factory=list)  # per step
    unknown: list[object] = field(default_factory=list)  # cited but never retrieved
    uncited_steps: list[int] = field(default_factory=list)  # step indexes with no valid citation

    @property
    def grounded_steps(self) -> int:
        """Steps that keep at least one valid citation."""
        return sum(1 for ids in self.valid if ids)


def check_citations(steps: Sequence[Sequence[object]], retrieved: Collection[int]) -> CitationReport:
    """Split each step's citations into valid ones and ones the loop never retrieved."""
    report = CitationReport()
    for index, cited in enumerate(steps):
        ids: list[int] = []
        for raw in cited:
            number = parse_citation(raw)
            if number is not None and number in retrieved:
                if number not in ids:
                    ids.append(number)
            else:
                report.unknown.append(raw)
        report.valid.append(ids)
        if not ids:
            report.uncited_steps.append(index)
    return report


def _normal(text: str) -> str:
    return " ".join(text.replace("\\\n", " ").split()).lower()


def command_in_text(command: str, texts: Sequence[str]) -> bool:
    """Whether a command appears in the cited text, whitespace and case aside."""
    wanted = _normal(command).removeprefix("$ ").removeprefix("# ")
    return bool(wanted) and any(wanted in _normal(t) for t in texts)


def should_abstain(
    *, confidence: float | None, threshold: float, grounded_steps: int, model_abstained: bool
) -> str | None:
    """Why the answer must become an abstention, or None if it may stand."""
    if model_abstained:
        return "the model found no runbook that covers this"
    if grounded_steps == 0:
        return "no step is supported by a retrieved runbook section"
    if confidence is not None and confidence < threshold:
        return f"retrieval confidence {confidence:.2f} is below {threshold:.2f}"
    return None
