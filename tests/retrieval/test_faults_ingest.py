"""Faults found by a black-box probe of ingestion and search, each pinned by a test: oversized
blocks, hostile front matter and NUL bytes, paths that would wipe a source, killed runs, and
queries with no terms."""

from __future__ import annotations

import json
import math
import os
import time
import tracemalloc
from pathlib import Path

import psycopg
import pytest

from retrieval import ranking
from retrieval.chunking import PARENT_MAX_TOKENS, chunk_markdown
from retrieval.confidence import assess
import retrieval.ingest as ingest_api
from retrieval.ingest import IngestOptions, ingest
from retrieval.models import MalformedDocument
from retrieval.parsers import parse_document
from retrieval.search import hybrid_search
from retrieval.search_types import ScoredChunk, SearchConfig
from tests.conftest import EXAMPLES

MARGIN = 1.05  # how far past max_tokens a chunk cut out of an oversized block may go


async def _scalar(pool, query: str, *args):  # type: ignore[no-untyped-def]
    async with pool.connection() as conn:
        row = await (await conn.execute(query, args)).fetchone()
    return row[0]


def _code_lines(count: int) -> list[str]:
    return [f"kubectl get pods -n ns-{i} -o wide | grep CrashLoop # line {i}" for i in range(count)]


def _big_code_runbook(lines: int) -> str:
    code = "```bash\n" + "\n".join(_code_lines(lines)) + "\n```"
    return f"# Big dump\n\nIntro about the dump.\n\n## Dump\n\n{code}\n\n## After\n\nRestart the pod.\n"


# --------------------------------------------------------------------------- 1. oversized blocks


def test_oversized_code_block_is_split_at_line_boundaries() -> None:
    text = _big_code_runbook(5000)  # ~100k tokens in one fence
    sections, chunks = chunk_markdown(text)
    assert len(chunks) > 100
    for c in chunks:
        assert c.token_count <= 600 * MARGIN, c.token_count
        assert text[c.char_start : c.char_end] == c.text
        assert c.char_start == 0 or text[c.char_start - 1] == "\n", "a chunk starts mid-line"
        assert c.char_end == len(text) or text[c.char_end] == "\n", "a chunk ends mid-line"
        assert not c.metadata.get("oversized")
    assert all(s.token_count <= PARENT_MAX_TOKENS * MARGIN for s in sections)
    assert all(line in text for line in _code_lines(5000)[::997])
    covered = "".join(c.text for c in chunks)
    assert all(line in covered for line in _code_lines(5000)[::499]), "no code line is lost"


def test_oversized_single_line_and_table_are_capped() -> None:
    blob = "x" * 300_000  # one 'word' of 50k tokens: minified or base64 data
    rows = "\n".join(f"| host-{i} | replica | {i}% |" for i in range(3000))
    text = f"# Data\n\n```\n{blob}\n```\n\n## Hosts\n\n| host | role | use |\n| --- | --- | --- |\n{rows}\n"
    sections, chunks = chunk_markdown(text)
    assert max(c.token_count for c in chunks) <= 600 * MARGIN
    assert max(s.token_count for s in sections) <= PARENT_MAX_TOKENS * MARGIN
    assert sum(c.text.count("x") for c in chunks) >= len(blob), "the blob is kept, in pieces"


def test_ordinary_oversized_procedure_stays_whole() -> None:
    """Blocks a little over the max (a long procedure, a config file) stay one chunk, as before."""
    code = "```yaml\n" + "\n".join(f"key_{i}: value-{i} # note {i}" for i in range(200)) + "\n```"
    _, chunks = chunk_markdown(f"## Config\n\nIntro.\n\n{code}\n")
    (whole,) = [c for c in chunks if code in c.text]
    assert whole.metadata["oversized"] is True and whole.token_count > 2000


