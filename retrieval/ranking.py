"""Fusion, boosts, confidence and result assembly over hybrid candidates (pure functions)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any, Sequence

from retrieval.analyzer import analyze
from retrieval.search_types import QueryKind, ScoredChunk, SearchConfig

K1_PLUS_1 = 2.2  # BM25's ceiling on a term's impact (k1 = 1.2)
_SEP = re.compile(r"[-_./:]")
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]{5,}")


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# Word runs joined for the exact-name match: "Queue Worker" names queue-worker.md, and
# "api.example.com is down" names api-example-com-is-down.md.
NAME_NGRAMS = 4


def query_identifiers(query: str) -> set[str]:
    """Normalised names a query may use: identifier-like tokens and runs of up to 4 words run together."""
    found = {_norm(m) for m in _IDENT.findall(query)}
    words = [w.lower() for w in _WORD.findall(query)]
    for n in range(2, NAME_NGRAMS + 1):
        found.update("".join(words[i : i + n]) for i in range(len(words) - n + 1))
    return {f for f in found if len(f) >= 6}


@dataclass(frozen=True)
class DocumentFeatures:
    """What the boosts read of a document alone: its names, name terms, tags and service. The
    search computes them once per document version (search._document) and hands them on with the
    hits, so a search with 150 candidates does not redo them per hit."""

    keys: frozenset[str]  # normalised names a query may use: title, file stem, alert names
    name_terms: frozenset[str]  # analyzed terms of the file stem and folder
    name_compounds: tuple[tuple[str, frozenset[str]], ...]  # "statefulset" covers stateful and set
    tags: tuple[str, ...]  # front matter tags, lower-cased
    service: str | None  # front matter service, lower-cased

    @classmethod
    def of(cls, title: str, path: str, metadata: dict[str, Any]) -> DocumentFeatures:
        """The features of a document from its title, path and front matter."""
        alerts = metadata.get("alerts") or []
        if isinstance(alerts, str):
            alerts = [alerts]
        service = metadata.get("service")
        return cls(
            keys=_document_keys(title, path, tuple(str(a) for a in alerts if a)),
            name_terms=name_terms(path), name_compounds=name_compounds(path), tags=tuple(document_tags(metadata)),
            service=service.lower() if isinstance(service, str) else None,
        )


def features(hit: ScoredChunk) -> DocumentFeatures:
    """A hit's document features: the ones it carries, else computed."""
    found = hit.document_features
    if found is None:
        found = DocumentFeatures.of(hit.document_title, hit.document_path, hit.document_metadata)
    return found


@lru_cache(maxsize=65536)  # per document; sized for collections of tens of thousands
def _document_keys(title: str, path: str, alerts: tuple[str, ...]) -> frozenset[str]:
    keys = {_norm(title), _norm(PurePosixPath(path).stem), *(_norm(a) for a in alerts)}
    return frozenset(k for k in keys if len(k) >= 6)


_GENERIC_NAMES = frozenset({"readme", "index", "_index", "doc", "docs"})
_HASHISH = re.compile(r"\d+|(?=[a-z]*\d)(?=\d*[a-z])[a-z\d]{5,}")


def _is_instance(token: str) -> bool:
    """A host or pod name (web-01, api-6c4b9f7d2-q8w3z): a word, then a number or hash-like part."""
    parts = [p for p in re.split(r"[-_./:]+", token.lower()) if p]
    return len(parts) > 1 and any(p.isalpha() for p in parts) and any(
        _HASHISH.fullmatch(p) for p in parts[1:]
    )


def strip_instances(query: str) -> str:
    """The query without host and pod names: web-01 says where it happens, not what the runbook is."""
    return " ".join(t for t in query.split() if not _is_instance(t.strip("()[]{},;\"'")))


