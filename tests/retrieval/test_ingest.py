"""Ingestion against a real Postgres: incremental, atomic, concurrent, and robust to bad input."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from retrieval import lexical
from retrieval.embed import WordLlamaEmbedder
from retrieval.ingest import IngestOptions, describe, ingest
from retrieval.store import IndexMismatch
from tests.conftest import EVAL, EXAMPLES


async def _scalar(pool, query: str, *args):  # type: ignore[no-untyped-def]
    async with pool.connection() as conn:
        row = await (await conn.execute(query, args)).fetchone()
    return row[0]


async def _consistent(pool) -> None:  # type: ignore[no-untyped-def]
    """Every chunk has one embedding of the active version and postings; df and stats match."""
    assert await _scalar(pool, "SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM chunk_embeddings e"
                         " JOIN index_versions v ON v.id = e.version AND v.state = 'active' WHERE e.chunk_id = c.id)") == 0
    assert await _scalar(pool, "SELECT count(*) FROM chunks c WHERE NOT EXISTS"
                         " (SELECT 1 FROM lexical_postings p WHERE p.chunk_id = c.id)") == 0
    assert await _scalar(pool, "SELECT count(*) FROM lexical_terms t WHERE t.df <> (SELECT count(*)"
                         " FROM lexical_postings p WHERE p.term_id = t.id)") == 0
    assert await _scalar(pool, "SELECT chunk_count FROM lexical_stats") == await _scalar(pool, "SELECT count(*) FROM chunks")
    assert await _scalar(pool, "SELECT term_total FROM lexical_stats") == await _scalar(
        pool, "SELECT coalesce(sum(term_count), 0) FROM chunks")


async def test_ingest_examples_then_incremental(pool, embedder, runbooks: Path) -> None:
    first = await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    assert len(first.added) == len(list(EXAMPLES.glob("*.md"))) >= 8
    assert not first.skipped and not first.failed
    assert first.chunks_written == await _scalar(pool, "SELECT count(*) FROM chunks")
    await _consistent(pool)

    second = await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    assert len(second.unchanged) == len(first.added) and not second.added and not second.updated

    disk = runbooks / "disk-full.md"
    disk.write_text(disk.read_text() + "\n\n## Appendix\n\nCheck `ncdu /var/lib/docker` for the biggest directories.\n")
    (runbooks / "redis-memory.md").unlink()
    third = await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    assert third.updated == ["disk-full.md"] and third.deleted == ["redis-memory.md"]
    assert third.embeddings_cached > 0, "unchanged chunks of an edited file reuse their embeddings"
    assert await _scalar(pool, "SELECT count(*) FROM documents WHERE path = 'redis-memory.md'") == 0
    assert await _scalar(pool, "SELECT count(*) FROM chunks WHERE text LIKE '%%ncdu /var/lib/docker%%'") == 1
    await _consistent(pool)
    runs = await _scalar(pool, "SELECT count(*) FROM ingest_runs WHERE finished_at IS NOT NULL")
    assert runs == 3


async def test_document_metadata_sections_and_parents(pool, embedder, runbooks: Path) -> None:
    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    async with pool.connection() as conn:
        title, meta, commit = await (await conn.execute(
            "SELECT title, metadata, source_commit FROM documents WHERE path = 'disk-full.md'")).fetchone()
        assert meta["format"] == "markdown" and "disk" in meta["tags"] and meta["service"]
        assert commit is None  # not a git tree
        # every chunk lies inside its parent section, and the section text is an exact slice of the body
        bad = await (await conn.execute(
            "SELECT count(*) FROM chunks c JOIN sections s ON s.id = c.section_id JOIN documents d"
            " ON d.id = c.document_id WHERE c.char_start < s.char_start OR c.char_end > s.char_end"
            " OR substr(d.body, s.char_start + 1, s.char_end - s.char_start) <> s.text")).fetchone()
        assert bad[0] == 0
        heading = await (await conn.execute(
            "SELECT heading_path FROM chunks c JOIN documents d ON d.id = c.document_id"
            " WHERE d.path = 'disk-full.md' ORDER BY position LIMIT 1")).fetchone()
        assert heading[0][0] == title or heading[0] == [title]


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("binary.md", b"\x00\x01\x02\x03PNG\x00" * 100, "binary"),
        ("empty.md", b"", "empty"),
        ("latin1.md", "Caf\u00e9 cr\u00e8me".encode("latin-1"), "UTF-8"),
        ("bad-front-matter.md", b"---\ntitle: [unclosed\n---\n# Body\n\ntext\n", "front matter"),
        ("picture.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, ""),
        ("huge.md", b"# Huge\n\n" + b"word " * 300_000, "limit"),
    ],
)
async def test_bad_files_are_skipped_with_a_reason(pool, embedder, runbooks: Path, name: str, content: bytes, reason: str) -> None:
    (runbooks / name).write_bytes(content)
    summary = await ingest(pool, embedder, [runbooks], IngestOptions(source="ex", max_file_bytes=1_000_000))
    skipped = dict(summary.skipped)
    assert name in skipped and reason.lower() in skipped[name].lower()
    assert len(summary.added) == len(list(EXAMPLES.glob("*.md"))), "the other files still ingest"
    assert not summary.failed


async def test_broken_update_keeps_the_old_version(pool, embedder, runbooks: Path) -> None:
    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    before = await _scalar(pool, "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.path = 'oom-killed.md'")
    (runbooks / "oom-killed.md").write_bytes(b"\x00\xff\x00binary now")
    summary = await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    assert "oom-killed.md" in dict(summary.skipped) and "oom-killed.md" not in summary.deleted
    after = await _scalar(pool, "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.path = 'oom-killed.md'")
    assert after == before > 0


async def test_write_failure_rolls_back_that_document_only(pool, embedder, runbooks: Path, monkeypatch) -> None:
    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    old_hash = await _scalar(pool, "SELECT content_hash FROM documents WHERE path = 'disk-full.md'")
    for name in ("disk-full.md", "oom-killed.md"):
        path = runbooks / name
        path.write_text(path.read_text() + "\n\nOne more line.\n")
    real = lexical.index_chunks

    async def failing(conn, chunk_ids, doc):  # type: ignore[no-untyped-def]
        if "disk" in doc.title.lower():
            raise RuntimeError("simulated failure while writing postings")
        await real(conn, chunk_ids, doc)

    monkeypatch.setattr(lexical, "index_chunks", failing)
    summary = await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    assert [p for p, _ in summary.failed] == ["disk-full.md"] and summary.updated == ["oom-killed.md"]
    assert await _scalar(pool, "SELECT content_hash FROM documents WHERE path = 'disk-full.md'") == old_hash
    assert await _scalar(pool, "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.path = 'disk-full.md'") > 0
    await _consistent(pool)


async def test_concurrent_ingests_of_one_source(pool, embedder, runbooks: Path) -> None:
    a, b = await asyncio.gather(
        ingest(pool, embedder, [runbooks], IngestOptions(source="ex")),
        ingest(pool, embedder, [runbooks], IngestOptions(source="ex")),
    )
    files = len(list(EXAMPLES.glob("*.md")))
    assert len(a.added) + len(b.added) == files
    assert len(a.added) + len(a.unchanged) == files and len(b.added) + len(b.unchanged) == files
    assert await _scalar(pool, "SELECT count(*) FROM documents") == files
    await _consistent(pool)


async def test_git_working_tree_records_commit_and_change_time(pool, embedder, runbooks: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": "2024-03-01T12:00:00Z", "GIT_COMMITTER_DATE": "2024-03-01T12:00:00Z",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "runbooks"]):
        subprocess.run(["git", "-C", str(runbooks), *args], check=True, env=env)
    head = subprocess.run(["git", "-C", str(runbooks), "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    summary = await ingest(pool, embedder, [runbooks], IngestOptions(source="git-runbooks"))
    assert not summary.failed and summary.added
    async with pool.connection() as conn:
        kind = (await (await conn.execute("SELECT kind FROM sources WHERE name = 'git-runbooks'")).fetchone())[0]
        commits = await (await conn.execute("SELECT DISTINCT source_commit, updated_at::date::text FROM documents")).fetchall()
    assert kind == "git" and commits == [(head, "2024-03-01")]


async def test_other_embedding_model_needs_reindex(pool, embedder, runbooks: Path) -> None:
    from retrieval.reindex import reindex

    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    small = WordLlamaEmbedder("l2_supercat_128")
    with pytest.raises(IndexMismatch, match="reindex"):
        await ingest(pool, small, [runbooks], IngestOptions(source="ex"))
    report = await reindex(pool, small)
    assert report["dim"] == 128 and report["chunks"] == await _scalar(pool, "SELECT count(*) FROM chunks")
    assert await _scalar(pool, "SELECT count(*) FROM chunk_embeddings e JOIN index_versions v ON v.id = e.version"
                         " WHERE v.state <> 'active'") == 0
    assert await _scalar(pool, "SELECT dim FROM index_versions WHERE state = 'active'") == 128
    await _consistent(pool)
    again = await ingest(pool, small, [runbooks], IngestOptions(source="ex"))
    assert len(again.unchanged) == len(list(EXAMPLES.glob("*.md"))) and not again.failed


async def test_missing_path_is_a_clear_error(pool, embedder, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        await ingest(pool, embedder, [tmp_path / "nope"], IngestOptions())


@pytest.mark.slow
async def test_gitlab_eval_corpus_ingests_completely(pool, embedder) -> None:
    corpus = EVAL / "gitlab" / "corpus"
    if not corpus.is_dir():
        pytest.skip(f"eval corpus not found at {corpus}")
    summary = await ingest(pool, embedder, [corpus], IngestOptions(source="gitlab"))
    files = sum(1 for p in corpus.rglob("*") if p.is_file() and not p.name.startswith("."))
    counts = describe(summary)
    assert counts["added"] + counts["skipped"] == files == 414
    assert counts["failed"] == 0 and counts["added"] >= 410
    await _consistent(pool)


def test_discover_skips_repository_furniture(runbooks: Path) -> None:
    from retrieval.ingest import discover

    (runbooks / "LICENSE").write_text("Apache License 2.0")
    (runbooks / ".hidden.md").write_text("# hidden")
    (runbooks / ".git").mkdir()
    (runbooks / ".git" / "HEAD.md").write_text("# not a runbook")
    (runbooks / "notes").mkdir()
    (runbooks / "notes" / "runbook.txt").write_text("Restart the pod.")
    found = {p.relative_to(runbooks).as_posix() for p in discover(runbooks)}
    assert "notes/runbook.txt" in found and "disk-full.md" in found
    assert not {"LICENSE", ".hidden.md", ".git/HEAD.md"} & found
