"""Incremental ingestion of a directory or git working tree into Postgres.

Unchanged files (same bytes, same pipeline) are skipped; changed ones are re-parsed, re-chunked
and re-embedded; files gone from the tree are deleted with their chunks. Every document is
replaced in its own transaction, so a failure never leaves half a document or loses the old one.
A path that is no source, or a tree with no documents where the source has some, is refused
before anything is deleted. Parsing, analysis and embedding run in worker threads: the event
loop (the bot answering questions) stays free while a big file is ingested. Each run is a row
of ingest_runs; a run whose process died is marked abandoned by the next one.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from retrieval import lexical, store
from retrieval.db import LOCK_INDEX, autocommit_connection
from retrieval.chunking import contextual_text
from retrieval.corrections import withdraw_gone
from retrieval.embed import Embedder
from retrieval.models import MalformedDocument, ParsedDocument, UnsupportedFormat
from retrieval.parsers import FORMATS, document_format, parse_document

log = logging.getLogger(__name__)

# Bump when parsing or chunking changes in a way that should re-chunk unchanged files.
# 2: blocks over chunking.OVERSIZE x the max are cut (a huge chunk stored by 1 goes).
PIPELINE_VERSION = "2"
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox"}
# Extension-less files read as plain text; these are repository furniture, not runbooks.
SKIP_FILES = {"LICENSE", "LICENCE", "COPYING", "NOTICE", "CODEOWNERS", "OWNERS", "Makefile",
              "Dockerfile", "Jenkinsfile", "Procfile", "Gemfile", "Rakefile", "Vagrantfile"}

ProgressFn = Callable[[int, int, str], None]


class IngestRefused(Exception):
    """An ingest refused before it deleted anything; the message says why."""


class NotASource(IngestRefused):
    """A path that is neither a directory nor a supported document (a device, a symlink loop...)."""


class EmptySource(IngestRefused):
    """The paths hold no documents but the source has some: ingesting them would delete them all."""

    def __init__(self, source: str, documents: int) -> None:
        super().__init__(
            f"no documents found for source {source!r}, which has {documents} documents: "
            "nothing was deleted (allow an empty ingest to delete them)"
        )
        self.source = source
        self.documents = documents


@dataclass
class IngestOptions:
    """Knobs of one ingest run."""

    source: str | None = None
    max_file_bytes: int = 5 * 1024 * 1024
    target_tokens: int = 450
    max_tokens: int = 600
    overlap_tokens: int = 50
    embed_batch_size: int = 64
    delete_missing: bool = True
    allow_empty: bool = False  # let a tree with no documents delete every document of the source

    def signature(self) -> str:
        """What, besides the bytes, decides a document's chunks."""
        return f"p{PIPELINE_VERSION}:{self.target_tokens}:{self.max_tokens}:{self.overlap_tokens}"


@dataclass
class IngestSummary:
    """What an ingest run did, file by file."""

    source: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, error)
    chunks_written: int = 0
    embeddings_computed: int = 0
    embeddings_cached: int = 0
    stage_seconds: dict[str, float] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """The number of files in each outcome."""
        return {
            "added": len(self.added), "updated": len(self.updated),
            "unchanged": len(self.unchanged), "deleted": len(self.deleted),
            "skipped": len(self.skipped), "failed": len(self.failed),
        }

    def timed(self, stage: str, seconds: float) -> None:
        """Add time spent in a stage."""
        self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + seconds


@dataclass
class _Pending:
    path: str
    content_hash: str
    commit: str | None  # of the working tree the file came from
    updated_at: datetime
    doc: ParsedDocument
    embed_texts: list[str]
    embed_hashes: list[str]


@dataclass
class _Tree:
    root: Path
    commit: str | None
    changed_at: dict[str, datetime]


