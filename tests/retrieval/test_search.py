"""Hybrid search against a real Postgres on the example runbooks, and fusion as pure functions."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from psycopg import sql

from retrieval import candidates, db, ranking, store
from retrieval.confidence import FEATURES, assess
from retrieval.ingest import IngestOptions, ingest
from retrieval.search import (
    candidate_params, classify_query, fetch_candidates, hybrid_search, load_texts, plain_terms,
)
from retrieval.search_types import ScoredChunk, SearchConfig, SearchFilters
from retrieval.sections import fetch_parent_section, get_runbook


async def _ingest(pool, embedder, root: Path, source: str = "ex") -> None:  # type: ignore[no-untyped-def]
    summary = await ingest(pool, embedder, [root], IngestOptions(source=source))
    assert summary.added and not summary.failed


def _paths(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [h.document_path for h in result.chunks]


def _chunk(cid: int, doc: int = 1, *, lex: tuple[int, float] | None = None, dense: tuple[int, float] | None = None,
           section: int = 1, position: int = 0, text: str | None = None, tokens: int = 10) -> ScoredChunk:
    return ScoredChunk(
        chunk_id=cid, document_id=doc, section_id=section, position=position, document_path=f"doc{doc}.md",
        document_title=f"Doc {doc}", source="ex", heading_path=("Doc",), text=text or f"chunk {cid}",
        text_hash=f"h{cid}", token_count=tokens,
        lexical_rank=lex[0] if lex else None, lexical_score=lex[1] if lex else None,
        dense_rank=dense[0] if dense else None, dense_score=dense[1] if dense else None,
    )


# --- against the database -------------------------------------------------------------------

EXACT = [
    ("x509: certificate has expired or is not yet valid", "tls-certificate-expiry.md"),
    ("OOMKilled", "oom-killed.md"),
    ("KubePodCrashLooping", "k8s-pod-crashloop.md"),
    ("kube pod crash looping", "k8s-pod-crashloop.md"),
    ("/var/lib/docker", "disk-full.md"),
]


async def test_exact_strings_find_the_right_runbook_first(pool, embedder, runbooks: Path) -> None:
    await _ingest(pool, embedder, runbooks)
    for query, expected in EXACT:
        result = await hybrid_search(pool, embedder, query, k=5)
        assert result.chunks, query
        assert result.chunks[0].document_path == expected, (query, _paths(result))
        assert result.confident, (query, result.confidence)


async def test_each_legs_rank_and_score_are_visible(pool, embedder, runbooks: Path) -> None:
    await _ingest(pool, embedder, runbooks)
    result = await hybrid_search(pool, embedder, "redis maxmemory evictions", k=5)
    top = result.chunks[0]
    assert top.document_path == "redis-memory.md"
    assert top.lexical_rank is not None and top.lexical_score is not None and top.lexical_score > 0
    assert top.dense_rank is not None and top.dense_score is not None and -1.0 <= top.dense_score <= 1.0
    assert set(result.timings_ms) >= {"embed", "sql", "total"}
    lexical_only = await hybrid_search(pool, embedder, "redis maxmemory evictions", config=SearchConfig(legs="lexical"))
    assert all(h.dense_rank is None and h.lexical_rank for h in lexical_only.chunks)
    dense_only = await hybrid_search(pool, embedder, "redis maxmemory evictions", config=SearchConfig(legs="dense"))
    assert all(h.lexical_rank is None and h.dense_rank for h in dense_only.chunks)


@pytest.mark.parametrize("filters", [None, SearchFilters(services=("platform",))])
async def test_legs_on_two_connections_equal_one_statement(pool, embedder, runbooks: Path, filters) -> None:
    await _ingest(pool, embedder, runbooks)
    for query in ("redis maxmemory evictions", "disk full on /var/lib/docker", "why is the queue backing up"):
        parallel = await hybrid_search(pool, embedder, query, k=8, filters=filters,
                                       config=SearchConfig(parallel_legs=True))
        one = await hybrid_search(pool, embedder, query, k=8, filters=filters,
                                  config=SearchConfig(parallel_legs=False))
        assert parallel.chunks, query
        seen = [(h.chunk_id, h.lexical_rank, h.dense_rank, round(h.score, 9)) for h in parallel.chunks]
        assert seen == [(h.chunk_id, h.lexical_rank, h.dense_rank, round(h.score, 9)) for h in one.chunks]
        assert any(h.lexical_rank and h.dense_rank for h in parallel.chunks), "rows of both legs are merged"
        assert parallel.confidence == pytest.approx(one.confidence)
    # Concurrent searches take the one-statement path even when asked for parallel legs: same results.
    queries = ["redis maxmemory evictions", "disk full on /var/lib/docker", "kafka consumer lag"]
    alone = [await hybrid_search(pool, embedder, q, k=5, filters=filters, config=SearchConfig(parallel_legs=False))
             for q in queries]
    together = await asyncio.gather(*(hybrid_search(pool, embedder, q, k=5, filters=filters,
                                                    config=SearchConfig(parallel_legs=True)) for q in queries))
    for a, b in zip(alone, together):
        assert [(h.chunk_id, round(h.score, 9)) for h in a.chunks] == [(h.chunk_id, round(h.score, 9)) for h in b.chunks]


async def test_generic_plans_give_the_rows_custom_plans_give(pool, embedder, runbooks: Path, database_url: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    await _ingest(pool, embedder, runbooks)
    monkeypatch.setitem(db.SESSION_SETTINGS, "plan_cache_mode", "force_custom_plan")
    custom = await db.open_pool(database_url, min_size=1, max_size=2)
    try:
        for filters in (None, SearchFilters(services=("platform",)), SearchFilters(tags=("kubernetes",))):
            for query in ("redis maxmemory evictions", "disk full on /var/lib/docker", "kube pod crash looping",
                          "why is the queue backing up", "x509 certificate expired"):
                for parallel in (True, False):
                    config = SearchConfig(parallel_legs=parallel)
                    one = await hybrid_search(pool, embedder, query, k=10, filters=filters, config=config)
                    two = await hybrid_search(custom, embedder, query, k=10, filters=filters, config=config)
                    assert [(h.chunk_id, h.lexical_rank, h.dense_rank, round(h.score, 9)) for h in one.chunks] == [
                        (h.chunk_id, h.lexical_rank, h.dense_rank, round(h.score, 9)) for h in two.chunks], query
        async with custom.connection() as conn:
            mode = await (await conn.execute("SHOW plan_cache_mode")).fetchone()
            assert mode == ("force_custom_plan",), "the comparison did use custom plans"
    finally:
        await custom.close()


async def test_pool_connections_prepare_the_candidates_statement_only(pool, database_url: str, embedder,
                                                                    runbooks: Path) -> None:
    await _ingest(pool, embedder, runbooks)
    one = await db.open_pool(database_url, min_size=1, max_size=1)
    try:
        for query in ("redis maxmemory evictions", "disk full", "kafka consumer lag", "oom", "tls expired", "dns"):
            await hybrid_search(one, embedder, query, k=5, config=SearchConfig(parallel_legs=False))
        async with one.connection() as conn:
            for _ in range(8):  # psycopg would prepare this by its 5th run, with the default threshold
                await conn.execute("SELECT count(*) FROM chunks WHERE id > %s", (0,))
            prepared = await (await conn.execute(
                "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")).fetchall()
        assert prepared, "the candidates statement is prepared"
        assert all("lexical_stats" in text for text, _, _ in prepared), "and nothing else"
        assert sum(g for _, g, _ in prepared) >= 1 and all(c == 0 for _, _, c in prepared), "with a generic plan"
    finally:
        await one.close()


async def test_hits_carry_their_documents_features_and_boost_as_computed_ones(pool, embedder, runbooks: Path) -> None:
    await _ingest(pool, embedder, runbooks)
    query = "KubePodCrashLooping on payments: pod restarting"
    hits, _, _ = await fetch_candidates(pool, embedder, query, None, SearchConfig())
    assert hits and all(h.document_features is not None for h in hits)
    for h in hits:
        assert h.document_features == ranking.DocumentFeatures.of(h.document_title, h.document_path, h.document_metadata)
    bare = [dataclasses.replace(h, document_features=None, boosts={}) for h in hits]
    ranking.fuse(hits, SearchConfig(), "neutral")
    ranking.fuse(bare, SearchConfig(), "neutral")
    ranking.apply_boosts(hits, query, SearchConfig())
    ranking.apply_boosts(bare, query, SearchConfig())
    assert [(h.boosts, h.score) for h in hits] == [(h.boosts, h.score) for h in bare]
    assert any("name_match" in h.boosts for h in hits)


async def test_texts_come_for_the_top_of_each_leg_and_load_for_hits_fusion_ranks_up(pool, embedder, runbooks: Path) -> None:
    await _ingest(pool, embedder, runbooks)
    async with pool.connection() as conn:
        texts = dict(await (await conn.execute("SELECT id, text FROM chunks")).fetchall())
    query = "disk full on /var/lib/docker"
    # Two legs at once: the dense leg ships every text, the lexical leg its top text_rank.
    hits, _, _ = await fetch_candidates(pool, embedder, query, None, SearchConfig(parallel_legs=True), text_rank=1)
    assert all(h.text_loaded == bool(h.dense_rank or h.lexical_rank == 1) for h in hits)
    assert all(h.text == texts[h.chunk_id] for h in hits if h.text_loaded)
    # One statement: the top text_rank of either leg.
    hits, _, _ = await fetch_candidates(pool, embedder, query, None, SearchConfig(parallel_legs=False), text_rank=1)
    shipped = [h for h in hits if h.text_loaded]
    assert 1 <= len(shipped) <= 2 and all(1 in (h.lexical_rank, h.dense_rank) for h in shipped)
    assert all(h.text == texts[h.chunk_id] for h in shipped)
    assert all(h.text == "" for h in hits if not h.text_loaded) and len(hits) > len(shipped)
    gone = _chunk(10**12)  # deleted by an ingest between the two statements
    gone.text, gone.text_loaded = "", False
    loaded = await load_texts(pool, [*hits[:5], gone, *hits[5:]], 6)
    assert [h.chunk_id for h in loaded] == [h.chunk_id for h in hits]
    assert all(h.text_loaded and h.text == texts[h.chunk_id] for h in loaded[:5])
    assert not any(h.text_loaded for h in loaded[5:] if h.chunk_id not in {s.chunk_id for s in shipped})
    # Whatever the legs shipped, every hit a search returns (and every merged neighbour) has its text.
    for k in (1, 3, 8):
        result = await hybrid_search(pool, embedder, query, k=k)
        assert result.chunks and all(h.text_loaded for h in result.chunks)
        for h in result.chunks:
            assert h.text == "\n\n".join(texts[c].strip() for c in (h.chunk_id, *h.merged_chunk_ids)) or (
                not h.merged_chunk_ids and h.text == texts[h.chunk_id])


async def test_searches_follow_a_reindex_to_another_model(pool, embedder, runbooks: Path) -> None:
    from retrieval.embed import WordLlamaEmbedder
    from retrieval.reindex import reindex

    await _ingest(pool, embedder, runbooks)
    before = await hybrid_search(pool, embedder, "redis maxmemory evictions")
    assert any(h.dense_rank for h in before.chunks)
    small = WordLlamaEmbedder("l2_supercat_128")
    await reindex(pool, small)  # a new active version of 128 dims; the 256-dim one is gone
    after = await hybrid_search(pool, small, "redis maxmemory evictions")
    assert any(h.dense_rank for h in after.chunks), "the dense leg reads the new version"
    assert _paths(after)[0] == _paths(before)[0]
    again = await hybrid_search(pool, small, "redis maxmemory evictions")
    assert [(h.chunk_id, h.dense_rank) for h in again.chunks] == [(h.chunk_id, h.dense_rank) for h in after.chunks]


async def test_a_first_ingest_leaves_planner_statistics(pool, embedder, runbooks: Path) -> None:
    await _ingest(pool, embedder, runbooks)
    async with pool.connection() as conn:
        rows = await (await conn.execute(
            "SELECT relname, last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL FROM pg_stat_user_tables"
            " WHERE relname = ANY(%s)", (list(store.SEARCH_TABLES),))).fetchall()
    assert dict(rows) == {t: True for t in store.SEARCH_TABLES}


async def test_metadata_filters_restrict_results_and_still_fill_k(pool, embedder, runbooks: Path) -> None:
    await _ingest(pool, embedder, runbooks)
    # The query matches other runbooks far better; the filter must still return k rows of platform's.
    result = await hybrid_search(pool, embedder, "kafka consumer group lag", k=3,
                                 filters=SearchFilters(services=("platform",)))
    assert _paths(result) and set(_paths(result)) == {"disk-full.md"}
    async with pool.connection() as conn:
        row = await (await conn.execute(
            "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.path = 'disk-full.md'"
        )).fetchone()
    assert len(result.chunks) + sum(len(h.merged_chunk_ids) for h in result.chunks) >= min(3, row[0])

    tagged = await hybrid_search(pool, embedder, "memory", k=5, filters=SearchFilters(tags=("Kubernetes",)))
    assert tagged.chunks
    assert all("kubernetes" in h.document_metadata["tags"] for h in tagged.chunks)
    assert not await _nonempty(pool, embedder, "memory", SearchFilters(environments=("staging",)))
    assert await _nonempty(pool, embedder, "memory", SearchFilters(environments=("Production",)))
    assert not await _nonempty(pool, embedder, "memory", SearchFilters(sources=("other",)))


async def _dense_ids(pool, embedder, query: str, filters: SearchFilters) -> list[int]:  # type: ignore[no-untyped-def]
    hits, _, _ = await fetch_candidates(pool, embedder, query, filters, SearchConfig(legs="dense"))
    return [h.chunk_id for h in sorted(hits, key=lambda h: h.dense_rank or 0)]


def _plan_nodes(plan: dict) -> list[dict]:  # type: ignore[type-arg]
    return [plan, *(n for child in plan.get("Plans", []) for n in _plan_nodes(child))]


@pytest.mark.parametrize("ratio", [candidates.EXACT_RATIO, 0])
async def test_a_filtered_dense_leg_ranks_the_allowed_chunks_by_distance(
    pool, embedder, runbooks: Path, monkeypatch: pytest.MonkeyPatch, ratio: int
) -> None:
    """Exact distances over a selective filter's chunks (the default here: few chunks) or the HNSW
    walk (ratio 0): both rank exactly the allowed chunks, nearest first."""
    await _ingest(pool, embedder, runbooks)
    monkeypatch.setattr(candidates, "EXACT_RATIO", ratio)
    query, filters = "pods keep restarting after a deploy", SearchFilters(tags=("kubernetes",))
    async with pool.connection() as conn:
        version = await store.active_index(conn)
        assert version is not None
        expected = [row[0] for row in await (await conn.execute(
            sql.SQL("SELECT e.chunk_id FROM chunk_embeddings e JOIN chunks c ON c.id = e.chunk_id"
                    " JOIN documents d ON d.id = c.document_id JOIN sources src ON src.id = d.source_id"
                    " WHERE e.version = {v} AND {f}"
                    " ORDER BY e.embedding::halfvec({dim}) <=> %s::halfvec({dim}), e.chunk_id").format(
                v=version.id, f=candidates.filter_clause(filters), dim=version.dim),
            (embedder.embed([query])[0],))).fetchall()]
    assert 0 < len(expected) < 100, "the filter allows some chunks, fewer than the leg's pool"
    assert await _dense_ids(pool, embedder, query, filters) == expected

    # Which way the leg went: the exact branch reads the allowed set (alias a) only when it runs.
    params = {**candidate_params(query, filters, SearchConfig()), "vector": embedder.embed([query])[0]}
    async with pool.connection() as conn:
        row = await (await conn.execute(
            sql.SQL("EXPLAIN (ANALYZE, FORMAT JSON) ") + candidates.statement("dense", version, filters, params),
            params)).fetchone()
    exact = [n for n in _plan_nodes(row[0][0]["Plan"]) if n.get("CTE Name") == "allowed" and n.get("Alias") == "a"]
    assert len(exact) == 1 and exact[0]["Actual Loops"] == (1 if ratio else 0)


async def test_tag_filter_and_boost_ignore_case_and_accept_a_single_tag(pool, embedder, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("---\ntags: [Kubernetes, Storage]\n---\n# Volume full\n\nResize the volume claim.\n")
    (tmp_path / "b.md").write_text("---\ntags: DATABASE\n---\n# Replica lag\n\nCheck the volume of writes.\n")
    (tmp_path / "c.md").write_text("# Untagged\n\nThe volume is fine.\n")
    await _ingest(pool, embedder, tmp_path)
    by_tag = {tag: {h.document_path for h in (await hybrid_search(pool, embedder, "volume", k=5,
                                                                  filters=SearchFilters(tags=(tag,)))).chunks}
              for tag in ("kubernetes", "STORAGE", "database", "network")}
    assert by_tag == {"kubernetes": {"a.md"}, "STORAGE": {"a.md"}, "database": {"b.md"}, "network": set()}
    hits = (await hybrid_search(pool, embedder, "database volume", k=5)).chunks
    assert {h.document_path: "tags" in h.boosts for h in hits} == {"a.md": False, "b.md": True, "c.md": False}


async def _nonempty(pool, embedder, query: str, filters: SearchFilters) -> bool:  # type: ignore[no-untyped-def]
    return bool((await hybrid_search(pool, embedder, query, filters=filters)).chunks)


async def test_source_filter_and_dedupe_by_content_hash(pool, embedder, runbooks: Path) -> None:
    await _ingest(pool, embedder, runbooks, source="a")
    await _ingest(pool, embedder, runbooks, source="b")
    result = await hybrid_search(pool, embedder, "disk full no space left on device", k=10)
    hashes = [h.text_hash for h in result.chunks]
    assert len(hashes) == len(set(hashes)), "identical chunk texts appear once"
    only_b = await hybrid_search(pool, embedder, "disk full no space left on device", k=10,
                                 filters=SearchFilters(sources=("b",)))
    assert only_b.chunks and {h.source for h in only_b.chunks} == {"b"}


async def test_unrelated_query_is_not_confident_and_lists_closest_titles(pool, embedder, runbooks: Path) -> None:
    await _ingest(pool, embedder, runbooks)
    result = await hybrid_search(pool, embedder, "how do I bake sourdough bread")
    assert not result.confident and not result.plausible
    assert result.confidence < SearchConfig().min_plausible
    assert 1 <= len(result.closest_titles) <= 3
    assert set(result.features) == set(FEATURES), "the confidence model's inputs come with the result"


async def test_a_question_that_shares_one_word_with_a_runbook_is_not_confident(pool, embedder, runbooks: Path) -> None:
    await _ingest(pool, embedder, runbooks)
    for question in ("How do I renew the office printer toner?", "renew my passport", "printer is out of paper"):
        result = await hybrid_search(pool, embedder, question)
        assert not result.confident, (question, result.confidence)
    for question in ("How do I renew the office printer toner?", "printer is out of paper"):
        assert not (await hybrid_search(pool, embedder, question)).plausible, question
    for question in ("How do I renew the TLS certificate?", "disk full on /var/lib/docker"):
        assert (await hybrid_search(pool, embedder, question)).confident, question


def test_plain_terms_are_words_not_parts_of_names() -> None:
    assert plain_terms("How do I renew the office PRINTER toner?") == ["offic", "printer", "renew", "toner"]
    assert plain_terms("KubePodCrashLooping web-01 payments/api postgres_service 10.2.3.4 x2x9q") == []
    assert plain_terms("disk " * 13) == [], "a pasted alert's words do not count"


async def test_token_budget_keeps_the_best_hits_that_fit(pool, embedder, runbooks: Path) -> None:
    await _ingest(pool, embedder, runbooks)
    full = await hybrid_search(pool, embedder, "certificate renewal cert-manager", k=5)
    budget = full.chunks[0].token_count + 1
    limited = await hybrid_search(pool, embedder, "certificate renewal cert-manager", k=5, token_budget=budget)
    assert limited.chunks and limited.chunks[0].chunk_id == full.chunks[0].chunk_id
    assert sum(h.token_count for h in limited.chunks) <= budget
    tiny = await hybrid_search(pool, embedder, "certificate renewal cert-manager", k=5, token_budget=1)
    assert len(tiny.chunks) == 1, "always at least one hit"


async def test_parent_section_and_runbook_lookup(pool, embedder, runbooks: Path) -> None:
    await _ingest(pool, embedder, runbooks)
    hit = (await hybrid_search(pool, embedder, "OOMKilled", k=1)).chunks[0]
    section = await fetch_parent_section(pool, hit.chunk_id)
    assert section is not None and section.document_id == hit.document_id
    assert section.heading_path == hit.heading_path
    assert hit.text.split("\n\n")[0].strip()[:80] in section.text

    by_id = await get_runbook(pool, hit.document_id)
    by_path = await get_runbook(pool, "oom-killed.md")
    assert by_id is not None and by_path is not None
    assert by_id.document_id == by_path.document_id and by_id.path == "oom-killed.md"
    assert by_id.metadata["service"] == "search-indexer" and by_id.sections
    assert await get_runbook(pool, 10**9) is None
    assert await get_runbook(pool, "no-such-runbook.md") is None
    assert await fetch_parent_section(pool, 10**9) is None


async def test_empty_database_abstains(pool, embedder) -> None:
    result = await hybrid_search(pool, embedder, "KubePodCrashLooping")
    assert result.chunks == [] and result.closest_titles == []
    assert result.confidence == 0.0 and not result.confident


# --- pure functions ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("OOMKilled exit code 137", "lexical"),
        ("ECONNREFUSED on port 5432", "lexical"),
        ("kubectl delete pod --grace-period=0", "lexical"),
        ("why does the pod keep restarting", "dense"),
        ("how should we size the redis cache", "dense"),
        ("disk is almost full on the database host and writes are slow since this morning", "neutral"),
    ],
)
def test_query_classification(query: str, kind: str) -> None:
    assert classify_query(query) == kind


def test_rrf_rewards_agreement_between_legs() -> None:
    lex_only, dense_only, both = _chunk(1, lex=(1, 9.0)), _chunk(2, dense=(1, 0.9)), _chunk(3, lex=(2, 5.0), dense=(2, 0.8))
    hits = [lex_only, dense_only, both]
    ranking.fuse(hits, SearchConfig(fusion="rrf", lexical_weight=0.5, rrf_k=60), "neutral")
    assert both.score > lex_only.score == pytest.approx(dense_only.score)
    assert both.score == pytest.approx(60 / 62)
    ranking.fuse(hits, SearchConfig(fusion="rrf", lexical_weight=0.8, rrf_k=60), "neutral")
    assert lex_only.score > dense_only.score


def test_convex_fusion_normalises_each_leg() -> None:
    a, b, c = _chunk(1, lex=(1, 10.0)), _chunk(2, dense=(1, 0.9)), _chunk(3, lex=(2, 5.0), dense=(2, 0.8))
    ranking.fuse([a, b, c], SearchConfig(fusion="convex", lexical_weight=0.7), "neutral")
    assert a.score == pytest.approx(0.7) and b.score == pytest.approx(0.3) and c.score == pytest.approx(0.35)
    ranking.fuse([a, b, c], SearchConfig(fusion="convex", lexical_weight=0.5, query_type_shift=0.2), "lexical")
    assert a.score == pytest.approx(0.7), "lexical-looking queries shift weight to BM25"
    ranking.fuse([a, b, c], SearchConfig(legs="dense"), "neutral")
    assert a.score == 0.0 and b.score == pytest.approx(1.0)


def test_name_and_path_matches_boost_the_named_runbook() -> None:
    named, other = _chunk(1, doc=1, lex=(1, 5.0)), _chunk(2, doc=2, lex=(2, 5.0))
    named.document_path, named.document_title = "alerts/KubePodCrashLooping.md", "Pod crash looping"
    other.document_path = "kube/nodes.md"
    hits = [other, named]
    for h in hits:
        h.score = 0.5
    ranking.apply_boosts(hits, "[FIRING] KubePodCrashLooping (s2): pod restarting", SearchConfig())
    assert "name_match" in named.boosts and named.score > other.score
    assert ranking.name_terms("docs/elastic/troubleshooting/README.md") == {"elast", "troubleshoot"}


def test_names_spelled_as_separate_words_match_the_document() -> None:
    specific, general = _chunk(1, doc=1, lex=(1, 5.0)), _chunk(2, doc=2, lex=(2, 5.0))
    specific.document_path, specific.document_title = "queue/queue-worker.md", "Queue worker"
    general.document_path, general.document_title = "queue/queue.md", "Queue general alerts"
    hits = [general, specific]
    for h in hits:
        h.score = 0.5
    ranking.apply_boosts(hits, "Queue Worker is dropping jobs. Queue Worker is dropping jobs", SearchConfig())
    assert "name_match" in specific.boosts, "'Queue Worker' names queue-worker.md"
    assert specific.score > general.score
    assert "queueworker" in ranking.query_identifiers("the queue worker")
    assert "servicehostisdown" in ranking.query_identifiers("service.host is down")


def test_host_and_pod_names_are_no_hint_at_a_folder() -> None:
    assert ranking.strip_instances("disk full on web-01 and payments/api-6c4b9f7d2-q8w3z now") == "disk full on and now"
    kept = "node-exporter kube-state-metrics pg_stat_replication x509 v1.28.3 http2 5xx ORA"
    assert ranking.strip_instances(kept) == kept
    readme = _chunk(1, doc=1, lex=(1, 5.0))
    readme.document_path = "docs/web/README.md"
    readme.score = 0.5
    ranking.apply_boosts([readme], "postgres down on web-01", SearchConfig())
    assert "path_match" not in readme.boosts, "web-01 is where it happens, not the web runbook"
    ranking.apply_boosts([readme], "web service is slow", SearchConfig())
    assert readme.boosts["path_match"] == pytest.approx(SearchConfig().path_boost / ranking.MIN_NAME_TERMS)


def test_merge_adjacent_chunks_of_one_section() -> None:
    first = _chunk(1, section=7, position=0, text="part one", tokens=5)
    second = _chunk(2, section=7, position=1, text="part two", tokens=6)
    elsewhere = _chunk(3, section=8, position=1, text="other", tokens=4)
    merged = ranking.merge_adjacent([first, elsewhere, second])
    assert [h.chunk_id for h in merged] == [1, 3]
    assert merged[0].text == "part one\n\npart two" and merged[0].token_count == 11
    assert merged[0].merged_chunk_ids == (2,)

    later, earlier = _chunk(4, section=9, position=1, text="two"), _chunk(5, section=9, position=0, text="one")
    merged = ranking.merge_adjacent([later, earlier])  # the better-ranked hit is the later chunk
    assert [h.text for h in merged] == ["two", "one"], "a hit already shown is not repeated inside another"


def test_dedupe_and_budget_helpers() -> None:
    a, b, c = _chunk(1, tokens=50), _chunk(2, tokens=50), _chunk(3, tokens=50)
    b.text_hash = a.text_hash
    assert [h.chunk_id for h in ranking.dedupe([a, b, c])] == [1, 3]
    assert [h.chunk_id for h in ranking.within_budget([a, c], 60)] == [1]
    assert [h.chunk_id for h in ranking.within_budget([a, c], 10)] == [1]


def test_confidence_is_zero_without_hits_and_rises_with_evidence() -> None:
    assert assess([], "anything", 0.0) == (0.0, {})
    weak = _chunk(1, lex=(1, 1.0), dense=(1, 0.2))
    strong = _chunk(2, lex=(1, 10.0), dense=(1, 0.8))
    strong.boosts = {"name_match": 0.3}
    assert assess([strong], "q", 5.0)[0] > assess([weak], "q", 5.0)[0]


def test_a_folders_readme_yields_to_its_specific_page() -> None:
    from datetime import datetime, timezone

    from retrieval.ranking import apply_boosts
    from retrieval.search_types import ScoredChunk, SearchConfig

    def hit(doc: int, path: str) -> ScoredChunk:
        return ScoredChunk(chunk_id=doc, document_id=doc, section_id=doc, position=0, document_path=path,
                           document_title=path, source="s", heading_path=(), text="", text_hash="", token_count=1,
                           score=0.50)

    overview, page = hit(1, "docs/praefect/README.md"), hit(2, "docs/praefect/praefect-bypass.md")
    apply_boosts([overview, page], "bypass praefect", SearchConfig(path_boost=0.0), datetime.now(timezone.utc))
    assert overview.boosts.get("overview") == -SearchConfig().overview_penalty and "overview" not in page.boosts
    plain = hit(1, "docs/praefect/README.md")
    apply_boosts([plain], "bypass praefect", SearchConfig(path_boost=0.0, overview_penalty=0.0), datetime.now(timezone.utc))
    assert "overview" not in plain.boosts


def test_a_section_headed_by_the_alerts_name_names_the_runbook() -> None:
    general, store = _chunk(1, doc=1, lex=(1, 9.0)), _chunk(2, doc=2, lex=(2, 5.0))
    general.document_path, general.document_title = "monitoring/thanos.md", "Thanos General Alerts"
    general.text = "# Thanos General Alerts\n\n### ThanosBucketHighOperationFailures\n\nCheck the bucket."
    store.document_path, store.document_title = "monitoring/thanos-store.md", "Thanos Store"
    for h in (general, store):
        h.score = 0.5
    ranking.apply_boosts([general, store], "ThanosBucketHighOperationFailures. thanos-store operations failing",
                         SearchConfig())
    assert "name_match" in general.boosts, "its section is headed by the alert's name"
    assert "name_match" in store.boosts, "thanos-store still names thanos-store.md"
    assert ranking.alert_names("ThanosBucketHighOperationFailures. component_saturation_slo_out_of_bounds x") == {
        "thanosbuckethighoperationfailures", "componentsaturationslooutofbounds"}
    assert not ranking.alert_names("Troubleshooting the thanos store"), "a plain word is no alert name"
    prose = _chunk(3, doc=3, lex=(3, 5.0))
    prose.text = "## Troubleshooting\n\nThe ThanosBucketHighOperationFailures alert fires when..."
    assert not ranking.documents_with_alert_section([prose], "ThanosBucketHighOperationFailures"), \
        "a mention in running text is the lexical leg's business, not a heading"