async def test_ingesting_a_huge_code_block_keeps_the_loop_free_and_chunks_small(pool, embedder, tmp_path: Path) -> None:
    root = tmp_path / "big"
    root.mkdir()
    (root / "dump.md").write_text(_big_code_runbook(20_000))  # ~1.2 MB, ~400k tokens
    (root / "disk-full.md").write_bytes((EXAMPLES / "disk-full.md").read_bytes())
    # CPU time, not wall time: how busy the event loop's own thread was against the whole process,
    # whatever else the machine is doing (parsing, chunking, hashing and term analysis of a 1.2 MB
    # document belong on worker threads; on the loop they would be most of the work).
    loop_cpu, process_cpu = time.thread_time(), time.process_time()
    summary = await ingest(pool, embedder, [root], IngestOptions(source="big"))
    loop_cpu, process_cpu = time.thread_time() - loop_cpu, time.process_time() - process_cpu
    assert sorted(summary.added) == ["disk-full.md", "dump.md"] and not summary.failed
    assert loop_cpu < 0.3 * process_cpu, f"the event loop did {loop_cpu:.2f} s of the {process_cpu:.2f} s of work"
    assert await _scalar(pool, "SELECT max(token_count) FROM chunks") <= 600 * MARGIN
    assert await _scalar(pool, "SELECT max(length(text)) FROM sections") < 20_000
    result = await hybrid_search(pool, embedder, "kubectl get pods ns-1234 CrashLoop", k=5)
    assert result.chunks and sum(len(h.text) for h in result.chunks) < 50_000


# --------------------------------------------------------------------------- 2. front matter, NUL


@pytest.mark.parametrize(
    ("front", "key", "expected"),
    [
        ("score: .inf", "score", "inf"),
        ("score: -.inf", "score", "-inf"),
        ("score: .nan", "score", "nan"),
        ("nested: {a: [1, .inf]}", "nested", {"a": [1, "inf"]}),
        ('owner: "sre\\0team"', "owner", "sreteam"),
        ('"k\\0ey": v', "key", "v"),
    ],
)
def test_front_matter_is_made_storable(front: str, key: str, expected: object) -> None:
    doc = parse_document("x.md", f"---\n{front}\n---\n# Title\n\nBody.\n".encode())
    assert doc.metadata[key] == expected
    json.dumps(doc.metadata, allow_nan=False)  # what Postgres' jsonb accepts
    assert "\\u0000" not in json.dumps(doc.metadata)


def test_stray_nul_after_the_sniffed_prefix_is_removed() -> None:
    data = b"# Title\n\n" + b"Some words here. " * 600 + b"\x00tail\x00 text\n"
    assert len(data) > 8192
    doc = parse_document("x.md", data)
    assert "\x00" not in doc.text and "tail text" in doc.text
    assert all("\x00" not in c.text for c in doc.chunks)


@pytest.mark.parametrize(
    ("front", "reason"),
    [
        ("a: &x [*x]", "recursive"),
        ("a: &x {b: *x}", "recursive"),
        # "billion laughs": 421 bytes that expand to ~10^9 strings
        ("a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
         + "\n".join(f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)),
         "too large"),
    ],
)
def test_hostile_front_matter_is_refused_quickly(front: str, reason: str) -> None:
    # refused before it expands: memory, not seconds (the alias bomb expanded to 80 MB in 10 s)
    tracemalloc.start()
    try:
        with pytest.raises(MalformedDocument, match=f"front matter.*{reason}"):
            parse_document("x.md", f"---\n{front}\n---\n# Title\n\nBody.\n".encode())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, f"{peak / 1e6:.1f} MB allocated before refusing"


async def test_hostile_files_do_not_stop_the_ingest(pool, embedder, tmp_path: Path) -> None:
    root = tmp_path / "hostile"
    root.mkdir()
    (root / "inf.md").write_bytes(b"---\nscore: .inf\nratio: .nan\nowner: \"a\\0b\"\n---\n# Inf\n\nBody text.\n")
    (root / "nul.md").write_bytes(b"# Nul\n\n" + b"Words words words. " * 600 + b"\x00 after the prefix\n")
    (root / "loop.md").write_bytes(b"---\na: &x [*x]\n---\n# Loop\n\nBody.\n")
    (root / "disk-full.md").write_bytes((EXAMPLES / "disk-full.md").read_bytes())
    summary = await ingest(pool, embedder, [root], IngestOptions(source="hostile"))
    assert not summary.failed, summary.failed
    assert sorted(summary.added) == ["disk-full.md", "inf.md", "nul.md"]
    assert "recursive" in dict(summary.skipped)["loop.md"]
    assert await _scalar(pool, "SELECT metadata->>'score' FROM documents WHERE path = 'inf.md'") == "inf"