def discover(root: Path, skipped: list[tuple[Path, str]] | None = None) -> Iterator[Path]:
    """Every regular file below root, skipping VCS and tooling folders, in a stable order.
    Symbolic links are not followed and special files not read: they go to ``skipped`` with why."""
    if root.is_file():
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        folders = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        links = [d for d in folders if (Path(dirpath) / d).is_symlink()]
        if skipped is not None:
            skipped.extend((Path(dirpath) / d, "symbolic link to a folder (links are not followed)") for d in links)
        dirnames[:] = [d for d in folders if d not in links]
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if name.startswith(".") or name in SKIP_FILES:
                continue
            why = _not_regular(path)
            if why is None:
                yield path
            elif skipped is not None:
                skipped.append((path, why))


def _not_regular(path: Path) -> str | None:
    """Why a directory entry is not read as a file (None for a regular file)."""
    if not path.is_symlink():
        return None if path.is_file() else "not a regular file (a device, socket or pipe)"
    try:
        path.resolve(strict=True)
    except RuntimeError:  # Python 3.11 reports a loop this way
        return "symbolic link loop"
    except FileNotFoundError:
        return "broken symbolic link"
    except OSError as exc:
        return "symbolic link loop" if exc.errno == errno.ELOOP else f"unreadable symbolic link: {exc.strerror}"
    return "symbolic link (links are not followed)"


def git_tree(root: Path) -> _Tree:
    """The commit of a git working tree and each file's last commit time (empty if not git)."""
    base = root if root.is_dir() else root.parent
    try:
        top = _git(base, "rev-parse", "--show-toplevel").strip()
        commit = _git(base, "rev-parse", "HEAD").strip()
        out = _git(base, "log", "--format=%x00%cI", "--name-only", "--no-renames", "--", ".")
    except (OSError, subprocess.SubprocessError):
        return _Tree(root, None, {})
    changed: dict[str, datetime] = {}
    for entry in out.split("\x00")[1:]:
        lines = entry.strip().splitlines()
        if not lines:
            continue
        when = datetime.fromisoformat(lines[0])
        for name in lines[1:]:
            changed.setdefault(str(Path(top) / name), when)
    return _Tree(root, commit or None, changed)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True, timeout=60
    ).stdout


async def ingest(
    pool: AsyncConnectionPool,
    embedder: Embedder,
    roots: list[Path],
    options: IngestOptions,
    progress: ProgressFn | None = None,
) -> IngestSummary:
    """Ingest files under roots into one source; see the module docstring."""
    roots = [source_root(r) for r in roots]
    name = options.source or (roots[0].name if roots[0].is_dir() else roots[0].parent.name)
    summary = IngestSummary(source=name)
    # The guard holds the index lock and the run's lock, and records the run (autocommit: its
    # row must be visible while the run goes on).
    async with autocommit_connection(pool) as guard:
        await guard.execute("SELECT pg_advisory_lock_shared(%s)", (LOCK_INDEX,))
        try:
            await _ingest_locked(pool, guard, embedder, roots, options, summary, progress)
        finally:
            await guard.execute("SELECT pg_advisory_unlock_shared(%s)", (LOCK_INDEX,))
    return summary


def source_root(path: Path) -> Path:
    """A path to ingest, resolved: a directory or a supported document, else NotASource."""
    try:
        root = path.expanduser().resolve()
    except (RuntimeError, OSError):  # a symbolic link loop (RuntimeError up to Python 3.12)
        raise NotASource(f"{path} is a symbolic link loop") from None
    if not root.exists():
        raise FileNotFoundError(f"no such file or directory: {root}")
    if root.is_dir():
        return root
    if not root.is_file():
        raise NotASource(f"{root} is neither a directory nor a regular file")
    try:
        document_format(root.name)
    except UnsupportedFormat:
        kinds = ", ".join(sorted(k for k in FORMATS if k))
        raise NotASource(f"{root} is not a supported document ({kinds}, or no extension)") from None
    return root


