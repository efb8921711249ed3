"""/metrics, /readyz and structured logs with a request id, through the real aiohttp app."""

from __future__ import annotations

import json
import logging

from aiohttp.test_utils import TestClient, TestServer

from bot.app import make_answerer
from bot.llm import LiteLLMChat
from bot.observability import JsonFormatter, RequestIdFilter, new_request_id
from bot.runtime import Runtime
from bot.server import build_web_app
from bot.settings import Settings
from tests.fakes import FailingLLM

DISK = "Disk full on /var/lib/docker: No space left on device"


async def _client(pool, embedder, llm=None) -> TestClient:  # type: ignore[no-untyped-def]
    settings = Settings(_env_file=None)
    runtime = Runtime(pool=pool, embedder=embedder, answerer=make_answerer(settings, pool, embedder, llm))
    client = TestClient(TestServer(build_web_app(runtime)))
    await client.start_server()
    return client


def _value(text: str, line_start: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(line_start))


async def test_metrics_count_questions_stages_and_findings(examples_pool, embedder) -> None:
    client = await _client(examples_pool, embedder)
    try:
        before = await (await client.get("/metrics")).text()
        for question in (DISK, "What is the capital of France?"):
            assert (await client.post("/api/rag/ask", json={"question": question})).status == 200
        response = await client.get("/metrics")
        after = await response.text()
    finally:
        await client.close()
    assert response.headers["Content-Type"].startswith("text/plain")
    key = 'runbook_bot_questions_total{entry_point="api",outcome="answered"}'
    assert _value(after, key) == _value(before, key) + 1
    abstained = 'runbook_bot_questions_total{entry_point="api",outcome="abstained"}'
    assert _value(after, abstained) == _value(before, abstained) + 1
    assert _value(after, 'runbook_bot_stage_seconds_count{stage="search"}') >= 2
    assert _value(after, 'runbook_bot_stage_seconds_count{stage="answer"}') >= 2
    assert _value(after, "runbook_bot_citations_per_answer_count") >= 2
    assert _value(after, 'runbook_bot_guardrail_findings_total{rule=') > 0, "docker system prune -a is a warn"


async def test_readyz_reports_database_embedder_and_model(examples_pool, embedder) -> None:
    client = await _client(examples_pool, embedder)
    try:
        body = await (await client.get("/readyz")).json()
    finally:
        await client.close()
    assert body["ready"] and body["checks"]["database"] == "ok"
    assert body["checks"]["llm"].startswith("ok (none configured")


async def test_readyz_is_not_ready_after_the_model_failed(examples_pool, embedder) -> None:
    chat = LiteLLMChat("openai/stub", api_base="http://127.0.0.1:9/v1", api_key="sk-x", retries=0, timeout=2)
    client = await _client(examples_pool, embedder, chat)
    try:
        assert (await client.get("/readyz")).status == 200
        await client.post("/api/rag/ask", json={"question": DISK})  # answered extractively
        response = await client.get("/readyz")
        body = await response.json()
    finally:
        await client.close()
    assert response.status == 503 and body["checks"]["llm"].startswith("error: last call failed")


async def test_a_failing_model_still_answers_and_is_counted(examples_pool, embedder) -> None:
    client = await _client(examples_pool, embedder, FailingLLM())
    try:
        body = await (await client.post("/api/rag/ask", json={"question": DISK})).json()
    finally:
        await client.close()
    assert body["mode"] == "extractive" and "llm: provider unavailable (503)" in body["trace"]["errors"]


def test_json_logs_carry_the_request_id() -> None:
    rid = new_request_id("req-123")
    record = logging.LogRecord("bot.test", logging.INFO, __file__, 1, "answered %s", ("q",), None)
    RequestIdFilter().filter(record)
    line = json.loads(JsonFormatter().format(record))
    assert rid == "req-123" and line["request_id"] == "req-123" and line["message"] == "answered q"
    assert line["level"] == "INFO" and line["logger"] == "bot.test"
