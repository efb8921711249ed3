"""Migrations, the embedded server and failure messages, against real PostgreSQL."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from retrieval import db


async def test_migrations_are_recorded_and_idempotent(database_url: str) -> None:
    before = await db.status(database_url)
    assert before and all(applied for _, applied in before)
    assert [m.version for m, _ in before] == sorted(m.version for m in db.load_migrations())
    assert await db.upgrade(database_url) == []


async def test_concurrent_upgrades_of_a_fresh_database(server_url: str) -> None:
    import psycopg
    from psycopg import sql

    from tests.conftest import _with_db

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS rb_fresh WITH (FORCE)")
        conn.execute("CREATE DATABASE rb_fresh")
    url = _with_db(server_url, "rb_fresh")
    try:
        results = await asyncio.gather(db.upgrade(url), db.upgrade(url), db.upgrade(url))
        applied = sorted(m.version for batch in results for m in batch)
        assert applied == [m.version for m in db.load_migrations()], "each migration applied exactly once"
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS rb_fresh WITH (FORCE)"))


async def test_unreachable_database_is_a_clear_error() -> None:
    with pytest.raises(db.DatabaseUnavailable, match="cannot connect to the database"):
        await db.open_pool("postgresql://nobody@127.0.0.1:9/none?connect_timeout=2")


def test_two_processes_start_the_embedded_server_at_once(tmp_path: Path) -> None:
    script = (
        "import sys, psycopg; from retrieval.db import start_embedded;"
        "url = start_embedded(__import__('pathlib').Path(sys.argv[1]));"
        "print(psycopg.connect(url).execute('select 42').fetchone()[0])"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "pgdata")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert [o[0].strip() for o in outputs] == ["42", "42"]
    # both processes exited: the last one stopped the server cleanly
    assert not (tmp_path / "pgdata" / "postmaster.pid").exists()


async def test_pool_connections_carry_search_settings(pool) -> None:  # type: ignore[no-untyped-def]
    async with pool.connection() as conn:
        ef = await (await conn.execute("SHOW hnsw.ef_search")).fetchone()
        scan = await (await conn.execute("SHOW hnsw.iterative_scan")).fetchone()
    assert (ef[0], scan[0]) == (db.SESSION_SETTINGS["hnsw.ef_search"], db.SESSION_SETTINGS["hnsw.iterative_scan"])
