"""Plain-text rendering of answers, search results and ingest summaries for the terminal."""

from __future__ import annotations

from typing import Any

from bot.answer import Answer
from retrieval.search_types import SearchResult


_SEVERITY = {"block": "BLOCKED", "warn": "WARNING", "info": "note"}


def _clip(command: str, limit: int = 80) -> str:
    first = command.splitlines()[0] if command else ""
    return first if len(first) <= limit else first[:limit] + "…"


def answer_text(answer: Answer) -> str:
    """An answer as a person reads it in a terminal."""
    lines = [answer.answer, ""]
    for n, step in enumerate(answer.steps, start=1):
        cites = "".join(f"[{c}]" for c in step.citations)
        lines.append(f"{n}. {step.instruction} {cites}".rstrip())
        for command in step.commands:
            lines.extend("     " + part for part in command.splitlines())
        lines += [f"     {_SEVERITY[f.severity]}: {f.reason} (`{_clip(f.command)}`)" for f in step.findings
                  if f.severity != "info"]
    if answer.sources:
        lines += ["", "Sources:"]
        for s in answer.sources:
            section = " › ".join(s.heading_path) or s.document
            where = s.link or s.path
            lines.append(f"  [{s.id}] {s.document} — {section} ({where}, relevance {s.relevance:.2f})")
    lines += [""] + [f"Note: {note}" for note in answer.notes]
    lines.append(f"Confidence {answer.confidence:.2f}; mode {answer.mode}"
                 + (f"; model {answer.model_used}" if answer.model_used else ""))
    return "\n".join(lines).strip()


def search_text(result: SearchResult, *, explain: bool = False) -> str:
    """Search hits, optionally with each leg's rank and score and the boosts."""
    head = (f"{len(result.chunks)} results, confidence {result.confidence:.2f}"
            f" ({'confident' if result.confident else 'no confident match'}), query kind {result.query_kind}")
    lines = [head]
    if not result.confident:
        lines.append("Closest runbooks: " + (", ".join(result.closest_titles) or "none"))
    for n, h in enumerate(result.chunks, start=1):
        section = " › ".join(h.heading_path) or h.document_title
        lines.append(f"{n}. [{h.score:.3f}] {h.document_path} — {section} (chunk {h.chunk_id})")
        if explain:
            lines.append(
                f"     lexical rank {h.lexical_rank} score {_f(h.lexical_score)}; dense rank"
                f" {h.dense_rank} score {_f(h.dense_score)}; boosts {h.boosts or '{}'}"
            )
        snippet = " ".join(h.text.split())[:200]
        lines.append(f"     {snippet}")
    if explain:
        lines.append("timings ms: " + ", ".join(f"{k} {v:.1f}" for k, v in result.timings_ms.items()))
    return "\n".join(lines)


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def search_json(result: SearchResult) -> dict[str, Any]:
    """Search hits as JSON, every leg visible."""
    return {
        "query": result.query, "confidence": round(result.confidence, 4),
        "confident": result.confident, "query_kind": result.query_kind,
        "closest_titles": result.closest_titles,
        "timings_ms": {k: round(v, 2) for k, v in result.timings_ms.items()},
        "results": [
            {
                "chunk_id": h.chunk_id, "document_id": h.document_id, "path": h.document_path,
                "title": h.document_title, "source": h.source, "heading_path": list(h.heading_path),
                "score": round(h.score, 5), "lexical_rank": h.lexical_rank,
                "lexical_score": h.lexical_score, "dense_rank": h.dense_rank,
                "dense_score": h.dense_score, "boosts": h.boosts, "link": h.link,
                "merged_chunk_ids": list(h.merged_chunk_ids), "text": h.text,
            }
            for h in result.chunks
        ],
    }


def ingest_text(summary: dict[str, Any], *, stats: bool = False) -> str:
    """An ingest summary for people."""
    counts = ", ".join(f"{summary[k]} {k}" for k in ("added", "updated", "unchanged", "deleted", "skipped", "failed"))
    lines = [f"Source {summary['source']}: {counts}; {summary['chunks_written']} chunks written"]
    for item in summary["skipped_files"]:
        lines.append(f"  skipped {item['path']}: {item['reason']}")
    for item in summary["failed_files"]:
        lines.append(f"  FAILED {item['path']}: {item['error']}")
    if stats:
        lines.append(
            f"  embeddings: {summary['embeddings_computed']} computed, {summary['embeddings_cached']} from cache"
        )
        for stage, seconds in summary["stage_seconds"].items():
            lines.append(f"  {stage:>16}: {seconds:.3f} s")
    return "\n".join(lines)


