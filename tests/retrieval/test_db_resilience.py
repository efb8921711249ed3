"""The pool's circuit breaker, and the embedded server's lifetime when the processes using it die,
against real PostgreSQL (the API's view of an outage is in tests/bot/test_db_down.py)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from retrieval import db

REFUSED = "postgresql://nobody@127.0.0.1:9/none"


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_breaker_refuses_during_the_cooldown_then_lets_one_caller_try() -> None:
    clock = Clock()
    breaker = db.CircuitBreaker(cooldown_s=5, clock=clock)
    breaker.check()  # closed
    breaker.failed("connection refused")
    with pytest.raises(db.DatabaseUnavailable, match="connection refused"):
        breaker.check()
    clock.now += 5
    breaker.check()  # this caller tries again...
    with pytest.raises(db.DatabaseUnavailable):
        breaker.check()  # ...the others are still refused while it does
    breaker.succeeded()
    breaker.check()


async def test_a_pool_whose_database_refuses_fails_fast_then_tries_again() -> None:
    clock = Clock()
    pool = db.Pool(REFUSED, breaker=db.CircuitBreaker(cooldown_s=5, clock=clock), open=False, timeout=30,
                   kwargs={"connect_timeout": 2})
    await pool.open(wait=False)
    try:
        started = time.monotonic()
        with pytest.raises(db.DatabaseUnavailable, match="cannot connect to the database") as first:
            await pool.getconn()
        assert "trying again" not in str(first.value), "this caller tried"
        with pytest.raises(db.DatabaseUnavailable, match="trying again in 5 s"):
            await pool.getconn()
        assert time.monotonic() - started < 15, "not the pool's 30 s timeout"
        clock.now += 5
        with pytest.raises(db.DatabaseUnavailable) as again:
            await pool.getconn()
        assert "trying again" not in str(again.value), "tried again after the cooldown"
    finally:
        await pool.close()


async def test_a_busy_pool_waits_instead_of_failing(pool) -> None:  # type: ignore[no-untyped-def]
    """No connection within FAIL_FAST_S is not an outage while a fresh one opens: the caller waits."""
    busy = db.Pool(pool.conninfo, min_size=1, max_size=1, open=False, fail_fast_s=0.2)
    await busy.open(wait=True)
    try:
        held = await busy.getconn()
        waiting = busy.getconn(timeout=10)

        async def release() -> None:
            await asyncio.sleep(1)
            await busy.putconn(held)

        conn, _ = await asyncio.gather(waiting, release())
        await busy.putconn(conn)
        assert busy.breaker.reason is None
    finally:
        await busy.close()


# --- The embedded server outlives no one ------------------------------------------------------------------------------

USER = """
import sys, pathlib, psycopg
from retrieval.db import start_embedded
url = start_embedded(pathlib.Path(sys.argv[1]))
assert psycopg.connect(url).execute('select 42').fetchone()[0] == 42
print('ready', flush=True)
if sys.argv[2] == 'stay':
    sys.stdin.read()  # until the test closes stdin
"""


def _user(pgdata: Path, stay: bool) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", USER, str(pgdata), "stay" if stay else "go"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ready(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "ready", proc.communicate(timeout=60)


def _postmaster(pgdata: Path) -> int | None:
    """The pid of the server running in pgdata, or None."""
    try:
        pid = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
        os.kill(pid, 0)
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return None
    return pid


@pytest.fixture
def pgdata(tmp_path: Path) -> Iterator[Path]:
    """A data folder whose server, if a test leaves one running, is stopped afterwards."""
    folder = tmp_path / "pgdata"
    yield folder
    if (pid := _postmaster(folder)) is not None:
        os.kill(pid, signal.SIGINT)  # fast shutdown
        deadline = time.monotonic() + 30
        while _postmaster(folder) is not None and time.monotonic() < deadline:
            time.sleep(0.1)


def test_a_server_whose_user_was_killed_stops_when_its_last_user_exits(pgdata: Path) -> None:
    killed = _user(pgdata, stay=True)
    _ready(killed)
    killed.kill()  # no atexit: its claim on the server stays behind
    killed.communicate(timeout=60)
    assert _postmaster(pgdata) is not None, "the server outlived the killed process"

    later = _user(pgdata, stay=False)
    _ready(later)
    assert later.wait(timeout=120) == 0
    assert _postmaster(pgdata) is None, "the last user exited: the server stopped"


def test_a_server_still_in_use_keeps_running_when_another_user_exits(pgdata: Path) -> None:
    first = _user(pgdata, stay=True)
    _ready(first)
    try:
        second = _user(pgdata, stay=False)
        _ready(second)
        assert second.wait(timeout=120) == 0
        assert _postmaster(pgdata) is not None, "the first user still needs it"
    finally:
        first.communicate(input="", timeout=120)
    assert first.returncode == 0
    assert _postmaster(pgdata) is None, "stopped by its last user"
