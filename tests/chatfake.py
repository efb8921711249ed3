"""What the Slack and Teams test harnesses share: the running server with a chat adapter mounted, what its
endpoint answered, and answerers that fail or wait (apologies, the ack coming before the answer)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from retrieval.db import DatabaseUnavailable

if TYPE_CHECKING:
    from bot.slack.adapter import SlackBot
    from bot.teams.adapter import TeamsBot


@dataclass
class Reply:
    """What the adapter's HTTP endpoint answered, and how long it took."""

    status: int
    body: str
    seconds: float

    def json(self) -> Any:
        """The body as JSON (an ack with a message, an invoke response); None when there is no body."""
        return json.loads(self.body) if self.body else None


class ServerHarness:
    """A running server with a chat adapter mounted, driven over HTTP; `start` builds it (per platform)."""

    def __init__(self, bot: SlackBot | TeamsBot, server: TestServer) -> None:
        self.bot, self.server = bot, server
        self.session = aiohttp.ClientSession()
        self.pool = bot.deps.pool

    @classmethod
    async def start(cls, *args: Any, **kwargs: Any) -> Self:
        """Build answerer, adapter and server from settings, as `runbook-bot serve` does."""
        raise NotImplementedError

    @classmethod
    @contextlib.asynccontextmanager
    async def running(cls, *args: Any, **kwargs: Any) -> AsyncIterator[Self]:
        """`start` ... `close`."""
        harness = await cls.start(*args, **kwargs)
        try:
            yield harness
        finally:
            await harness.close()

    async def close(self) -> None:
        """Wait for background work, then stop."""
        await self.bot.tasks.drain(60)
        await self.session.close()
        await self.server.close()

    async def send(self, path: str, data: str | bytes, headers: Mapping[str, str]) -> Reply:
        """POST `data` to the server, timed."""
        started = time.perf_counter()
        async with self.session.post(self.server.make_url(path), data=data, headers=dict(headers)) as resp:
            text = await resp.text()
        return Reply(resp.status, text, time.perf_counter() - started)

    async def done(self, timeout: float = 60.0) -> None:
        """Wait until every answer started so far has been posted (a real model needs longer)."""
        await self.bot.tasks.drain(timeout)

    async def rows(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        """Rows of a query on the bot's database."""
        async with self.pool.connection() as conn:
            return await (await conn.execute(query, args)).fetchall()


def answer_failures(unexpected: str) -> pytest.MarkDecorator:
    """Run a test for a bug and for a database outage while answering: `exc`, and `expected` in the apology
    (`unexpected` for the bug)."""
    return pytest.mark.parametrize(("exc", "expected"), [
        (RuntimeError("boom"), unexpected),
        (DatabaseUnavailable("down"), "runbook database is unavailable"),
    ])


class BrokenAnswerer:
    """An answerer whose every answer fails."""

    def __init__(self, exc: Exception, pool: Any) -> None:
        self.exc, self.pool = exc, pool

    async def answer(self, question: str, context: Any = None) -> Any:
        """Raise the exception."""
        raise self.exc


class GatedAnswerer:
    """Answers as `real` does, but only once `gate` is set."""

    def __init__(self, real: Any, gate: asyncio.Event) -> None:
        self.real, self.gate, self.pool = real, gate, real.pool

    async def answer(self, question: str, context: Any = None) -> Any:
        """Wait for the gate, then answer."""
        await self.gate.wait()
        return await self.real.answer(question, context)
