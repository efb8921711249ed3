"""Incremental ingestion of a directory or git working tree into Postgres.

Unchanged files (same bytes, same pipeline) are skipped; changed ones are re-parsed, re-chunked
and re-embedded; files gone from the tree are deleted with their chunks. Every document is
replaced in its own transaction, so a failure never leaves half a document or loses the old one.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from retrieval import lexical, store
from retrieval.db import LOCK_INDEX
from retrieval.chunking import contextual_text
from retrieval.embed import Embedder
from retrieval.models import MalformedDocument, ParsedDocument, UnsupportedFormat
from retrieval.parsers import parse_document

log = logging.getLogger(__name__)

# Bump when parsing or chunking changes in a way that should re-chunk unchanged files.
PIPELINE_VERSION = "1"
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox"}
# Extension-less files read as plain text; these are repository furniture, not runbooks.
SKIP_FILES = {"LICENSE", "LICENCE", "COPYING", "NOTICE", "CODEOWNERS", "OWNERS", "Makefile",
              "Dockerfile", "Jenkinsfile", "Procfile", "Gemfile", "Rakefile", "Vagrantfile"}

ProgressFn = Callable[[int, int, str], None]


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


def discover(root: Path) -> Iterator[Path]:
    """Every regular file below root, skipping VCS and tooling folders, in a stable order."""
    if root.is_file():
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if name.startswith(".") or name in SKIP_FILES or path.is_symlink() or not path.is_file():
                continue
            yield path


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
    roots = [r.expanduser().resolve() for r in roots]
    for root in roots:
        if not root.exists():
            raise FileNotFoundError(f"no such file or directory: {root}")
    name = options.source or (roots[0].name if roots[0].is_dir() else roots[0].parent.name)
    summary = IngestSummary(source=name)
    async with pool.connection() as guard:
        await guard.execute("SELECT pg_advisory_lock_shared(%s)", (LOCK_INDEX,))
        try:
            await _ingest_locked(pool, embedder, roots, options, summary, progress)
        finally:
            await guard.execute("SELECT pg_advisory_unlock_shared(%s)", (LOCK_INDEX,))
    return summary


async def _ingest_locked(
    pool: AsyncConnectionPool,
    embedder: Embedder,
    roots: list[Path],
    options: IngestOptions,
    summary: IngestSummary,
    progress: ProgressFn | None,
) -> None:
    started = time.perf_counter()
    trees = [git_tree(root) for root in roots]
    kind = "git" if any(t.commit for t in trees) else "directory"
    async with pool.connection() as conn:
        source_id = await store.ensure_source(conn, summary.source, kind, str(roots[0]))
        version = await store.ensure_active_index(conn, embedder.backend, embedder.model, embedder.dim)
        existing = await store.source_documents(conn, source_id)
        run_id = await store.start_run(conn, source_id)
    files = [(tree, path) for tree in trees for path in discover(tree.root)]
    summary.timed("discover", time.perf_counter() - started)
    seen: set[str] = set()
    batch: list[_Pending] = []
    for done, (tree, path) in enumerate(files, start=1):
        rel = _relative(tree.root, path)
        seen.add(rel)
        pending = await _prepare(path, rel, tree, existing, options, summary)
        if pending is not None:
            batch.append(pending)
        if sum(len(p.doc.chunks) for p in batch) >= options.embed_batch_size * 4:
            await _flush(pool, embedder, version.id, source_id, batch, existing, summary)
            batch = []
        if progress:
            progress(done, len(files), rel)
    await _flush(pool, embedder, version.id, source_id, batch, existing, summary)
    if options.delete_missing:
        await _delete_missing(pool, existing, seen, summary)
    async with pool.connection() as conn, conn.transaction():
        t0 = time.perf_counter()
        if await lexical.refresh_impacts(conn):
            summary.timed("lexical_refresh", time.perf_counter() - t0)
    t0 = time.perf_counter()
    if await store.analyze_if_changed(pool, summary.chunks_written + len(summary.deleted)):
        summary.timed("analyze", time.perf_counter() - t0)
    details = {"skipped": summary.skipped, "failed": summary.failed, "stages": summary.stage_seconds}
    async with pool.connection() as conn:
        await store.finish_run(conn, run_id, summary.counts(), details)


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
    """Read, hash and parse one file; None when it is unchanged or must be skipped."""
    t0 = time.perf_counter()
    try:
        size = path.stat().st_size
        if size > options.max_file_bytes:
            summary.skipped.append((rel, _too_big(size, options.max_file_bytes)))
            return None
        data = path.read_bytes()
    except OSError as exc:
        summary.skipped.append((rel, f"cannot read: {exc.strerror or exc}"))
        return None
    content_hash = store.sha256(options.signature().encode() + b"\0" + data)
    summary.timed("read", time.perf_counter() - t0)
    old = existing.get(rel)
    if old is not None and old.content_hash == content_hash:
        summary.unchanged.append(rel)
        return None
    doc = await _parse(rel, data, options, summary)
    if doc is None:
        return None
    if not doc.chunks:
        summary.skipped.append((rel, "no text to index"))
        return None
    texts = [contextual_text(doc.title, c.heading_path, c.text) for c in doc.chunks]
    updated_at = tree.changed_at.get(str(path)) or _mtime(path)
    return _Pending(rel, content_hash, tree.commit, updated_at, doc, texts, [store.sha256(t) for t in texts])


async def _parse(rel: str, data: bytes, options: IngestOptions, summary: IngestSummary) -> ParsedDocument | None:
    """Parse in a worker thread; bad input is skipped with its reason, parser bugs are failures."""
    t0 = time.perf_counter()
    try:
        return await asyncio.to_thread(
            parse_document, rel, data, max_bytes=options.max_file_bytes,
            target_tokens=options.target_tokens, max_tokens=options.max_tokens,
            overlap_tokens=options.overlap_tokens,
        )
    except (UnsupportedFormat, MalformedDocument) as exc:
        summary.skipped.append((rel, str(exc)))
    except Exception as exc:  # a parser bug must not stop the other files
        log.exception("parsing %s failed", rel)
        summary.failed.append((rel, f"parser error: {type(exc).__name__}: {exc}"))
    finally:
        summary.timed("parse", time.perf_counter() - t0)
    return None


def _too_big(size: int, limit: int) -> str:
    return f"file is {size / 1048576:.1f} MB, over the {limit / 1048576:.1f} MB limit"


def _mtime(path: Path) -> datetime:
    return datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)


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
) -> None:
    gone = [row for path, row in existing.items() if path not in seen]
    if not gone:
        return
    t0 = time.perf_counter()
    async with pool.connection() as conn, conn.transaction():
        await lexical.unindex_documents(conn, [row.id for row in gone])
        await store.delete_documents(conn, [row.id for row in gone])
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
