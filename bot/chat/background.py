"""Platform-neutral helpers of the chat adapters: tracked background work and database errors."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from typing import Any

import psycopg
from psycopg_pool import PoolTimeout

from bot.observability import new_request_id
from retrieval.db import DatabaseUnavailable

DB_ERRORS = (DatabaseUnavailable, psycopg.OperationalError, PoolTimeout)


class Tasks:
    """Background work started after an ack, tracked so shutdown and tests can wait for it."""

    def __init__(self) -> None:
        self._running: set[asyncio.Task[None]] = set()

    def spawn(self, work: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        """Start `work` now; it is awaited by drain()."""
        context = contextvars.copy_context()
        context.run(new_request_id)  # each answer gets its own request id in the logs
        task = asyncio.create_task(work, name=name, context=context)
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return task

    async def drain(self, timeout: float | None = 60.0) -> None:
        """Wait until no background work is left (including work started meanwhile)."""
        async with asyncio.timeout(timeout):
            while self._running:
                await asyncio.wait(set(self._running))

    def __len__(self) -> int:
        return len(self._running)