# --------------------------------------------------------------------------- 3. paths that wipe a source


async def test_a_path_that_is_no_source_is_refused_and_deletes_nothing(pool, embedder, runbooks: Path) -> None:
    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    before = await _scalar(pool, "SELECT count(*) FROM documents")
    picture = runbooks / "picture.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n")
    for path in (Path("/dev/null"), picture):
        with pytest.raises(ingest_api.NotASource, match="neither a directory nor|not a supported"):
            await ingest(pool, embedder, [path], IngestOptions(source="ex"))
    assert await _scalar(pool, "SELECT count(*) FROM documents") == before > 0


async def test_an_empty_tree_does_not_wipe_a_source_unless_allowed(pool, embedder, runbooks: Path, tmp_path: Path) -> None:
    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    before = await _scalar(pool, "SELECT count(*) FROM documents")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(ingest_api.EmptySource, match=f"{before} documents") as caught:
        await ingest(pool, embedder, [empty], IngestOptions(source="ex"))
    assert caught.value.documents == before
    assert await _scalar(pool, "SELECT count(*) FROM documents") == before
    summary = await ingest(pool, embedder, [empty], IngestOptions(source="ex", allow_empty=True))
    assert len(summary.deleted) == before
    assert await _scalar(pool, "SELECT count(*) FROM documents") == 0


async def test_symlink_loops_are_skipped_with_a_reason(pool, embedder, runbooks: Path, tmp_path: Path) -> None:
    os.symlink("b", runbooks / "a.md")
    os.symlink("a.md", runbooks / "b")
    os.symlink("self", runbooks / "self")
    os.symlink(".", runbooks / "here")
    summary = await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    skipped = dict(summary.skipped)
    assert "loop" in skipped["a.md"] and "loop" in skipped["self"]
    assert "symbolic link" in skipped["here"]
    assert len(summary.added) == len(list(EXAMPLES.glob("*.md"))) and not summary.failed
    with pytest.raises(ingest_api.NotASource, match="symbolic link loop"):
        await ingest(pool, embedder, [runbooks / "a.md"], IngestOptions(source="ex"))


async def test_a_sync_of_a_tree_that_lost_every_runbook_deletes_nothing(pool, embedder, runbooks: Path) -> None:
    from retrieval.sync import SourceSpec, sync_source

    spec = SourceSpec("platform", runbooks, pull=False)
    assert (await sync_source(pool, embedder, spec, IngestOptions()))["status"] == "ok"
    before = await _scalar(pool, "SELECT count(*) FROM documents")
    for path in runbooks.glob("*.md"):
        path.unlink()
    result = await sync_source(pool, embedder, spec, IngestOptions())
    assert result["status"] == "failed" and "no documents found" in result["error"]
    assert await _scalar(pool, "SELECT count(*) FROM documents") == before
    assert await _scalar(pool, "SELECT details->>'status' FROM ingest_runs ORDER BY id DESC LIMIT 1") == "failed"


# --------------------------------------------------------------------------- 4. killed runs


async def _run_state(pool, run_id: int) -> tuple[bool, str | None]:  # type: ignore[no-untyped-def]
    async with pool.connection() as conn:
        row = await (await conn.execute(
            "SELECT finished_at IS NOT NULL, details->>'status' FROM ingest_runs WHERE id = %s", (run_id,))).fetchone()
    return row[0], row[1]


