"""Shared fixtures: one real PostgreSQL per test session, a fresh database per test."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from retrieval import db
from retrieval.embed import WordLlamaEmbedder

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "runbooks"
EVAL = REPO.parent / "shared" / "eval"
TEMPLATE = "rb_test_template"


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A maintenance URL of the test server: TEST_DATABASE_URL, or an embedded one."""
    external = os.environ.get("TEST_DATABASE_URL")
    if external:
        return external
    pgdata = tmp_path_factory.mktemp("pg") / "pgdata"
    return db.start_embedded(pgdata, dbname="postgres")


def _with_db(url: str, name: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["dbname"] = name
    return psycopg.conninfo.make_conninfo(**info)


@pytest.fixture(scope="session")
async def template_url(server_url: str) -> str:
    """A migrated template database; test databases are cheap copies of it."""
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(TEMPLATE)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(TEMPLATE)))
    url = _with_db(server_url, TEMPLATE)
    await db.upgrade(url)
    return url


@pytest.fixture
async def database_url(server_url: str, template_url: str) -> AsyncIterator[str]:
    """A fresh, migrated database for one test, dropped afterwards."""
    name = f"rb_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(TEMPLATE)))
    yield _with_db(server_url, name)
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
async def pool(database_url: str):  # type: ignore[no-untyped-def]
    """A connection pool on the test's database."""
    p = await db.open_pool(database_url, min_size=1, max_size=6)
    yield p
    await p.close()


@pytest.fixture(scope="session")
def embedder() -> WordLlamaEmbedder:
    """The default embedder, loaded once."""
    return WordLlamaEmbedder()


@pytest.fixture
def runbooks(tmp_path: Path) -> Path:
    """A private copy of the example runbooks that a test may change."""
    target = tmp_path / "runbooks"
    shutil.copytree(EXAMPLES, target)
    return target
