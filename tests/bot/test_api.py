"""POST /api/rag/ask through the real aiohttp app, on the example runbooks in a real Postgres."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from psycopg_pool import AsyncConnectionPool

from bot.api import add_routes
from bot.app import make_answerer
from bot.settings import Settings
from bot.records.answers import recent_answers
from tests.fakes import ScriptedLLM, call, final, shown_blocks

DISK = "Disk full on /var/lib/docker: No space left on device"


async def _client(pool, embedder, llm=None) -> TestClient:  # type: ignore[no-untyped-def]
    app = web.Application()
    add_routes(app, make_answerer(Settings(_env_file=None, llm_gate=False), pool, embedder, llm))
    client = TestClient(TestServer(app))
    await client.start_server()
    return client


@pytest.fixture
async def client(examples_pool, embedder) -> AsyncIterator[TestClient]:
    c = await _client(examples_pool, embedder)
    yield c
    await c.close()


async def test_ask_returns_answer_sources_with_text_and_model(client: TestClient, examples_pool) -> None:
    response = await client.post("/api/rag/ask", json={"question": DISK, "max_results": 2})
    assert response.status == 200
    body = await response.json()
    assert body["mode"] == "extractive" and body["model_used"] is None and not body["abstained"]
    assert body["answer"] and body["steps"] and body["request_id"]
    assert 1 <= len(body["sources"]) <= 2
    top = body["sources"][0]
    assert top["path"] == "disk-full.md" and top["chunk_id"] and top["relevance"] > 0
    assert top["document"] == "Disk full on a Linux host" and top["text"]
    stored = await recent_answers(examples_pool, 1)
    assert stored[0]["id"] == body["answer_id"] and stored[0]["entry_point"] == "api"


async def test_include_sources_false_and_request_id_echo(client: TestClient) -> None:
    response = await client.post("/api/rag/ask", json={"question": DISK, "include_sources": False},
                                 headers={"X-Request-Id": "req-42"})
    body = await response.json()
    assert "sources" not in body and body["request_id"] == "req-42"
    assert response.headers["X-Request-Id"] == "req-42"


async def test_filters_restrict_retrieval(client: TestClient) -> None:
    response = await client.post("/api/rag/ask", json={"question": DISK, "filters": {"tags": ["kafka"]}})
    body = await response.json()
    assert response.status == 200
    assert all(s["path"] == "kafka-consumer-lag.md" for s in body["sources"]) or body["abstained"]


async def test_incident_context_drives_the_answer(client: TestClient) -> None:
    response = await client.post("/api/rag/ask", json={
        "question": "what should I do?",
        "context": {"alert": {"alertname": "KubePodCrashLooping", "namespace": "payments"}}})
    body = await response.json()
    assert body["sources"][0]["path"] == "k8s-pod-crashloop.md"


@pytest.mark.parametrize("payload, status, needle", [
    ("not json at all", 400, "invalid JSON body"),
    (json.dumps({"max_results": 3}), 400, "question"),
    (json.dumps({"question": DISK, "max_results": 100}), 400, "max_results"),
    (json.dumps({"question": DISK, "shell": "rm -rf /"}), 400, "shell"),
    (json.dumps({"question": DISK, "filters": {"team": ["x"]}}), 400, "filters.team"),
    (json.dumps({"question": "   \u200b  "}), 400, "Ask me about an incident"),
])
async def test_bad_requests_get_clear_json_errors(client: TestClient, payload: str, status: int, needle: str) -> None:
    response = await client.post("/api/rag/ask", data=payload, headers={"Content-Type": "application/json"})
    assert response.status == status
    assert needle in await response.text()


async def test_database_down_is_a_503_with_a_message(embedder) -> None:
    pool = AsyncConnectionPool("postgresql://nobody@127.0.0.1:9/none?connect_timeout=1", open=False, timeout=1)
    await pool.open(wait=False)
    c = await _client(pool, embedder)
    try:
        response = await c.post("/api/rag/ask", json={"question": DISK})
        assert response.status == 503
        assert "runbook database is unavailable" in (await response.json())["error"]
    finally:
        await c.close()
        await pool.close()


async def test_llm_answer_through_the_api(examples_pool, embedder) -> None:
    def reply(conversation, tools):  # type: ignore[no-untyped-def]
        cid = next(iter(shown_blocks(conversation)))
        return final("Free space first.", [{"instruction": "Check df", "citations": [f"c{cid}"]}])

    llm = ScriptedLLM([call("hybrid_search", {"query": DISK}), reply], name="scripted")
    c = await _client(examples_pool, embedder, llm)
    try:
        body = await (await c.post("/api/rag/ask", json={"question": DISK})).json()
        assert body["mode"] == "llm" and body["model_used"] == "scripted"
        assert body["sources"][0]["chunk_id"] in body["trace"]["retrieved_chunk_ids"]
    finally:
        await c.close()


async def test_filter_values_with_percent_signs_or_nul_are_plain_values(client: TestClient) -> None:
    """`%` is no placeholder and NUL no crash: such a filter simply matches no runbook."""
    for filters in ({"service": ["50%"]}, {"source": ["%"]}, {"tags": ["disk\u0000"]}, {"environment": ["%(x)s"]}):
        response = await client.post("/api/rag/ask", json={"question": DISK, "filters": filters})
        assert response.status in (200, 400), (filters, response.status, await response.text())
        if response.status == 200:
            body = await response.json()
            assert body["abstained"] or body["sources"][0]["path"] != "disk-full.md" or filters == {"tags": ["disk\u0000"]}
