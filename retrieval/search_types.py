"""The types of a search: its filters and knobs, its hits and result, a reranker. Plain data, imported
by search, candidates and ranking alike (none of them imports another for its types)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, Sequence

from retrieval.access import Visibility

if TYPE_CHECKING:
    from retrieval.ranking import DocumentFeatures

QueryKind = Literal["lexical", "dense", "neutral"]


@dataclass(frozen=True)
class SearchFilters:
    """Metadata pre-filters; empty fields do not filter."""

    sources: tuple[str, ...] = ()
    services: tuple[str, ...] = ()
    environments: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()  # only these documents (a runbook an alert links to)
    visibility: Visibility | None = None  # what the caller may see (restricted runbooks); None: everything

    def is_empty(self) -> bool:
        """True when no field filters anything."""
        return not (self.sources or self.services or self.environments or self.tags or self.paths
                    or self.visibility is not None)

    @staticmethod
    def seen_by(filters: SearchFilters | None, visibility: Visibility | None) -> SearchFilters | None:
        """`filters` narrowed to what a caller may see (unchanged when the caller sees everything)."""
        if visibility is None:
            return filters
        return replace(filters or SearchFilters(), visibility=visibility)


@dataclass(frozen=True)
class SearchConfig:
    """Fusion and ranking knobs (defaults tuned on ../shared/eval, see README)."""

    fusion: Literal["rrf", "convex"] = "convex"
    lexical_weight: float = 0.7  # convex: share of the lexical leg; rrf: weight of its term
    rrf_k: int = 60
    pool: int = 100  # candidates per leg
    per_term: int = 700  # postings a long query reads per term (see lexical.query_budget)
    query_type_weighting: bool = True
    query_type_shift: float = 0.15
    title_boost: float = 0.3  # exact title / alert-name match
    path_boost: float = 0.3  # times the share of the file stem/folder terms the query mentions
    tag_boost: float = 0.03  # per query term found among the document's tags
    service_boost: float = 0.05
    stale_after_days: int = 365
    stale_penalty: float = 0.05
    # A folder's README or index page overviews what its specific pages say: when both match, the
    # specific page first (gitlab incident threads 0.800 -> 0.867; no templated query moves).
    overview_penalty: float = 0.06
    doc_support: float = 0.10  # weight of a document's other matching chunks
    min_confidence: float = 0.65  # a confident answer; below: the closest match, shown as such
    min_plausible: float = 0.25  # below: nothing worth showing (abstain)
    rerank_depth: int = 20  # fused hits the reranker re-scores (after dedupe)
    rerank_weight: float = 0.5  # the reranker's share of the head's final order, 0..1
    legs: Literal["hybrid", "lexical", "dense"] = "hybrid"
    # Hybrid: each leg on its own connection, at once (the lexical one while the query is
    # embedded), when no other search runs in the process; one statement otherwise. At 100k chunks
    # ~2 ms faster at p50 than one statement and as fast at p95; the same on the eval corpora.
    parallel_legs: bool = True
    # The query as the search reads it: abbreviations written out ("sts" also searches StatefulSet,
    # retrieval/lexicon.py).
    rewrite_query: bool = True


@dataclass(frozen=True)
class QueryMass:
    """The query's summed idf: over the terms the index knows, and over plain words it does not
    (counted at the highest idf: "printer" in a corpus that never says it)."""

    known: float = 0.0
    unknown: float = 0.0
    chunks: int = 0  # chunks in the index: the highest idf is ln(1 + (chunks + 0.5) / 0.5)


@dataclass
class ScoredChunk:
    """A search hit with every leg's rank and score visible for debugging."""

    chunk_id: int
    document_id: int
    section_id: int
    position: int
    document_path: str
    document_title: str
    source: str
    heading_path: tuple[str, ...]
    text: str
    text_hash: str
    token_count: int
    score: float = 0.0
    lexical_rank: int | None = None
    lexical_score: float | None = None
    dense_rank: int | None = None
    dense_score: float | None = None
    boosts: dict[str, float] = field(default_factory=dict)
    document_metadata: dict[str, Any] = field(default_factory=dict)
    chunk_metadata: dict[str, Any] = field(default_factory=dict)
    updated_at: datetime | None = None
    link: str | None = None
    merged_chunk_ids: tuple[int, ...] = ()
    text_loaded: bool = True  # False: a candidate whose text was not shipped (see load_texts)
    document_features: DocumentFeatures | None = field(default=None, repr=False, compare=False)

    @property
    def relevance(self) -> float:
        """The score as people are shown it: without the pin that puts a runbook first (an alert's
        own link, an engineers' correction), which is a rank, not a relevance."""
        return self.score - self.boosts.get("runbook_link", 0.0)


@dataclass
class SearchResult:
    """Ranked hits, and whether they are good enough to answer from."""

    query: str
    chunks: list[ScoredChunk]
    confidence: float
    confident: bool  # good enough to answer from
    plausible: bool  # good enough to show as the closest match
    query_kind: QueryKind
    closest_titles: list[str]
    timings_ms: dict[str, float]
    features: dict[str, float] = field(default_factory=dict)  # the confidence model's inputs


class Reranker(Protocol):
    """Re-scores (query, chunk text) pairs; higher is better."""

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text."""
        ...