async def _ingest_locked(
    pool: AsyncConnectionPool,
    guard: AsyncConnection,
    embedder: Embedder,
    roots: list[Path],
    options: IngestOptions,
    summary: IngestSummary,
    progress: ProgressFn | None,
) -> None:
    started = time.perf_counter()
    trees = await asyncio.to_thread(lambda: [git_tree(root) for root in roots])
    kind = "git" if any(t.commit for t in trees) else "directory"
    async with pool.connection() as conn:
        source_id = await store.ensure_source(conn, summary.source, kind, str(roots[0]))
        version = await store.ensure_active_index(conn, embedder.backend, embedder.model, embedder.dim)
        existing = await store.source_documents(conn, source_id)
    async with _recorded_run(guard, source_id) as run_id:
        files = await asyncio.to_thread(_discover, trees, summary)
        summary.timed("discover", time.perf_counter() - started)
        seen = await _ingest_files(pool, embedder, (version.id, source_id), files, existing, options, summary, progress)
        if options.delete_missing:
            await _delete_missing(pool, existing, seen, summary, options.allow_empty)
        await _maintain(pool, summary)
        details = {"skipped": summary.skipped, "failed": summary.failed, "stages": summary.stage_seconds}
        await store.finish_run(guard, run_id, summary.counts(), details)


@asynccontextmanager
async def _recorded_run(guard: AsyncConnection, source_id: int) -> AsyncIterator[int]:
    """A run of ingest_runs, recorded as failed if the ingest raises; runs whose process died
    are first marked abandoned, so none stays 'running' forever."""
    abandoned = await store.abandon_dead_runs(guard)
    if abandoned:
        log.warning("ingest runs %s never finished (their process is gone): marked abandoned", abandoned)
    run_id = await store.start_run(guard, source_id)
    try:
        yield run_id
    except (Exception, asyncio.CancelledError) as exc:  # cancelled (Ctrl-C) too: record it
        why = "the ingest was cancelled" if isinstance(exc, asyncio.CancelledError) else f"{type(exc).__name__}: {exc}"
        try:
            await store.fail_run(guard, run_id, why)
        except Exception:  # the database went away too: the next ingest marks the run abandoned
            log.warning("could not record ingest run %s as failed", run_id, exc_info=True)
        raise


def _discover(trees: list[_Tree], summary: IngestSummary) -> list[tuple[_Tree, Path]]:
    """The files of every tree; links and special files go to the summary's skipped list."""
    files: list[tuple[_Tree, Path]] = []
    for tree in trees:
        skipped: list[tuple[Path, str]] = []
        files.extend((tree, path) for path in discover(tree.root, skipped))
        summary.skipped.extend((_relative(tree.root, path), why) for path, why in skipped)
    return files


async def _ingest_files(
    pool: AsyncConnectionPool,
    embedder: Embedder,
    ids: tuple[int, int],
    files: list[tuple[_Tree, Path]],
    existing: dict[str, store.DocumentRow],
    options: IngestOptions,
    summary: IngestSummary,
    progress: ProgressFn | None,
) -> set[str]:
    """Prepare, embed and write the files in batches; returns the relative paths seen."""
    version, source_id = ids
    seen: set[str] = set()
    batch: list[_Pending] = []
    for done, (tree, path) in enumerate(files, start=1):
        rel = _relative(tree.root, path)
        seen.add(rel)
        pending = await _prepare(path, rel, tree, existing, options, summary)
        if pending is not None:
            batch.append(pending)
        if sum(len(p.doc.chunks) for p in batch) >= options.embed_batch_size * 4:
            await _flush(pool, embedder, version, source_id, batch, existing, summary)
            batch = []
        if progress:
            progress(done, len(files), rel)
    await _flush(pool, embedder, version, source_id, batch, existing, summary)
    return seen


async def _maintain(pool: AsyncConnectionPool, summary: IngestSummary) -> None:
    """End-of-run upkeep: the lexical blocks, then planner statistics if much changed."""
    async with pool.connection() as conn, conn.transaction():
        t0 = time.perf_counter()
        if await lexical.refresh_impacts(conn):
            summary.timed("lexical_refresh", time.perf_counter() - t0)
    t0 = time.perf_counter()
    if await store.analyze_if_changed(pool, summary.chunks_written + len(summary.deleted)):
        summary.timed("analyze", time.perf_counter() - t0)


def _relative(root: Path, path: Path) -> str:
    if root.is_file():
        return path.name
    return path.relative_to(root).as_posix()