def eval_table(result: dict[str, Any]) -> str:
    """Eval metrics as a table, one column per method and variant."""
    methods = result.get("compare") or {"fused": {k: v for k, v in result.items() if k != "compare"}}
    keys = ["recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "abstain_precision", "abstain_recall", "p50_ms", "p95_ms"]
    columns: list[tuple[str, dict[str, Any]]] = []
    for method, metrics in methods.items():
        columns.append((f"{method}", metrics))
        for variant, vm in metrics.get("by_variant", {}).items():
            columns.append((f"{method}/{variant}", vm))
    width = max(len(name) for name, _ in columns) + 2
    lines = ["metric".ljust(18) + "".join(name.rjust(width) for name, _ in columns)]
    for key in keys:
        lines.append(key.ljust(18) + "".join(f"{m.get(key, 0):>{width}.3f}" for _, m in columns))
    lines.append("queries".ljust(18) + "".join(f"{m.get('queries', 0):>{width}d}" for _, m in columns))
    return "\n".join(lines)


def answers_table(result: dict[str, Any]) -> str:
    """Answer scores as a table: overall, then one column per kind of input."""
    columns: list[tuple[str, dict[str, Any]]] = [("all", result)] + list(result.get("by_kind", {}).items())
    keys = ["top_right", "false_abstain", "cite_precision"]
    width = max(len(name) for name, _ in columns) + 4
    lines = [f"{result.get('cases', 0)} cases ({result.get('mode', '?')}), {result.get('answerable', 0)} answerable"]
    lines.append("score".ljust(16) + "".join(name.rjust(width) for name, _ in columns))
    for key in keys:
        cells = "".join(("-" if m.get(key) is None else f"{m[key]:.3f}").rjust(width) for _, m in columns)
        lines.append(key.ljust(16) + cells)
    lines.append("n".ljust(16) + "".join(str(m.get("n", m.get("answerable", 0))).rjust(width) for _, m in columns))
    lines.append(f"any_right {_f(result.get('any_right'))}; abstain precision {_f(result.get('abstain_precision'))}"
                 f" / recall {_f(result.get('abstain_recall'))} ({result.get('offtopic', 0)} offtopic);"
                 f" closest-match answers {_f(result.get('closest_tier'))}")
    lines.append(f"answer p50 {result.get('p50_ms', 0):.0f} ms, p95 {result.get('p95_ms', 0):.0f} ms;"
                 f" unverified commands {result.get('unverified_commands', 0)}; tokens {result.get('tokens', 0)}")
    if result.get("compare"):
        lines += ["", _compare_table(result["compare"])]
    return "\n".join(lines)


def _compare_table(compare: dict[str, dict[str, Any]]) -> str:
    """The model's answers, the extractive ones and the gate's choice, side by side."""
    keys = ["top_right", "cite_precision", "false_abstain", "abstain_precision", "abstain_recall", "closest_tier",
            "unverified_commands", "p50_ms", "p95_ms", "tokens"]
    lines = ["metric".ljust(20) + "".join(name.rjust(12) for name in compare)]
    for key in keys:
        cells = []
        for metrics in compare.values():
            value = metrics.get(key)
            cells.append(("-" if value is None else f"{value:.3f}" if isinstance(value, float) and value < 10
                          else f"{value:.0f}").rjust(12))
        lines.append(key.ljust(20) + "".join(cells))
    return "\n".join(lines)


def staleness_text(report: dict[str, Any]) -> str:
    """The staleness report for a terminal."""
    lines = [f"Runbooks not updated for {report['days']} days: {len(report['stale'])}"]
    lines += [f"  {r['path']} ({r['age_days']} days, owner {r['owner'] or 'unknown'})" for r in report["stale"]]
    lines.append(f"Runbooks cited in at least {report['min_downvotes']} 👎 answers: {len(report['downvoted'])}")
    lines += [f"  {r['path']} (👎 {r['down']}, 👍 {r['up']}, owner {r['owner'] or 'unknown'})" for r in report["downvoted"]]
    return "\n".join(lines)
