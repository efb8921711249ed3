"""Shared fixtures: one real PostgreSQL per test session, a fresh database per test."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from bot import EXAMPLE_RUNBOOKS
from guardrails.policy import PolicyError, default_policy
from retrieval import db
from retrieval.embed import WordLlamaEmbedder
from retrieval.ingest import IngestOptions, ingest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = EXAMPLE_RUNBOOKS
EVAL = REPO.parent / "shared" / "eval"
TEMPLATE = "rb_test_template"
EXAMPLES_TEMPLATE = "rb_examples_template"


def pytest_sessionstart(session: pytest.Session) -> None:
    """Stop at once when the bundled policy does not parse: every test that builds an agent would fail on it,
    each after creating its database (a two-hour run of errors instead of one line)."""
    try:
        default_policy()
    except PolicyError as exc:
        pytest.exit(f"the bundled guardrails policy does not load: {exc}", returncode=3)


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


def _copy_of(server_url: str, template: str) -> Iterator[str]:
    name = f"rb_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(template)))
    yield _with_db(server_url, name)
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def database_url(server_url: str, template_url: str) -> Iterator[str]:
    """A fresh, migrated database for one test, dropped afterwards."""
    yield from _copy_of(server_url, TEMPLATE)


@pytest.fixture(scope="session")
async def examples_template(server_url: str, template_url: str, embedder: WordLlamaEmbedder) -> str:
    """A template database with the example runbooks ingested (source `examples`), built once."""
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(EXAMPLES_TEMPLATE)))
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(EXAMPLES_TEMPLATE), sql.Identifier(TEMPLATE)))
    url = _with_db(server_url, EXAMPLES_TEMPLATE)
    pool = await db.open_pool(url, min_size=1, max_size=2)
    try:
        summary = await ingest(pool, embedder, [EXAMPLES], IngestOptions(source="examples"))
        assert summary.added and not summary.failed
    finally:
        await pool.close()
    return EXAMPLES_TEMPLATE


@pytest.fixture
async def examples_pool(server_url: str, examples_template: str):  # type: ignore[no-untyped-def]
    """A pool on a private copy of a database holding the example runbooks."""
    for url in _copy_of(server_url, examples_template):
        p = await db.open_pool(url, min_size=1, max_size=6)
        try:
            yield p
        finally:
            await p.close()


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


@pytest.fixture(autouse=True, scope="session")
def _no_remote_model_requests() -> Iterator[None]:
    """No test may reach a real model provider; local stub servers are still allowed."""
    from bot import llm

    llm.ALLOW_REMOTE_MODEL_REQUESTS = False
    yield
    llm.ALLOW_REMOTE_MODEL_REQUESTS = True