@lru_cache(maxsize=65536)  # per document; sized for collections of tens of thousands
def name_terms(path: str) -> frozenset[str]:
    """Analyzed terms of a document's file stem and parent folder (the folder's parent for a README)."""
    parts = PurePosixPath(path).parts
    stem = PurePosixPath(path).stem
    generic = stem.lower() in _GENERIC_NAMES
    words = " ".join(parts[-3:-1]) if generic else " ".join((*parts[-2:-1], stem))
    words = _CAMEL_BOUNDARY.sub(" ", words)  # KubePodCrashLooping: the words a question can use
    return frozenset(t for t in analyze(words) if t not in _GENERIC_NAMES and not _SEP.search(t))


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@lru_cache(maxsize=65536)
def name_compounds(path: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """Runs of two or three words of a CamelCase file stem written as one word, with the name terms
    they stand for: a question that says "statefulset" names the Stateful and Set of
    KubeStatefulSetReplicasMismatch."""
    words = _CAMEL_BOUNDARY.sub(" ", PurePosixPath(path).stem).replace("-", " ").replace("_", " ").split()
    out = []
    for n in (2, 3):
        for i in range(len(words) - n + 1):
            joined = analyze("".join(words[i : i + n]).lower())
            parts = frozenset(analyze(" ".join(words[i : i + n])))
            if joined and len(parts) > 1:
                out.append((joined[0], parts))
    return tuple(out)


def name_coverage(hit: ScoredChunk, query_terms: frozenset[str]) -> float:
    """Share of a document's name terms (file stem, folder) that the query mentions."""
    doc = features(hit)
    names = doc.name_terms
    covered = names & query_terms
    for joined, parts in doc.name_compounds:
        if joined in query_terms:
            covered |= parts & names
    # A one-word name (a folder's README: "praefect") is not fully covered by a question that says
    # "praefect": it names the topic, not what to do about it.
    return len(covered) / max(len(names), MIN_NAME_TERMS) if names else 0.0


MIN_NAME_TERMS = 2


def leg_weight(config: SearchConfig, kind: QueryKind) -> float:
    """The lexical leg's weight after query-type weighting."""
    w = config.lexical_weight
    if config.query_type_weighting and kind == "lexical":
        w += config.query_type_shift
    elif config.query_type_weighting and kind == "dense":
        w -= config.query_type_shift
    return min(max(w, 0.0), 1.0)


def _drop_undefined_legs(hits: list[ScoredChunk]) -> None:
    """Clear a leg's rank and score where its score is not a number, in place. A query with no
    terms embeds to the zero vector, and its cosine distance to any chunk is NaN: that leg found
    nothing, and NaN must not reach the scores, the ranking or the confidence."""
    for h in hits:
        if h.dense_score is not None and not math.isfinite(h.dense_score):
            h.dense_score, h.dense_rank = None, None
        if h.lexical_score is not None and not math.isfinite(h.lexical_score):
            h.lexical_score, h.lexical_rank = None, None


def fuse(hits: list[ScoredChunk], config: SearchConfig, kind: QueryKind) -> None:
    """Set each hit's base score from its legs (RRF or convex combination), in place."""
    _drop_undefined_legs(hits)
    w = leg_weight(config, kind)
    if config.legs == "lexical":
        w = 1.0
    elif config.legs == "dense":
        w = 0.0
    if config.fusion == "rrf":
        for h in hits:
            lex = 1.0 / (config.rrf_k + h.lexical_rank) if h.lexical_rank else 0.0
            den = 1.0 / (config.rrf_k + h.dense_rank) if h.dense_rank else 0.0
            h.score = (w * lex + (1 - w) * den) * config.rrf_k  # ~1 for a double first place
        return
    lex_max = max((h.lexical_score or 0.0 for h in hits), default=0.0) or 1.0
    dense = [h.dense_score for h in hits if h.dense_score is not None]
    d_lo, d_hi = (min(dense), max(dense)) if dense else (0.0, 1.0)
    span = (d_hi - d_lo) or 1.0
    for h in hits:
        lex = (h.lexical_score or 0.0) / lex_max
        den = ((h.dense_score - d_lo) / span) if h.dense_score is not None else 0.0
        h.score = w * lex + (1 - w) * den


def apply_boosts(
    hits: list[ScoredChunk], query: str, config: SearchConfig, now: datetime | None = None
) -> None:
    """Exact-name, tag, service and document-support boosts and the staleness penalty, in place."""
    now = now or datetime.now(timezone.utc)
    idents = query_identifiers(query)
    words = {w.lower() for w in re.findall(r"[\w-]+", query)}
    qterms = frozenset(analyze(strip_instances(query)))  # a host named web-01 is no hint at web/
    by_doc: dict[int, list[float]] = defaultdict(list)
    for h in hits:
        by_doc[h.document_id].append(h.score)
    best_by_doc = {doc: sorted(scores, reverse=True)[:4] for doc, scores in by_doc.items()}
    sectioned = documents_with_alert_section(hits, query)
    doc_boosts: dict[int, dict[str, float]] = {}
    for h in hits:
        boosts = doc_boosts.get(h.document_id)
        if boosts is None:
            boosts = doc_boosts[h.document_id] = _document_boosts(h, idents, words, qterms, config, now)
            if h.document_id in sectioned and "name_match" not in boosts:
                boosts["name_match"] = config.title_boost  # a section headed by the alert's name
        h.boosts = dict(boosts)
        support = _support(best_by_doc[h.document_id], h.score)
        if support:
            h.boosts["doc_support"] = config.doc_support * support
        h.score += sum(h.boosts.values())


# An alert name as people and Alertmanager write it: CamelCase with two humps or more
# (ThanosBucketHighOperationFailures) or snake_case with three words or more
# (component_saturation_slo_out_of_bounds); a plain word ("Troubleshooting") is no alert name.
_ALERT_NAME = re.compile(r"^(?:[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+|[a-z0-9]+(?:_[a-z0-9]+){2,})$")
_NAME_HEADING = re.compile(r"^#{1,6}[ \t]+`?([A-Za-z][A-Za-z0-9_:.-]{5,})`?[ \t]*$", re.MULTILINE)


def alert_names(query: str) -> set[str]:
    """Normalised alert names the query mentions (ThanosBucketHighOperationFailures, not 'thanos')."""
    names = (m.rstrip(".:-") for m in _IDENT.findall(query))
    return {_norm(n) for n in names if _ALERT_NAME.match(n)}


def documents_with_alert_section(hits: Sequence[ScoredChunk], query: str) -> set[int]:
    """Documents with a section headed by an alert name the query mentions: a general page
    ("Thanos General Alerts") that has a `### ThanosBucketHighOperationFailures` section documents
    that alert as surely as a page named after it. Read from the hits' heading paths and the
    headings inside their text (a short section is chunked with its neighbours)."""
    names = alert_names(query)
    if not names:
        return set()
    found = set()
    for h in hits:
        headings = [*(x.strip("` ") for x in h.heading_path), *_NAME_HEADING.findall(h.text or "")]
        if any(_ALERT_NAME.match(x) and _norm(x) in names for x in headings):
            found.add(h.document_id)
    return found


def _document_boosts(
    hit: ScoredChunk, idents: set[str], words: set[str], qterms: frozenset[str], config: SearchConfig,
    now: datetime,
) -> dict[str, float]:
    """The boosts that depend on the hit's document alone (shared by its chunks)."""
    boosts: dict[str, float] = {}
    doc = features(hit)
    if not idents.isdisjoint(doc.keys):
        boosts["name_match"] = config.title_boost
    coverage = name_coverage(hit, qterms) if config.path_boost else 0.0
    if coverage:
        boosts["path_match"] = config.path_boost * coverage
    overlap = sum(1 for t in doc.tags if t in words)
    if overlap:
        boosts["tags"] = config.tag_boost * min(overlap, 3)
    if doc.service is not None and doc.service in words:
        boosts["service"] = config.service_boost
    if config.overview_penalty and PurePosixPath(hit.document_path).stem.lower() in _GENERIC_NAMES:
        boosts["overview"] = -config.overview_penalty  # a folder's README: the specific page first
    if hit.updated_at and (now - hit.updated_at).days > config.stale_after_days:
        boosts["stale"] = -config.stale_penalty
    return boosts


def document_tags(metadata: dict[str, Any]) -> list[str]:
    """A document's front matter tags, lower-cased: a list, or one tag as a string."""
    tags = metadata.get("tags")
    if isinstance(tags, (str, int, float)):
        tags = [tags]
    if not isinstance(tags, list):
        return []
    return [str(t).strip().lower() for t in tags if isinstance(t, (str, int, float)) and str(t).strip()]


def _support(best: list[float], own: float) -> float:
    """The strength of a document's other matching chunks (dampened); `best` is the document's
    four best scores, highest first, and includes `own` when `own` is among them."""
    rest = list(best)
    if own in rest:
        rest.remove(own)
    return math.tanh(sum(rest[:3]))


def blend_rerank(head: Sequence[ScoredChunk], scores: Sequence[float], weight: float) -> None:
    """Blend rerank scores into the head's fused scores, in place, keeping the head's score range.

    Both scores are min-max normalised over the head and mixed as ``(1 - weight) * fused +
    weight * rerank``; the mix is mapped back onto the head's fused range, so the head stays
    above the tail and confidence sees fused-scale scores. ``boosts["rerank"]`` keeps the raw score.
    """
    if not head:
        return
    fused = [h.score for h in head]
    f_lo, f_hi = min(fused), max(fused)
    r_lo, r_hi = min(scores), max(scores)
    weight = min(max(weight, 0.0), 1.0)
    for h, f, r in zip(head, fused, scores):
        f_norm = (f - f_lo) / (f_hi - f_lo) if f_hi > f_lo else 1.0
        r_norm = (r - r_lo) / (r_hi - r_lo) if r_hi > r_lo else 1.0
        h.boosts["rerank"] = float(r)
        h.score = f_lo + (f_hi - f_lo) * ((1 - weight) * f_norm + weight * r_norm)


def dedupe(hits: list[ScoredChunk]) -> list[ScoredChunk]:
    """Drop hits whose text repeats a better hit's text (same content hash)."""
    seen: set[str] = set()
    kept = []
    for h in hits:
        if h.text_hash not in seen:
            seen.add(h.text_hash)
            kept.append(h)
    return kept


def merge_adjacent(hits: list[ScoredChunk]) -> list[ScoredChunk]:
    """Merge hits that are consecutive chunks of one section into the better-ranked one."""
    by_key = {(h.section_id, h.position): h for h in hits}
    absorbed: set[int] = set()
    emitted: set[int] = set()  # a better-ranked hit already shown is never absorbed (no repeated text)
    merged = []
    for h in hits:
        if h.chunk_id in absorbed:
            continue
        emitted.add(h.chunk_id)
        nxt = by_key.get((h.section_id, h.position + 1))
        if nxt is not None and nxt.chunk_id not in absorbed and nxt.chunk_id not in emitted:
            absorbed.add(nxt.chunk_id)
            h.text = h.text.rstrip() + "\n\n" + nxt.text.lstrip()
            h.token_count += nxt.token_count
            h.merged_chunk_ids = (*h.merged_chunk_ids, nxt.chunk_id)
        merged.append(h)
    return merged


def within_budget(hits: Sequence[ScoredChunk], token_budget: int) -> list[ScoredChunk]:
    """The best hits whose text fits a token budget (always at least one)."""
    kept, used = [], 0
    for h in hits:
        if kept and used + h.token_count > token_budget:
            break
        kept.append(h)
        used += h.token_count
    return kept