async def test_a_killed_ingest_run_is_marked_abandoned(pool, embedder, runbooks: Path, database_url: str) -> None:
    from retrieval import store

    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    source_id = await _scalar(pool, "SELECT id FROM sources WHERE name = 'ex'")
    async with pool.connection() as conn:  # what a killed ingest of an older version left behind
        legacy = (await (await conn.execute(
            "INSERT INTO ingest_runs (source_id, started_at) VALUES (%s, now() - interval '2 days') RETURNING id",
            (source_id,))).fetchone())[0]
    alive = await psycopg.AsyncConnection.connect(database_url, autocommit=True)  # another ingest, running
    killed = await psycopg.AsyncConnection.connect(database_url, autocommit=True)  # one whose process died
    try:
        running = await store.start_run(alive, source_id)
        dead = await store.start_run(killed, source_id)
        await killed.close()
        await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
        assert await _run_state(pool, legacy) == (True, "abandoned")
        assert await _run_state(pool, dead) == (True, "abandoned")
        assert await _run_state(pool, running) == (False, None), "a live run is left alone"
    finally:
        await alive.close()
    assert await _scalar(pool, "SELECT count(*) FROM ingest_runs WHERE finished_at IS NULL") == 1
    await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    assert await _scalar(pool, "SELECT count(*) FROM ingest_runs WHERE finished_at IS NULL") == 0


async def test_an_ingest_that_raises_records_its_run_as_failed(pool, embedder, runbooks: Path, monkeypatch) -> None:
    from retrieval import lexical

    async def broken(conn, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("simulated crash at the end of the ingest")

    monkeypatch.setattr(lexical, "refresh_impacts", broken)
    with pytest.raises(RuntimeError, match="simulated crash"):
        await ingest(pool, embedder, [runbooks], IngestOptions(source="ex"))
    async with pool.connection() as conn:
        row = await (await conn.execute(
            "SELECT finished_at IS NOT NULL, details->>'status', details->>'error' FROM ingest_runs")).fetchone()
    assert row[0] and row[1] == "failed" and "simulated crash" in row[2]


# --------------------------------------------------------------------------- 5. queries with no terms


def _hit(cid: int, dense: float | None, lexical: float | None = None) -> ScoredChunk:
    return ScoredChunk(
        chunk_id=cid, document_id=cid, section_id=cid, position=0, document_path=f"d{cid}.md",
        document_title=f"D {cid}", source="ex", heading_path=(), text="t", text_hash=f"h{cid}", token_count=1,
        lexical_rank=1 if lexical is not None else None, lexical_score=lexical,
        dense_rank=cid if dense is not None else None, dense_score=dense,
    )


@pytest.mark.parametrize("fusion", ["convex", "rrf"])
def test_nan_leg_scores_never_reach_the_ranking(fusion: str) -> None:
    hits = [_hit(1, math.nan), _hit(2, math.nan), _hit(3, 0.4, 2.0)]
    config = SearchConfig(fusion=fusion)  # type: ignore[arg-type]
    ranking.fuse(hits, config, "neutral")
    ranking.apply_boosts(hits, "", config)
    assert all(math.isfinite(h.score) for h in hits)
    assert all(h.dense_score is None or math.isfinite(h.dense_score) for h in hits)
    assert math.isfinite(assess(hits, "", 0.0)[0])


@pytest.mark.parametrize("query", ["", "   ", "?!"])
async def test_a_query_with_no_terms_scores_no_nan(examples_pool, embedder, query: str) -> None:
    result = await hybrid_search(examples_pool, embedder, query, k=5)
    assert math.isfinite(result.confidence) and not result.confident
    assert all(math.isfinite(h.score) for h in result.chunks)
    assert all(h.dense_score is None or math.isfinite(h.dense_score) for h in result.chunks)


def test_the_embedder_takes_text_that_is_not_utf8(embedder) -> None:  # type: ignore[no-untyped-def]
    """Bytes that were not UTF-8 reach Python as lone surrogates (stdin, argv); the tokenizer raised."""
    vectors = embedder.embed(["\udcff\udcfe disk full", "disk full"])
    assert vectors.shape == (2, embedder.dim) and all(math.isfinite(x) for x in vectors[0])
    assert (vectors[0] == embedder.embed(["\ufffd\ufffd disk full"])[0]).all()
