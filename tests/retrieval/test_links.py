"""Runbook links in alerts resolved to documents, and the linked runbook put first."""

from __future__ import annotations

from retrieval.links import link_key, linked_documents
from retrieval.search import hybrid_search
from retrieval.search_types import SearchConfig, SearchFilters


async def test_links_name_documents_by_path_or_by_file_name(examples_pool) -> None:
    found = await linked_documents(examples_pool, [
        "https://git.example.com/ops/runbooks/blob/main/examples/runbooks/disk-full.md",  # the repository
        "https://runbooks.example.com/linux/KafkaConsumerLag",  # a published site, its own spelling
        "https://grafana.example.com/d/abc?orgId=1",  # a dashboard: nothing
        "https://runbooks.example.com/",  # no path
    ])
    assert found == ["disk-full.md", "kafka-consumer-lag.md"]
    assert link_key("not a url") == ("not a url", "notaurl", "")


async def test_a_pinned_runbook_comes_first_even_when_the_words_do_not_reach_it(examples_pool, embedder) -> None:
    plain = await hybrid_search(examples_pool, embedder, "kafka consumer lag growing", k=5)
    assert plain.chunks[0].document_path == "kafka-consumer-lag.md"
    pinned = await hybrid_search(examples_pool, embedder, "kafka consumer lag growing", k=5, pinned=("tls-certificate-expiry.md",))
    assert pinned.chunks[0].document_path == "tls-certificate-expiry.md"
    assert pinned.chunks[0].boosts["runbook_link"] > 0 and pinned.confident
    assert any(h.document_path == "kafka-consumer-lag.md" for h in pinned.chunks), "the rest still follows"
    only = SearchFilters(paths=("redis-memory.md",))
    assert {h.document_path for h in (await hybrid_search(examples_pool, embedder, "memory", filters=only)).chunks} == {"redis-memory.md"}


async def test_abbreviations_reach_the_runbook_words(examples_pool, embedder) -> None:
    expanded = await hybrid_search(examples_pool, embedder, "pg repl behind on the replica", k=3)
    literal = await hybrid_search(examples_pool, embedder, "pg repl behind on the replica", k=3,
                                  config=SearchConfig(rewrite_query=False))
    assert expanded.chunks[0].document_path == "postgres-replication-lag.md"
    assert expanded.query == literal.query == "pg repl behind on the replica", "the result keeps what was asked"
    assert expanded.confidence > literal.confidence