async def _prepare(
    path: Path,
    rel: str,
    tree: _Tree,
    existing: dict[str, store.DocumentRow],
    options: IngestOptions,
    summary: IngestSummary,
) -> _Pending | None:
    """Read, hash and parse one file (in worker threads); None when unchanged or skipped."""
    t0 = time.perf_counter()
    read = await asyncio.to_thread(_read, path, options)
    summary.timed("read", time.perf_counter() - t0)
    if isinstance(read, str):
        summary.skipped.append((rel, read))
        return None
    data, content_hash, updated_at = read
    old = existing.get(rel)
    if old is not None and old.content_hash == content_hash:
        summary.unchanged.append(rel)
        return None
    parsed = await _parse(rel, data, options, summary)
    if parsed is None:
        return None
    doc, texts, hashes = parsed
    if not doc.chunks:
        summary.skipped.append((rel, "no text to index"))
        return None
    return _Pending(rel, content_hash, tree.commit, tree.changed_at.get(str(path)) or updated_at, doc, texts, hashes)


def _read(path: Path, options: IngestOptions) -> tuple[bytes, str, datetime] | str:
    """A file's bytes, content hash and modification time, or why it cannot be read."""
    try:
        stat = path.stat()
        if stat.st_size > options.max_file_bytes:
            return _too_big(stat.st_size, options.max_file_bytes)
        data = path.read_bytes()
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    content_hash = store.sha256(options.signature().encode() + b"\0" + data)
    return data, content_hash, datetime.fromtimestamp(stat.st_mtime, tz=timezone.utc)


async def _parse(
    rel: str, data: bytes, options: IngestOptions, summary: IngestSummary
) -> tuple[ParsedDocument, list[str], list[str]] | None:
    """Parse in a worker thread; bad input is skipped with its reason, parser bugs are failures."""
    t0 = time.perf_counter()
    try:
        return await asyncio.to_thread(_parse_for_index, rel, data, options)
    except (UnsupportedFormat, MalformedDocument) as exc:
        summary.skipped.append((rel, str(exc)))
    except Exception as exc:  # a parser bug must not stop the other files
        log.exception("parsing %s failed", rel)
        summary.failed.append((rel, f"parser error: {type(exc).__name__}: {exc}"))
    finally:
        summary.timed("parse", time.perf_counter() - t0)
    return None


def _parse_for_index(rel: str, data: bytes, options: IngestOptions) -> tuple[ParsedDocument, list[str], list[str]]:
    """A parsed document with what is embedded for each chunk and the hashes of that."""
    doc = parse_document(
        rel, data, max_bytes=options.max_file_bytes, target_tokens=options.target_tokens,
        max_tokens=options.max_tokens, overlap_tokens=options.overlap_tokens,
    )
    texts = [contextual_text(doc.title, c.heading_path, c.text) for c in doc.chunks]
    return doc, texts, [store.sha256(t) for t in texts]


def _too_big(size: int, limit: int) -> str:
    return f"file is {size / 1048576:.1f} MB, over the {limit / 1048576:.1f} MB limit"


async def _flush(
    pool: AsyncConnectionPool,
    embedder: Embedder,
    version: int,
    source_id: int,
    batch: list[_Pending],
    existing: dict[str, store.DocumentRow],
    summary: IngestSummary,
) -> None:
    """Embed a batch of parsed documents (cache first) and write each in its own transaction."""
    if not batch:
        return
    vectors = await _embed_batch(pool, embedder, version, batch, summary)
    t0 = time.perf_counter()
    for pending in batch:
        try:
            async with pool.connection() as conn:
                outcome = await _write(conn, version, source_id, pending, vectors)
        except Exception as exc:
            log.exception("writing %s failed", pending.path)
            summary.failed.append((pending.path, f"database error: {type(exc).__name__}: {exc}"))
            continue
        if outcome == "unchanged":
            summary.unchanged.append(pending.path)
        else:
            (summary.updated if pending.path in existing else summary.added).append(pending.path)
            summary.chunks_written += len(pending.doc.chunks)
    summary.timed("write", time.perf_counter() - t0)


