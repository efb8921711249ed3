"""What one answer has seen: the runbook text shown under citation ids, the searches it ran, tool
errors, the tool output budget spent and the time retrieval took. The tools write it; the agent
grounds the answer in it; the answerer reads its figures."""

from __future__ import annotations

from dataclasses import dataclass, field

from retrieval.search_types import SearchResult


@dataclass
class Evidence:
    """Runbook text the model has been shown under a citation id (`c<chunk id>`)."""

    chunk_id: int
    document_id: int
    document: str
    path: str
    heading_path: tuple[str, ...]
    text: str
    source: str = ""  # the runbook source (collection) it belongs to
    link: str | None = None
    relevance: float = 0.0


@dataclass
class Ledger:
    """The per-answer record of what the tools showed and ran."""

    evidence: dict[int, Evidence] = field(default_factory=dict)
    searches: list[SearchResult] = field(default_factory=list)  # the results the answer used, once each
    errors: list[str] = field(default_factory=list)
    used_tokens: int = 0
    retrieval_ms: float = 0.0

    def used(self, result: SearchResult) -> None:
        """Count a result among the answer's searches (once, however often it was asked for)."""
        if not any(s is result for s in self.searches):
            self.searches.append(result)

    def register(self, ev: Evidence) -> None:
        """Record text shown to the model; shown again, the longer text, the link and the best relevance stay."""
        old = self.evidence.get(ev.chunk_id)
        if old is not None:
            ev.link = ev.link or old.link
            ev.source = ev.source or old.source
            ev.relevance = max(ev.relevance, old.relevance)
            if len(old.text) > len(ev.text):
                ev.text = old.text
        self.evidence[ev.chunk_id] = ev

    def best_confidence(self) -> float | None:
        """The best retrieval confidence of the answer's searches (None if it never searched)."""
        return max((s.confidence for s in self.searches), default=None)

    def retrieved(self) -> list[int]:
        """Every chunk the answer's searches returned or the tools showed, in order, once."""
        ids = [h.chunk_id for s in self.searches for h in s.chunks] + list(self.evidence)
        return list(dict.fromkeys(ids))

    def closest_titles(self, n: int = 3) -> list[str]:
        """The runbooks closest to the question, for an abstention."""
        titles = [t for s in self.searches for t in s.closest_titles]
        titles += [ev.document for ev in self.evidence.values()]
        return list(dict.fromkeys(titles))[:n]

    def search_ms(self, stage: str) -> list[float]:
        """One timing ("embed", "total") of each search, for the stage metrics."""
        return [s.timings_ms.get(stage, 0.0) for s in self.searches]
