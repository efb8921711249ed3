"""The model's search tool: filters it invents, and filters it must not widen."""

from __future__ import annotations

import json

from bot.llm import ToolCall
from bot.filters import describe, narrowed
from bot.tools import RunbookTools
from retrieval.search_types import SearchFilters

CRASHLOOP = "pod keeps restarting CrashLoopBackOff"


def _search(query: str, filters: dict | None = None) -> ToolCall:  # type: ignore[type-arg]
    arguments = {"query": query, **({"filters": filters} if filters is not None else {})}
    return ToolCall(id="c1", name="hybrid_search", arguments=json.dumps(arguments))


async def test_invented_filters_that_match_nothing_are_dropped_and_said(examples_pool, embedder) -> None:
    # What the 1.5B model sent under a KubePodCrashLooping alert: the alert name as a tag.
    tools = RunbookTools(examples_pool, embedder)
    shown = await tools.call(_search(CRASHLOOP, {"environment": ["production"], "tags": ["KubePodCrashLooping"]}))
    assert "No runbook matched the filters environment=production tag=KubePodCrashLooping" in shown
    assert "k8s-pod-crashloop.md" in shown
    assert [r.chunks[0].document_path for r in tools.ledger.searches] == ["k8s-pod-crashloop.md"]


async def test_filters_that_match_are_kept(examples_pool, embedder) -> None:
    tools = RunbookTools(examples_pool, embedder)
    shown = await tools.call(_search("memory", {"tags": ["redis"]}))
    assert "No runbook matched the filters" not in shown
    assert {hit.document_path for hit in tools.ledger.searches[0].chunks} == {"redis-memory.md"}


async def test_model_filters_never_widen_the_configured_ones(examples_pool, embedder) -> None:
    # The channel allows only the redis runbook; the model asks for the crashloop one by tag.
    allowed = SearchFilters(tags=("redis",))
    tools = RunbookTools(examples_pool, embedder, filters=allowed)
    shown = await tools.call(_search(CRASHLOOP, {"tags": ["crashloop"]}))
    assert "k8s-pod-crashloop.md" not in shown
    assert all(hit.document_path == "redis-memory.md" for r in tools.ledger.searches for hit in r.chunks)


def test_narrowed_keeps_shared_values_and_never_adds() -> None:
    base = SearchFilters(services=("checkout-api", "payments"), paths=("a.md",))
    assert narrowed(base, None) is base
    assert narrowed(None, SearchFilters(tags=("x",))) == SearchFilters(tags=("x",))
    both = narrowed(base, SearchFilters(services=("Payments", "search"), environments=("production",)))
    assert both == SearchFilters(services=("payments",), environments=("production",), paths=("a.md",))
    disjoint = narrowed(base, SearchFilters(services=("search",)))
    assert disjoint is not None and disjoint.services == ("checkout-api", "payments")
    assert describe(SearchFilters(services=("a", "b"), tags=("t",))) == "service=a,b tag=t"


async def test_the_source_and_its_link_travel_with_the_evidence_into_the_answer(examples_pool, embedder) -> None:
    """Search, the parent section and the whole runbook give each citation its runbook source and link;
    the answer's sources keep them, and a chat adapter's configured base goes over them without a query."""
    from bot.agent import AgentLimits, run_agent
    from bot.chat.core import source_links
    from bot.context import IncidentContext

    base = "https://git.example.com/sre/runbooks/blob/main"
    async with examples_pool.connection() as conn:
        await conn.execute("UPDATE sources SET base_url = %s WHERE name = 'examples'", (base,))
    tools = RunbookTools(examples_pool, embedder)
    await tools.call(_search("disk full /var/lib/docker"))
    [first, *_] = tools.ledger.evidence.values()
    assert first.source == "examples" and first.link and first.link.startswith(f"{base}/{first.path}#")
    parent = ToolCall(id="c2", name="fetch_parent_section", arguments=json.dumps({"chunk_id": first.chunk_id}))
    read = RunbookTools(examples_pool, embedder)  # a chunk it never searched: the link comes with the section
    await read.call(parent)
    assert read.ledger.evidence[first.chunk_id].link == first.link
    whole = RunbookTools(examples_pool, embedder)
    await whole.call(ToolCall(id="c3", name="get_runbook", arguments=json.dumps({"doc": first.path})))
    assert all(ev.source == "examples" and (ev.link or "").startswith(f"{base}/{first.path}")
               for ev in whole.ledger.evidence.values())

    answer = await run_agent("disk full on /var/lib/docker", IncidentContext(), llm=None,
                             tools=RunbookTools(examples_pool, embedder), limits=AgentLimits())
    assert answer.sources and all(s.source == "examples" and (s.link or "").startswith(base) for s in answer.sources)
    other = "https://wiki.example.com/runbooks"
    links = source_links({"examples": other}, answer)
    assert set(links) == {s.id for s in answer.sources} and all(link.startswith(other + "/") for link in links.values())
    assert source_links({}, answer) == {s.id: s.link for s in answer.sources}, "no configured base: the search's link"