async def _embed_batch(
    pool: AsyncConnectionPool,
    embedder: Embedder,
    version: int,
    batch: list[_Pending],
    summary: IngestSummary,
) -> dict[str, np.ndarray]:
    t0 = time.perf_counter()
    hashes = [h for p in batch for h in p.embed_hashes]
    async with pool.connection() as conn:
        vectors = await store.cached_embeddings(conn, version, hashes)
    summary.embeddings_cached += sum(1 for h in set(hashes) if h in vectors)
    todo: dict[str, str] = {}
    for pending in batch:
        for text, h in zip(pending.embed_texts, pending.embed_hashes):
            if h not in vectors:
                todo.setdefault(h, text)
    if todo:
        fresh = await asyncio.to_thread(embedder.embed, list(todo.values()))
        vectors.update(zip(todo.keys(), fresh))
        summary.embeddings_computed += len(todo)
    summary.timed("embed", time.perf_counter() - t0)
    return vectors


async def _write(
    conn: AsyncConnection,
    version: int,
    source_id: int,
    pending: _Pending,
    vectors: dict[str, np.ndarray],
) -> str:
    """Replace one document atomically; 'unchanged' if another ingest already wrote it."""
    async with conn.transaction():
        # Ingestion is idempotent: after a crash the next run redoes what was not durable,
        # so it need not wait for a WAL flush on every document.
        await conn.execute("SET LOCAL synchronous_commit = off")
        stored_hash = await store.lock_document(conn, source_id, pending.path)
        if stored_hash == pending.content_hash:
            return "unchanged"
        document_id = await store.upsert_document(
            conn, source_id, pending.path, pending.doc, content_hash=pending.content_hash,
            updated_at=pending.updated_at, source_commit=pending.commit,
        )
        if stored_hash is not None:
            await lexical.unindex_documents(conn, [document_id])
            await store.clear_document(conn, document_id)
        section_ids = await store.insert_sections(conn, document_id, pending.doc)
        chunk_ids = await store.insert_chunks(
            conn, document_id, pending.doc, section_ids, pending.embed_hashes
        )
        matrix = np.stack([vectors[h] for h in pending.embed_hashes])
        await store.copy_embeddings(conn, version, chunk_ids, matrix)
        await lexical.index_chunks(conn, chunk_ids, pending.doc)
    return "written"


async def _delete_missing(
    pool: AsyncConnectionPool,
    existing: dict[str, store.DocumentRow],
    seen: set[str],
    summary: IngestSummary,
    allow_empty: bool,
) -> None:
    """Delete the source's documents gone from the tree; EmptySource rather than delete them
    all when the tree gave no document at all (a wrong path, an unmounted volume)."""
    gone = [row for path, row in existing.items() if path not in seen]
    if not gone:
        return
    kept = summary.added or summary.updated or summary.unchanged
    if len(gone) == len(existing) and not kept and not allow_empty:
        raise EmptySource(summary.source, len(existing))
    t0 = time.perf_counter()
    async with pool.connection() as conn, conn.transaction():
        await lexical.unindex_documents(conn, [row.id for row in gone])
        await store.delete_documents(conn, [row.id for row in gone])
        await withdraw_gone(conn)  # engineers' corrections naming them: withdrawn, with a log line
    summary.deleted.extend(sorted(row.path for row in gone))
    summary.timed("delete", time.perf_counter() - t0)


def describe(summary: IngestSummary) -> dict[str, Any]:
    """A JSON-friendly summary."""
    return {
        "source": summary.source,
        **summary.counts(),
        "chunks_written": summary.chunks_written,
        "embeddings_computed": summary.embeddings_computed,
        "embeddings_cached": summary.embeddings_cached,
        "skipped_files": [{"path": p, "reason": r} for p, r in summary.skipped],
        "failed_files": [{"path": p, "error": e} for p, e in summary.failed],
        "stage_seconds": {k: round(v, 3) for k, v in summary.stage_seconds.items()},
    }
