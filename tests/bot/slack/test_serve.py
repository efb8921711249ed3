"""`runbook-bot serve` with Slack: HTTP on /slack/events next to /healthz, or Socket Mode when
SLACK_APP_TOKEN is set; cancelling the server lets the answer in flight finish."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.app import serve
from tests.bot.slack.test_adapter import texts
from tests.slackfake import FORM, FakeSlackAPI, command_body, sign, slack_settings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def fake(slack_api: FakeSlackAPI) -> FakeSlackAPI:
    return slack_api


@contextlib.asynccontextmanager
async def serving(settings: Any) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(serve(settings))
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _until(predicate: Any, timeout: float = 60) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.05)


async def _healthy(session: aiohttp.ClientSession, port: int) -> None:
    async with asyncio.timeout(60):
        while True:
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(f"http://127.0.0.1:{port}/healthz") as resp:
                    if resp.status == 200:
                        return
            await asyncio.sleep(0.1)


async def test_serve_over_http(fake: FakeSlackAPI, examples_pool, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    port = _free_port()
    settings = slack_settings(fake, database_url=examples_pool.conninfo, port=port, runbook_bot_home=tmp_path,
                              api_keys={"ops": {"key": "k-ops-1"}})
    async with serving(settings), aiohttp.ClientSession() as session:
        await _healthy(session, port)
        ask = f"http://127.0.0.1:{port}/api/rag/ask"
        async with session.post(ask, json={"question": "disk full"}) as resp:
            assert resp.status == 401, "serve listens beyond loopback: the API needs a key"
        async with session.post(ask, json={"question": "disk full"}, headers={"Authorization": "Bearer k-ops-1"}) as resp:
            assert resp.status == 200 and (await resp.json())["sources"][0]["path"] == "disk-full.md"
        body = command_body("disk full on /var/lib/docker", response_url=fake.response_url())
        async with session.post(f"http://127.0.0.1:{port}/slack/events", data=body.encode(),
                                headers={"Content-Type": FORM, **sign(body)}) as resp:
            assert resp.status == 200
        async with session.post(f"http://127.0.0.1:{port}/slack/events", data=body.encode(),
                                headers={"Content-Type": FORM}) as resp:
            assert resp.status == 401
        await _until(lambda: fake.calls_to("chat.postMessage"))
    [update] = fake.calls_to("chat.update")  # the server waited for the answer before stopping
    assert "```df -hT" in texts(update.args["blocks"])


async def test_serve_over_socket_mode(fake: FakeSlackAPI, examples_pool, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    port = _free_port()
    settings = slack_settings(fake, database_url=examples_pool.conninfo, port=port, runbook_bot_home=tmp_path,
                              slack_app_token="xapp-1-serve", slack_signing_secret=None)
    async with serving(settings), aiohttp.ClientSession() as session:
        await _healthy(session, port)
        async with session.post(f"http://127.0.0.1:{port}/slack/events", data=b"{}") as resp:
            assert resp.status == 404, "no HTTP endpoint in Socket Mode"
        await fake.wait_connected(60)
        command = dict(urllib.parse.parse_qsl(command_body("disk full on /var/lib/docker",
                                                           response_url=fake.response_url())))
        await fake.push({"envelope_id": "env-serve-1", "type": "slash_commands", "accepts_response_payload": True,
                         "payload": command})
        await fake.wait_ack("env-serve-1")
        await _until(lambda: fake.calls_to("chat.update"))
    assert "```df -hT" in texts(fake.calls_to("chat.update")[0].args["blocks"])
